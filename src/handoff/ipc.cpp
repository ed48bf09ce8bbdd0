// What the IPC layer (src/ipc/send.cpp, issue 6) reads of a buffer: the
// backend and allocation behind memory made by hurray_buffer_alloc, so that
// it can be exported to another process. src/ipc declares it itself (it does
// not include this folder's internal.h).
#include "internal.h"

namespace hurray::detail {
// The backend and allocation behind a buffer made by hurray_buffer_alloc,
// so that its memory can be exported to another process; false for memory
// the caller wrapped.
bool buffer_allocation(const hurray_buffer *b, Backend *be,
                       hurray_backend_allocation *a) noexcept {
  if (b) b = handoff::buffer_root(b);  // a view: its parent's allocation
  if (!b || !b->backend_owned) return false;
  *be = b->backend;
  *a = b->alloc;
  return true;
}
}  // namespace hurray::detail
