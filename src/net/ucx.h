// What src/net offers itself (and the tests' raw peer): a UCX context and
// worker with active messages and wake-up, client endpoints, waiting on
// requests, and hurray_error helpers.
#pragma once

#include <hurray_net.h>
#include <ucp/api/ucp.h>

#include <poll.h>

#include <chrono>
#include <cstdarg>
#include <cstdint>

namespace hurray::net {

// Fills *err (if not NULL): status, rule, and a message that starts with the
// rule ID when there is one. Returns status.
hurray_status fail(hurray_error *err, hurray_status status, hurray_rule rule,
                   const char *fmt, ...) noexcept __attribute__((format(printf, 4, 5)));

// HURRAY_LOG=debug: one line on stderr per event of the network layer.
void log_debug(const char *fmt, ...) noexcept __attribute__((format(printf, 1, 2)));

// HURRAY_NET_TRACE=PREFIX: a timeline of every PUT, to see where its time
// goes (bench/net_trace.py reads it; docs/performance.md shows one). Each
// event is CLOCK_MONOTONIC nanoseconds, a letter and the PUT's request id:
//   client: P posted (the header is on its way), S sent (UCX completed the
//           send: the server's transport has the bytes), A answer arrived;
//   server: h header arrived, r receive about to be posted (destination
//           allocated), g receive posted (UCX sent its go-ahead), l landed,
//           a answer sent.
// Off unless the variable is set when the process first asks; then up to
// 2^20 events are kept in memory and hurray_net_*_destroy appends the new
// ones to PREFIX.<pid>, a "nanoseconds letter id" line each. Meant for one
// server or client per process at a time (a diagnostic, not a log).
namespace trace {
bool on() noexcept;
void mark(char event, uint64_t id) noexcept;
void flush() noexcept;
// UCX completion callbacks that mark 'S' (a send) and 'l' (an active
// message's data received) for the id passed as user data, when UCX reports
// success (a failed transfer marks nothing).
void sent_cb(void *request, ucs_status_t status, void *id) noexcept;
void landed_cb(void *request, ucs_status_t status, size_t length, void *id) noexcept;
inline void *id_arg(uint64_t id) noexcept {
  return reinterpret_cast<void *>(static_cast<uintptr_t>(id));
}
}  // namespace trace

using Clock = std::chrono::steady_clock;
// A deadline `ms` from now; negative ms: none.
struct Deadline {
  bool infinite = true;
  Clock::time_point at{};
  static Deadline in(int32_t ms) noexcept {
    Deadline d;
    if (ms >= 0) {
      d.infinite = false;
      d.at = Clock::now() + std::chrono::milliseconds(ms);
    }
    return d;
  }
  bool passed() const noexcept { return !infinite && Clock::now() >= at; }
  // Milliseconds left, capped at `cap`.
  int left_ms(int cap) const noexcept;
};

struct Worker {
  ucp_context_h context = nullptr;
  ucp_worker_h worker = nullptr;
  int efd = -1;
  uint32_t spin_us = 200;  // wait() polls this long before sleeping
  // When set, wait() sleeps on these descriptors (extra[0] being efd)
  // instead of efd alone: the server's bootstrap sockets.
  struct pollfd *extra = nullptr;
  size_t n_extra = 0;

  // Reads the UCX_* environment; features: active messages and wake-up.
  // bind_address (a server's bootstrap address, the address a client reaches
  // its server from, or NULL): unless the user set
  // UCX_NET_DEVICES, UCX's network transports use only the interface that has
  // it (none for a wildcard address), so no UCX listener exists beyond it.
  hurray_status init(hurray_error *err, const char *bind_address = nullptr) noexcept;
  void fini() noexcept;
  // Progress once; if nothing moved and ms > 0, poll for up to spin_us
  // microseconds, then sleep on the worker's event fd for at most ms
  // milliseconds. Returns true if progress was made.
  bool wait(int ms) noexcept;
  // Progress until the request (a ucp_*_nbx result) completes or the
  // deadline passes; frees it. UCS_ERR_TIMED_OUT on timeout (the request is
  // then cancelled and waited for).
  ucs_status_t wait_request(ucs_status_ptr_t request, const Deadline &deadline) noexcept;
};

// Close an endpoint (flush when `graceful`, else force) and wait at most
// ms milliseconds for the close to finish.
void close_ep(Worker &w, ucp_ep_h ep, bool graceful, int ms) noexcept;

// Send an active message (header + contiguous data) on ep; returns the
// request as ucp_am_send_nbx does. `flags`: UCP_AM_SEND_FLAG_*.
ucs_status_ptr_t am_send(ucp_ep_h ep, unsigned id, const void *header, size_t header_length,
                         const void *data, size_t length, uint32_t flags,
                         ucp_send_nbx_callback_t cb = nullptr, void *user = nullptr) noexcept;

}  // namespace hurray::net
