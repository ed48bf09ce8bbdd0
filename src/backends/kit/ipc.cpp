// See ipc.h.
#include "ipc.h"

#include <fcntl.h>

#include <cerrno>
#include <cstring>

#include "errors.h"

namespace hurray::kit {

void pack_ipc(uint32_t kind, const void *vendor, size_t n, uint64_t byte_size, uint64_t offset,
              hurray_backend_ipc_handle *out) noexcept {
  std::memset(out, 0, sizeof *out);
  out->kind = kind;
  out->fd = -1;
  out->byte_size = byte_size;
  out->offset = offset;
  std::memcpy(out->bytes, vendor, n < sizeof out->bytes ? n : sizeof out->bytes);
}

bool unpack_ipc(const hurray_backend_ipc_handle *h, uint32_t kind, void *vendor, size_t n,
                const char **why) noexcept {
  if (h == nullptr) {
    *why = "the IPC handle is NULL";
    return false;
  }
  if (n > sizeof h->bytes) {
    *why = "the vendor handle is larger than the 64 bytes an IPC handle carries";
    return false;
  }
  if (h->kind != kind) {
    *why = "the IPC handle is of another kind (another backend, or memory for an event)";
    return false;
  }
  std::memcpy(vendor, h->bytes, n);
  return true;
}

hurray_status dup_fd(int fd, int *out, const char *plugin, const char *what,
                     hurray_error *err) noexcept {
  *out = -1;
  if (fd < 0) return HURRAY_OK;
  *out = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (*out < 0)
    return fail(err, HURRAY_E_IO, "%s: %s: dup of fd %d failed: %s", plugin, what, fd,
                std::strerror(errno));
  return HURRAY_OK;
}

}  // namespace hurray::kit
