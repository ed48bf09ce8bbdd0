// The channel's side of memory files that cross it (docs/spec/ipc.md):
// BP-IPC-RO (a read-only handoff travels as a descriptor that cannot be
// mapped writable) and HURRAY_IPC_COPY_PER_SEND's fresh copy. Checking and
// mapping a memfd that arrived (BP-IPC-SEAL, its size) is the CPU
// backend's ipc_import_memory (src/backends/cpu/ipc.cpp).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "../core/internal.h"
#include "internal.h"

namespace hurray::ipc {

using hurray::detail::fail;

int reopen_read_only(int fd, hurray_error *err) {
  // A new open file description of the same memory file, read-only: the
  // kernel refuses PROT_WRITE with MAP_SHARED on it. The CPU backend makes
  // its memfds mode 0400, so the consumer cannot reopen it writable either.
  char path[40];
  std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  const int ro = open(path, O_RDONLY | O_CLOEXEC);
  if (ro < 0)
    fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_NONE,
         "BP-IPC-RO: a read-only descriptor of the memfd cannot be opened (%s: %s)", path,
         std::strerror(errno));
  return ro;
}

hurray_status fresh_copy(hurray_buffer *src, const hurray_buffer_handle &h, hurray_buffer **out,
                         hurray_error *err) {
  const void *from = hurray_buffer_data(src);
  if (!from)
    return fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_NONE,
                "hurray_ipc_send: HURRAY_IPC_COPY_PER_SEND needs a CPU buffer with an address");
  hurray_alloc_desc d = HURRAY_ALLOC_DESC_INIT;
  d.flags = HURRAY_ALLOC_SHAREABLE;
  d.byte_size = h.byte_size;
  d.alignment = h.alignment;
  if (const hurray_status st = hurray_buffer_alloc(nullptr, &d, out, err)) return st;
  std::memcpy(hurray_buffer_data(*out), from, static_cast<size_t>(h.byte_size));
  return HURRAY_OK;
}

}  // namespace hurray::ipc
