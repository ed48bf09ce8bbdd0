// The types several files of src/net share: a device the other side offers
// (its HELLO), a message an active-message handler queued (messages.cpp)
// for processing after UCX progress, and the limits a server grants
// (resolved in net_limits.cpp, their byte budgets derived in budget.cpp). A
// header of their own, so that the client's files do not depend on the
// server's state (server_state.h), the shared helpers (internal.h) on
// neither, and budget.cpp and net_limits.cpp not on each other.
#pragma once

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

// The defaults; resolve_limits derives the three byte budgets left at 0 from
// what the process can allocate (budget.h), these at most.
struct Limits {
  uint64_t max_put_bytes = uint64_t{1} << 30;
  uint64_t conn_bytes = uint64_t{1} << 31;
  uint64_t total_bytes = uint64_t{1} << 32;
  uint32_t conn_puts = 256;
  uint32_t total_puts = 4096;
  uint32_t conn_gets = 16;
  uint32_t conn_unsent = 1024;
  uint32_t max_connections = 256;
  uint32_t max_per_peer = 64;
  int32_t stall_ms = 10000;   // without bytes arriving; negative: never
  int32_t idle_ms = 600000;   // negative: never
  int32_t handshake_ms = 10000;
};

}  // namespace hurray::net
