// The HIP side of the GPU stream driver: counting devices (and the runtime's
// version), opening a device (one non-blocking stream), allocation calls and
// pointer classification across HIP versions.
#include <cstdio>
#include <cstring>

#include "gpu-stream/driver.h"

namespace hurray::gpu_stream::rt {

namespace {

constexpr int kPeerAccessAlreadyEnabled = 704;  // hipErrorPeerAccessAlreadyEnabled

int attribute(const Api &hip, int ordinal, hipDeviceAttribute_t attr, int fallback) noexcept {
  int v = 0;
  return hip.hipDeviceGetAttribute(&v, attr, ordinal) == hipSuccess ? v : fallback;
}

bool check_ipc_events(const Api &hip) noexcept {
  hipEvent_t ev = nullptr;
  if (hip.hipEventCreateWithFlags(&ev, hipEventDisableTiming | hipEventInterprocess) != hipSuccess)
    return false;
  hipIpcEventHandle_t h;
  const bool ok = hip.hipIpcGetEventHandle(&h, ev) == hipSuccess;
  (void)hip.hipEventDestroy(ev);
  return ok;
}

}  // namespace

hurray_status start(State *s, int *count, hurray_error *err) {
  const Api &hip = s->api;
  const hipError_t r = hip.hipGetDeviceCount(count);
  if (r != hipSuccess)
    return rt_fail(err, hip, HURRAY_E_DEVICE_UNAVAILABLE, "hipGetDeviceCount", r, "runtime %s",
                   s->lib_name.c_str());
  if (*count <= 0)
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                "[hipGetDeviceCount] no HIP device (the runtime %s sees none)",
                s->lib_name.c_str());
  (void)hip.hipRuntimeGetVersion(&s->version);
  return HURRAY_OK;
}

void close_device(const Api &hip, Device &d) noexcept {
  if (d.stream == nullptr) return;
  Current on(hip, d.ref);
  (void)hip.hipStreamSynchronize(d.stream);
  (void)hip.hipStreamDestroy(d.stream);
  d.stream = nullptr;
}

bool open_device(const Api &hip, int ordinal, Device *d, std::string *why) {
  d->ref.ordinal = ordinal;
  Current on(hip, d->ref);
  ErrorText text;
  if (on.result() != hipSuccess) {
    error_text(hip, on.result(), &text);
    note(why, "[hipSetDevice] %s: device %d", text.name, ordinal);
    return false;
  }
  char name[128] = "";
  if (hip.hipDeviceGetName(name, sizeof name - 1, ordinal) != hipSuccess || name[0] == '\0')
    std::snprintf(name, sizeof name, "HIP device %d", ordinal);
  d->name = name;
  d->map_host = attribute(hip, ordinal, hipDeviceAttributeCanMapHostMemory, 0) == 1;
  d->managed = attribute(hip, ordinal, hipDeviceAttributeManagedMemory, 0) == 1;
  size_t total = 0;
  if (hip.hipDeviceTotalMem(&total, ordinal) == hipSuccess) d->total_mem = total;
  const hipError_t r = stream_create(hip, &d->stream);
  if (r != hipSuccess) {
    d->stream = nullptr;
    error_text(hip, r, &text);
    note(why, "[hipStreamCreateWithFlags] %s: device %d '%s'", text.name, ordinal, name);
    return false;
  }
  d->ipc_events = check_ipc_events(hip);
  return true;
}

bool can_access_peer(const Api &hip, const Device &from, const Device &to) noexcept {
  int can = 0;
  return hip.hipDeviceCanAccessPeer(&can, from.ref.ordinal, to.ref.ordinal) == hipSuccess &&
         can == 1;
}

Result enable_peer_access(const Api &hip, const Device &d) noexcept {
  const hipError_t r = hip.hipDeviceEnablePeerAccess(d.ref.ordinal, 0);
  return static_cast<int>(r) == kPeerAccessAlreadyEnabled ? hipSuccess : r;
}

Result alloc_block(const Api &hip, uint8_t mc, uint64_t n, uintptr_t *base,
                   const char **function) noexcept {
  void *p = nullptr;
  hipError_t r;
  switch (mc) {
    case HURRAY_MEMORY_HOST_PINNED:
      *function = "hipHostMalloc";
      r = hip.hipHostMalloc(&p, static_cast<size_t>(n), hipHostMallocMapped | hipHostMallocPortable);
      break;
    case HURRAY_MEMORY_UNIFIED:
      *function = "hipMallocManaged";
      r = hip.hipMallocManaged(&p, static_cast<size_t>(n), hipMemAttachGlobal);
      break;
    default:
      *function = "hipMalloc";
      r = hip.hipMalloc(&p, static_cast<size_t>(n));
      break;
  }
  *base = reinterpret_cast<uintptr_t>(p);
  return r;
}

void free_block(const Api &hip, uint8_t mc, uintptr_t base) noexcept {
  if (mc == HURRAY_MEMORY_HOST_PINNED)
    (void)hip.hipHostFree(vp(base));
  else
    (void)hip.hipFree(vp(base));
}

Result host_device_pointer(const Api &hip, uintptr_t base, uintptr_t *view) noexcept {
  void *v = nullptr;
  const hipError_t r = hip.hipHostGetDevicePointer(&v, vp(base), 0);
  *view = reinterpret_cast<uintptr_t>(v);
  return r;
}

hurray_status pointer_class(const State *s, const Device &, const void *ptr, uint8_t *mc,
                            int *runtime_device, hurray_error *err) {
  const Api &hip = s->api;
  hipPointerAttribute_t attr;
  std::memset(&attr, 0, sizeof attr);
  const hipError_t r = hip.hipPointerGetAttributes(&attr, ptr);
  if (r == hipErrorInvalidValue)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT,
                  "%p is not memory HIP knows (hipPointerGetAttributes: hipErrorInvalidValue)",
                  ptr);
  if (r != hipSuccess) return rt_fail(err, hip, HURRAY_OK, "hipPointerGetAttributes", r, "%p", ptr);
  const int major = version_major(s->version);
  if (!hurray::hip::class_of_pointer(major, static_cast<int>(attr.memoryType), attr.isManaged, mc))
    return refuse(err, HURRAY_E_INVALID_ARGUMENT,
                  "%p is not memory HIP knows as a linear buffer (memory type %d, HIP %d)", ptr,
                  static_cast<int>(attr.memoryType), major);
  *runtime_device = attr.device;
  return HURRAY_OK;
}

}  // namespace hurray::gpu_stream::rt
