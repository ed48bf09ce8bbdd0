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
bool buffer_allocation(const hurray_buffer *b, Backend *be,
                       hurray_backend_allocation *a) noexcept;

}  // namespace hurray::detail
