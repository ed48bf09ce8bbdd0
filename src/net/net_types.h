// The types several files of src/net share: a device the other side offers
// (its HELLO), a message an active-message handler queued (messages.cpp)
// for processing after UCX progress, and the limits a server grants
// (resolved in net_limits.cpp, their byte budgets derived in budget.cpp). A
// header of their own, so that the client's files do not depend on the
// server's state (server_state.h), the shared helpers (internal.h) on
// neither, and budget.cpp and net_limits.cpp not on each other.
#pragma once

#include <hurray_net.h>

#include "ucx.h"
#include "wire.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hurray::net {

struct Offer {
  uint8_t tag;
  int32_t count;
  uint32_t classes;
};

// What an active-message handler saw, queued for processing after progress.
struct Incoming {
  Op op;
  ucp_ep_h ep = nullptr;
  std::vector<unsigned char> header;
  void *data = nullptr;     // UCX's (rndv descriptor or kept eager data) or copy
  size_t length = 0;
  bool rndv = false;
  bool ucx_owned = false;   // release with ucp_am_data_release
  std::vector<unsigned char> copy;
};

// The limits a server grants: a hurray_net_limits without a 0 left in it,
// which hurray_net_server_limits hands out as it is.
using Limits = hurray_net_limits;

// The defaults; resolve_limits derives the three byte budgets left at 0 from
// what the process can allocate (budget.h), these at most.
inline constexpr Limits kDefaultLimits = {
    .size = sizeof(hurray_net_limits),
    .reserved0 = 0,
    .max_put_bytes = uint64_t{1} << 30,
    .conn_bytes_in_flight = uint64_t{1} << 31,
    .total_bytes_in_flight = uint64_t{1} << 32,
    .conn_puts_in_flight = 256,
    .total_puts_in_flight = 4096,
    .conn_gets_in_flight = 16,
    .conn_unsent_answers = 1024,
    .max_connections = 256,
    .max_connections_per_peer = 64,
    .stall_timeout_ms = 10000,  // without bytes arriving; negative: never
    .idle_timeout_ms = 600000,  // negative: never
    .handshake_timeout_ms = 10000,
    .reserved1 = 0,
};

}  // namespace hurray::net
