// See ipc_parse.h: the checks of a peer's memory handle, before any vendor
// call (vmm.cpp and ipc.cpp call them; tests/fuzz/fuzz_gpu_ipc_parse.cpp
// fuzzes them).
#include "ipc_parse.h"

#include <sys/stat.h>

#include <cstring>

#include "kit/entry.h"
#include "kit/errors.h"
#include "kit/ipc.h"

namespace hurray::gpu_stream {

using hurray::kit::fail;
using hurray::kit::refuse_rule;

namespace {

bool zeros_after(const hurray_backend_ipc_handle &h, size_t n) noexcept {
  for (size_t i = n; i < sizeof h.bytes; ++i)
    if (h.bytes[i] != 0) return false;
  return true;
}

}  // namespace

hurray_status name_devmem_rule(hurray_error *err, hurray_status status) noexcept {
  if (err == nullptr || status == HURRAY_OK) return status;
  const size_t k = std::strlen(kRuleDevMem) + 2;  // "BP-IPC-DEVMEM: "
  const size_t n = strnlen(err->message, sizeof err->message - 1);
  const size_t keep = n + k < sizeof err->message ? n : sizeof err->message - 1 - k;
  std::memmove(err->message + k, err->message, keep);
  err->message[k + keep] = '\0';
  std::memcpy(err->message, kRuleDevMem, k - 2);
  std::memcpy(err->message + k - 2, ": ", 2);
  return status;
}

hurray_status parse_vmm(const hurray_backend_ipc_handle *h, uint32_t kind, const char *meaning,
                        uint64_t granularity, uint64_t *size, hurray_error *err) noexcept {
  VmmWire w{};
  if (const hurray_status st =
          hurray::kit::unpack_ipc(h, kind, "ipc_import_memory", meaning, &w, sizeof w, err))
    return name_devmem_rule(err, st);
  if (!zeros_after(*h, sizeof w))
    return refuse_rule(err, HURRAY_E_INVALID_ARGUMENT, kRuleDevMem,
                       "ipc_import_memory: %s carries its allocation's size in its first 8 "
                       "bytes and zeros after them; these are not zeros",
                       meaning);
  struct stat st{};
  if (h->fd < 0 || fstat(h->fd, &st) != 0 || S_ISDIR(st.st_mode) || S_ISFIFO(st.st_mode) ||
      S_ISSOCK(st.st_mode))
    return refuse_rule(err, HURRAY_E_INVALID_ARGUMENT, kRuleDevMem,
                       "ipc_import_memory: %s comes with a file descriptor (SCM_RIGHTS); %s",
                       meaning,
                       h->fd < 0 ? "this one came without" : "this one is not a memory descriptor");
  const uint64_t n = w.size;
  if (granularity == 0 || n == 0 || n % granularity != 0 || h->byte_size == 0 ||
      h->offset > n || h->byte_size > n - h->offset)
    return refuse_rule(
        err, HURRAY_E_INVALID_ARGUMENT, kRuleDevMem,
        "ipc_import_memory: %llu bytes at offset %llu do not fit in the %llu-byte "
        "VMM allocation the descriptor exports (a multiple of %llu)",
        static_cast<unsigned long long>(h->byte_size), static_cast<unsigned long long>(h->offset),
        static_cast<unsigned long long>(n), static_cast<unsigned long long>(granularity));
  *size = n;
  return HURRAY_OK;
}

hurray_status parse_memory(const hurray_backend_ipc_handle *h, uint32_t kind, const char *meaning,
                           void *vendor, size_t n, hurray_error *err) noexcept {
  if (const hurray_status st =
          hurray::kit::unpack_ipc(h, kind, "ipc_import_memory", meaning, vendor, n, err))
    return name_devmem_rule(err, st);
  if (h->fd >= 0)
    return refuse_rule(err, HURRAY_E_INVALID_ARGUMENT, kRuleDevMem,
                       "ipc_import_memory: %s travels without a file descriptor; this one came "
                       "with one",
                       meaning);
  if (h->byte_size == 0)
    return refuse_rule(err, HURRAY_E_INVALID_ARGUMENT, kRuleDevMem,
                       "ipc_import_memory: the handle is of 0 bytes");
  return HURRAY_OK;
}

hurray_status check_in_block(const hurray_backend_ipc_handle &h, uint64_t at, uint64_t block_size,
                             hurray_error *err) noexcept {
  if (at > block_size || h.offset > block_size - at || h.byte_size > block_size - at - h.offset)
    return refuse_rule(err, HURRAY_E_INVALID_ARGUMENT, kRuleDevMem,
                       "ipc_import_memory: %llu bytes at offset %llu do not fit in the %llu-byte "
                       "block the handle maps",
                       static_cast<unsigned long long>(h.byte_size),
                       static_cast<unsigned long long>(h.offset),
                       static_cast<unsigned long long>(block_size));
  return HURRAY_OK;
}

}  // namespace hurray::gpu_stream
