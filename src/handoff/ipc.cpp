// What the IPC layer (src/ipc/send.cpp) reads of a buffer: the backend and
// allocation behind memory made by hurray_buffer_alloc, so that it can be
// exported to another process (declared in handoff.h).
#include "handoff.h"
#include "internal.h"
#include "../runtime/dispatch.h"

namespace hurray::detail {
bool buffer_allocation(const hurray_buffer *b, Backend *be,
                       hurray_backend_allocation *a) noexcept {
  if (b) b = handoff::buffer_root(b);  // a view: its parent's allocation
  if (!b || !b->backend_owned) return false;
  *be = b->backend;
  *a = b->alloc;
  return true;
}
uint64_t buffer_memory_serial(const hurray_buffer *b) noexcept {
  if (b) b = handoff::buffer_root(b);
  return b && b->backend_owned ? b->memory_serial : 0;
}
}  // namespace hurray::detail

namespace hurray::detail {
hurray_status export_wrapped(const hurray_buffer *b, Backend *be, hurray_backend_ipc_handle *out,
                             hurray_error *err) noexcept {
  b = handoff::buffer_root(b);  // a view: its parent's memory (the view offset travels beside)
  if (b->flags & HURRAY_HANDOFF_OPAQUE_DATA)
    return fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_NONE,
                "hurray_ipc_send: a wrapped %s buffer of an opaque handle cannot be shared; "
                "allocate it with hurray_buffer_alloc() and HURRAY_ALLOC_SHAREABLE",
                hurray_device_tag_name(b->handle.device_tag));
  if (const hurray_status st = backend_device(b->handle.device_tag, b->ordinal, be, err)) return st;
  return dispatch::ipc_export_pointer(*be, b->ordinal, b->handle.memory_class, b->data,
                                      b->handle.byte_size, out, err);
}
}  // namespace hurray::detail
