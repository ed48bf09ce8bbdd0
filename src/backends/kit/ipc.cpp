// See ipc.h.
#include "ipc.h"

#include <fcntl.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "entry.h"
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

KindName kind_name(uint32_t kind) noexcept {
  KindName n{};
  char c[4];
  bool printable = true;
  for (int i = 0; i < 4; ++i) {
    c[i] = static_cast<char>((kind >> (8 * i)) & 0xffu);
    printable = printable && c[i] >= 0x20 && c[i] <= 0x7e;
  }
  if (printable)
    std::snprintf(n.text, sizeof n.text, "'%c%c%c%c'", c[0], c[1], c[2], c[3]);
  else
    std::snprintf(n.text, sizeof n.text, "0x%08x", static_cast<unsigned>(kind));
  return n;
}

hurray_status check_kind(const hurray_backend_ipc_handle *h, uint32_t kind, const char *what,
                         const char *meaning, hurray_error *err) noexcept {
  if (h == nullptr)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT, "%s: the IPC handle is NULL", what);
  if (h->kind == kind) return HURRAY_OK;
  return refuse(err, HURRAY_E_INVALID_ARGUMENT, "%s: not %s: its kind is %s, this plugin's is %s",
                what, meaning, kind_name(h->kind).text, kind_name(kind).text);
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

hurray_status unpack_ipc(const hurray_backend_ipc_handle *h, uint32_t kind, const char *what,
                         const char *meaning, void *vendor, size_t n, hurray_error *err) noexcept {
  if (const hurray_status st = check_kind(h, kind, what, meaning, err)) return st;
  const char *why = nullptr;
  if (!unpack_ipc(h, kind, vendor, n, &why))
    return refuse(err, HURRAY_E_INVALID_ARGUMENT, "%s: %s", what, why);
  return HURRAY_OK;
}

hurray_status dup_fd(int fd, int *out, const char *what, hurray_error *err) noexcept {
  *out = -1;
  if (fd < 0) return HURRAY_OK;
  *out = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (*out < 0)
    return refuse(err, HURRAY_E_IO, "%s: dup of fd %d failed: %s", what, fd, std::strerror(errno));
  return HURRAY_OK;
}

}  // namespace hurray::kit
