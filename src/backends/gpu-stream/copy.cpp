// The GPU stream driver: copies between host memory and allocations. Device
// memory is copied on the plugin's stream (so a copy follows the work queued
// there), then the stream is synchronised; host-visible memory is read or
// written with memcpy once the device's queued work is done.
#include "driver.h"

namespace hurray::gpu_stream {

using hurray::kit::kPlugin;

namespace {

// Checks common to both copy directions; *a is null for an empty range.
hurray_status copy_check(const State *s, const hurray_backend_allocation *alloc, uint64_t offset,
                         const void *host, uint64_t n, const char *what, const Allocation **a,
                         Device **d, hurray_error *err) noexcept {
  *a = nullptr;
  if (s == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "%s: %s: the plugin state is NULL (probe first)",
                kPlugin, what);
  if (const hurray_status st = hurray::kit::check_copy(alloc, offset, host, n, what, err)) return st;
  if (n == 0) return HURRAY_OK;
  const auto *rec = static_cast<const Allocation *>(alloc->plugin_data);
  if (const hurray_status st = find_device(s, rec->device, d, err)) return st;
  *a = rec;
  return HURRAY_OK;
}

// Copy n bytes between host memory and the allocation, to_host or not.
hurray_status copy(const State *s, const Allocation *a, Device *d, uint64_t offset, void *host,
                   uint64_t n, bool to_host, hurray_error *err) noexcept {
  const Api &api = s->api;
  HURRAY_GPU_CURRENT_(s, d, err)
  if (host_visible(a->memory_class) && !a->imported) {
    // Let the device's queued work finish, then touch the memory.
    const Result r = rt::sync_device(api);
    if (r != rt::kSuccess)
      return rt_fail(err, api, HURRAY_OK, rt::sync_device_name, r, "'%s'", d->name.c_str());
    char *mem = static_cast<char *>(vptr(a->data)) + offset;
    if (to_host)
      std::memcpy(host, mem, static_cast<size_t>(n));
    else
      std::memcpy(mem, host, static_cast<size_t>(n));
    return HURRAY_OK;
  }
  Result r = rt::copy_async(api, to_host, host, a->data + offset, static_cast<size_t>(n), d->stream);
  if (r != rt::kSuccess)
    return rt_fail(err, api, HURRAY_OK, rt::copy_function(to_host), r, "%llu bytes %s '%s'",
                   static_cast<unsigned long long>(n), to_host ? "from" : "to", d->name.c_str());
  r = rt::sync_stream(api, d->stream);
  if (r != rt::kSuccess)
    return rt_fail(err, api, HURRAY_OK, rt::sync_stream_name, r, "'%s'", d->name.c_str());
  return HURRAY_OK;
}

}  // namespace

hurray_status copy_to_host(void *state, const hurray_backend_allocation *src, uint64_t offset,
                           void *dst, uint64_t n, hurray_error *err) {
  const auto *s = static_cast<const State *>(state);
  const Allocation *a = nullptr;
  Device *d = nullptr;
  if (const hurray_status st = copy_check(s, src, offset, dst, n, "copy_to_host", &a, &d, err))
    return st;
  return a == nullptr ? HURRAY_OK : copy(s, a, d, offset, dst, n, true, err);
}

hurray_status copy_from_host(void *state, hurray_backend_allocation *dst, uint64_t offset,
                             const void *src, uint64_t n, hurray_error *err) {
  const auto *s = static_cast<const State *>(state);
  const Allocation *a = nullptr;
  Device *d = nullptr;
  if (const hurray_status st = copy_check(s, dst, offset, src, n, "copy_from_host", &a, &d, err))
    return st;
  return a == nullptr ? HURRAY_OK : copy(s, a, d, offset, const_cast<void *>(src), n, false, err);
}

}  // namespace hurray::gpu_stream
