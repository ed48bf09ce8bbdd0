// See gpu_common.h.
#include "gpu_common.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

namespace hurray::gpu {

// ---- errors -----------------------------------------------------------------

hurray_status vfail(hurray_error *err, hurray_status status, const char *fmt, va_list ap) noexcept {
  if (err != nullptr) {
    std::memset(err, 0, sizeof *err);
    err->status = status;
    err->rule = HURRAY_RULE_NONE;
    err->severity = HURRAY_SEVERITY_ERROR;
    err->buffer_index = -1;
    err->byte_offset = -1;
    std::vsnprintf(err->message, sizeof err->message, fmt, ap);
  }
  return status;
}

hurray_status fail(hurray_error *err, hurray_status status, const char *fmt, ...) noexcept {
  va_list ap;
  va_start(ap, fmt);
  vfail(err, status, fmt, ap);
  va_end(ap);
  return status;
}

hurray_status vendor_fail(hurray_error *err, hurray_status status, const char *function,
                          const char *name, const char *description, const char *details_fmt,
                          ...) noexcept {
  va_list ap;
  va_start(ap, details_fmt);
  vendor_vfail(err, status, function, name, description, details_fmt, ap);
  va_end(ap);
  return status;
}

hurray_status vendor_vfail(hurray_error *err, hurray_status status, const char *function,
                           const char *name, const char *description, const char *details_fmt,
                           va_list ap) noexcept {
  char details[192] = "";
  if (details_fmt != nullptr && details_fmt[0] != '\0')
    std::vsnprintf(details, sizeof details, details_fmt, ap);
  const bool has_description = description != nullptr && description[0] != '\0';
  return fail(err, status, "[%s] %s%s%s%s%s%s", function, name, has_description ? ": " : "",
              has_description ? description : "", details[0] ? " (" : "", details,
              details[0] ? ")" : "");
}

// ---- the vendor library -------------------------------------------------------

void *open_library(const char *env_var, const char *const *sonames, std::string *opened,
                   std::string *why) {
  why->clear();
  const char *env = env_var != nullptr ? std::getenv(env_var) : nullptr;
  const char *const one[] = {env, nullptr};
  const char *const *names = env != nullptr && env[0] != '\0' ? one : sonames;
  for (; *names != nullptr; ++names) {
    dlerror();
    if (void *lib = dlopen(*names, RTLD_NOW | RTLD_LOCAL)) {
      *opened = *names;
      why->clear();
      return lib;
    }
    const char *e = dlerror();
    if (!why->empty()) *why += "; ";
    *why += e != nullptr ? e : std::string(*names) + ": cannot be loaded";
  }
  return nullptr;
}

// ---- alignment ----------------------------------------------------------------

uint32_t alignment_of(uintptr_t p) noexcept {
  constexpr uintptr_t kMax = uintptr_t{1} << 31;
  if (p == 0) return static_cast<uint32_t>(kMax);
  const uintptr_t low = p & (~p + 1);
  return static_cast<uint32_t>(low < kMax ? low : kMax);
}

uintptr_t align_up(uintptr_t p, uint64_t align) noexcept {
  const uintptr_t mask = static_cast<uintptr_t>(align) - 1;
  if (p > UINTPTR_MAX - mask) return 0;
  return (p + mask) & ~mask;
}

bool padded_size(uint64_t size, uint64_t align, uint64_t base_align, uint64_t *out) noexcept {
  const uint64_t extra = base_align >= align ? 0 : align - base_align;
  if (size > UINT64_MAX - extra) return false;
  *out = size + extra;
  return true;
}

uintptr_t place(uintptr_t base, uint64_t block_size, uint64_t size, uint64_t align) noexcept {
  const uintptr_t d = align_up(base, align);
  if (d == 0 || d < base) return 0;
  const uint64_t skip = d - base;
  if (skip > block_size || size > block_size - skip) return 0;
  return d;
}

// ---- allocations ----------------------------------------------------------------

bool Registry::add(Allocation *a) noexcept {
  try {
    std::lock_guard<std::mutex> lock(mu_);
    by_data_[a->data] = a;
    return true;
  } catch (...) {
    return false;
  }
}

void Registry::remove(const Allocation *a) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_data_.find(a->data);
  if (it != by_data_.end() && it->second == a) by_data_.erase(it);
}

bool Registry::find(uintptr_t p, Allocation *out) const noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_data_.upper_bound(p);
  if (it == by_data_.begin()) return false;
  --it;
  const Allocation *a = it->second;
  // An empty range holds nothing; a 1-byte range holds its first byte.
  if (p - a->data >= a->byte_size) return false;
  *out = *a;
  return true;
}

Allocation *Registry::take_any() noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  if (by_data_.empty()) return nullptr;
  auto it = by_data_.begin();
  Allocation *a = it->second;
  by_data_.erase(it);
  return a;
}

// ---- IPC handles --------------------------------------------------------------------

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

}  // namespace hurray::gpu
