// What the other folders of libhurray use of the handoff layer (src/ipc
// reads the backend allocation behind a buffer to export it to another
// process). The declarations shared inside this folder are in internal.h,
// which includes this header.
#pragma once

#include <hurray.h>
#include <hurray_backend.h>

#include "../runtime/backends.h"

namespace hurray::detail {

// The backend and allocation behind a buffer made by hurray_buffer_alloc,
// so that its memory can be exported to another process; false for memory
// the caller wrapped (src/handoff/ipc.cpp).
// For a view (hurray_buffer_view), its parent's allocation.
bool buffer_allocation(const hurray_buffer *b, Backend *be,
                       hurray_backend_allocation *a) noexcept;

// The serial of the memory behind a buffer made by hurray_buffer_alloc (a
// view: its parent's): unique in this process, never reused; 0 for memory
// the caller wrapped (src/handoff/ipc.cpp).
uint64_t buffer_memory_serial(const hurray_buffer *b) noexcept;

// Export the memory of a buffer the caller wrapped (or a view of one): the
// backend of its device finds the allocation that holds it
// (ipc_export_pointer). *be is that backend. On success out->fd (if >= 0)
// is the caller's. src/handoff/ipc.cpp.
hurray_status export_wrapped(const hurray_buffer *b, Backend *be, hurray_backend_ipc_handle *out,
                             hurray_error *err) noexcept;

// src/handoff/view.cpp: where a view starts in its parent's memory (0 for a
// buffer), and the buffer that owns the memory (the parent of a view).
uint64_t buffer_view_offset(const hurray_buffer *b) noexcept;
const hurray_buffer *buffer_memory_owner(const hurray_buffer *b) noexcept;

}  // namespace hurray::detail
