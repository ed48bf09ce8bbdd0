// What the IPC layer (src/ipc/send.cpp) reads of a buffer: the backend and
// allocation behind memory made by hurray_buffer_alloc, so that it can be
// exported to another process (declared in handoff.h).
#include "handoff.h"
#include "internal.h"

namespace hurray::detail {
bool buffer_allocation(const hurray_buffer *b, Backend *be,
                       hurray_backend_allocation *a) noexcept {
  if (b) b = handoff::buffer_root(b);  // a view: its parent's allocation
  if (!b || !b->backend_owned) return false;
  *be = b->backend;
  *a = b->alloc;
  return true;
}
}  // namespace hurray::detail
