// The IPC layer's small helpers, used by every other file of src/ipc: the
// monotonic clock and what is left of a timeout, the I/O error (errno named),
// closing a received message's descriptors, and the layer's policy. Kept apart
// from channel.cpp so that the files the channel calls (send.cpp, read.cpp,
// slots.cpp) need not call back into it.
#include <hurray_ipc.h>

#include <time.h>
#include <unistd.h>

#include <cstring>

#include "../core/internal.h"
#include "internal.h"

using namespace hurray::detail;

namespace hurray::ipc {

int64_t now_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

int left_ms(int32_t timeout_ms, int64_t start) {
  if (timeout_ms < 0) return -1;
  const int64_t left = timeout_ms - (now_ms() - start);
  return left > 0 ? static_cast<int>(left) : 0;
}

hurray_status io_fail(hurray_error *err, const char *what, int e, const char *details) {
  const char *name = strerrorname_np(e);
  return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "[%s] %s: %s%s%s%s", what, name ? name : "errno",
              std::strerror(e), details ? " (" : "", details ? details : "", details ? ")" : "");
}

void close_fds(Pending &p) {
  for (uint8_t i = 0; i < p.nfds; ++i)
    if (p.fds[i] >= 0) close(p.fds[i]);
  p.nfds = 0;
}

const hurray_policy &ipc_policy() {
  static const hurray_policy p = [] {
    hurray_policy q;
    q.transport = HURRAY_TRANSPORT_IPC;
    return q;
  }();
  return p;
}

}  // namespace hurray::ipc
