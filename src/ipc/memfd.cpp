// The rules for memory files that cross a channel (docs/spec/ipc.md):
// BP-IPC-SEAL (the consumer maps only a memfd sealed against shrinking, so
// its producer cannot make it die of SIGBUS) and BP-IPC-RO (a read-only
// handoff travels as a descriptor that cannot be mapped writable).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "../core/internal.h"
#include "internal.h"

namespace hurray::ipc {

using hurray::detail::fail;

hurray_status check_sealed(int fd, hurray_error *err) {
  const int seals = fcntl(fd, F_GET_SEALS);
  if (seals < 0)
    return fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                "BP-IPC-SEAL: the memory descriptor is not a sealable memfd (F_GET_SEALS: %s)",
                std::strerror(errno));
  if (!(seals & F_SEAL_SHRINK))
    return fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                "BP-IPC-SEAL: the memfd is not sealed against shrinking (seals 0x%X): its "
                "producer could truncate it under this mapping",
                static_cast<unsigned>(seals));
  return HURRAY_OK;
}

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
  HURRAY_RETURN_NOT_OK(hurray_buffer_alloc(nullptr, &d, out, err));
  std::memcpy(hurray_buffer_data(*out), from, static_cast<size_t>(h.byte_size));
  return HURRAY_OK;
}

}  // namespace hurray::ipc
