// The GPU stream driver: copies between host memory and allocations. Device
// memory is copied on the plugin's stream (so a copy follows the work queued
// there), then the stream is synchronised; host-visible memory is read or
// written with memcpy once the device's queued work is done.
#include "driver.h"

namespace hurray::gpu_stream {

using hurray::kit::kPlugin;

namespace {

// Copy n bytes between host memory and the allocation, to_host or not.
hurray_status copy(const State *s, const Allocation *a, Device *d, uint64_t offset, void *host,
                   uint64_t n, bool to_host, hurray_error *err) noexcept {
  const Api &api = s->api;
  const rt::Current current(s->api, d->ref);
  if (const hurray_status st = check_current(current, s->api, *d, err)) return st;
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
  return kit::copy_entry<const State, Allocation>(state, src, offset, dst, n, true, err, copy);
}

hurray_status copy_from_host(void *state, hurray_backend_allocation *dst, uint64_t offset,
                             const void *src, uint64_t n, hurray_error *err) {
  return kit::copy_entry<const State, Allocation>(state, dst, offset, const_cast<void *>(src), n,
                                                  false, err, copy);
}

}  // namespace hurray::gpu_stream
