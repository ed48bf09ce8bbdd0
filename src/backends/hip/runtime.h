// libhurray-hip.so, the HIP device plugin (device tag 0x02, ROCM), plugin
// ABI hurray_backend_v1: the one GPU stream driver (src/backends/gpu-stream)
// compiled with this runtime.h. It holds the HIP side: the device (an
// ordinal) and making it current (hipSetDevice, the caller's device
// restored after); the calls whose shape differs from CUDA's live here and
// in runtime.cpp, what differs only in spelling in gpu-stream/names.h. The
// plugin links no libamdhip64: probe() dlopens it ($HURRAY_HIP_LIBRARY).
// HIP 6 renumbered hipMemoryType: classify reads it by the runtime's major
// version. The user reference is docs/backends/hip.md.
#pragma once

#include <hip/hip_runtime_api.h>
#include <hurray_backend.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "api.h"
#include "kit/ipc.h"

#define HURRAY_GPU_RUNTIME_HIP 1
#include "gpu-stream/names.h"

namespace hurray::gpu_stream::rt {

// HIP_VERSION style: major * 10000000 + minor * 100000 + patch.
inline int version_major(int v) noexcept { return v / 10000000; }
inline int version_minor(int v) noexcept { return v / 100000 % 100; }

// A device: its HIP ordinal.
struct DeviceRef {
  int ordinal = 0;
};

inline bool is_device(const DeviceRef &d, int runtime_device) noexcept {
  return d.ordinal == runtime_device;
}
inline void *native_device(const DeviceRef &d) noexcept {
  return reinterpret_cast<void *>(static_cast<uintptr_t>(d.ordinal));
}
inline void *native_context(const DeviceRef &) noexcept {
  return nullptr;  // HIP's contexts are deprecated; the plugin uses none
}

// Makes a device current on this thread for the life of the object, then
// restores the thread's previous current device.
class Current {
 public:
  static constexpr const char *kFunction = "hipSetDevice";
  static constexpr const char *kWhat = "device";

  Current(const Api &hip, const DeviceRef &d) noexcept : hip_(hip) {
    had_previous_ = hip.hipGetDevice(&previous_) == hipSuccess;
    result_ = hip.hipSetDevice(d.ordinal);
    if (had_previous_ && previous_ == d.ordinal) had_previous_ = false;  // nothing to restore
  }
  ~Current() {
    if (had_previous_) (void)hip_.hipSetDevice(previous_);
  }
  Current(const Current &) = delete;
  Current &operator=(const Current &) = delete;
  Result result() const noexcept { return result_; }

 private:
  const Api &hip_;
  int previous_ = 0;
  bool had_previous_ = false;
  Result result_ = hipSuccess;
};

// The device's UUID (hipDeviceGetUuid) into out[16]; false when the runtime
// cannot say.
inline bool device_uuid(const Api &hip, const DeviceRef &d, uint8_t *out) noexcept {
  hipUUID u{};
  if (hip.hipDeviceGetUuid == nullptr || hip.hipDeviceGetUuid(&u, d.ordinal) != hipSuccess)
    return false;
  std::memcpy(out, u.bytes, sizeof u.bytes);
  return true;
}

inline void *vp(uintptr_t p) noexcept { return reinterpret_cast<void *>(p); }

// Copies and synchronisation on the current device.
inline const char *copy_function(bool) noexcept { return "hipMemcpyAsync"; }
inline Result copy_async(const Api &hip, bool to_host, void *host, uintptr_t dev, size_t n,
                         Stream s) noexcept {
  return to_host ? hip.hipMemcpyAsync(host, vp(dev), n, hipMemcpyDeviceToHost, s)
                 : hip.hipMemcpyAsync(vp(dev), host, n, hipMemcpyHostToDevice, s);
}

// A non-blocking stream on the current device.
inline Result stream_create(const Api &hip, Stream *s) noexcept {
  return hip.hipStreamCreateWithFlags(s, hipStreamNonBlocking);
}

// Host functions (release_after): Fn(user) on the runtime's own thread once
// the work queued on s so far has completed; Fn must not call the runtime.
// hipLaunchHostFunc where the runtime exports it, else a stream callback
// (hipStreamAddCallback, which runs on an error in the stream too: the work
// no longer runs either way).
inline bool has_host_func(const Api &hip) noexcept {
  return hip.hipLaunchHostFunc != nullptr || hip.hipStreamAddCallback != nullptr;
}
inline const char *host_func_name(const Api &hip) noexcept {
  return hip.hipLaunchHostFunc != nullptr ? "hipLaunchHostFunc" : "hipStreamAddCallback";
}
template <void (*Fn)(void *)>
Result launch_host_func(const Api &hip, Stream s, void *user) noexcept {
  if (hip.hipLaunchHostFunc != nullptr) return hip.hipLaunchHostFunc(s, Fn, user);
  return hip.hipStreamAddCallback(s, [](hipStream_t, hipError_t, void *u) { Fn(u); }, user, 0);
}

// Events.
inline Result event_create(const Api &hip, bool ipc, Event *ev) noexcept {
  return hip.hipEventCreateWithFlags(ev, hipEventDisableTiming | (ipc ? hipEventInterprocess : 0u));
}
inline const char *record_hint(Result) noexcept { return ""; }

// IPC.
inline Result ipc_get_mem(const Api &hip, IpcMemHandle *h, uintptr_t base) noexcept {
  return hip.hipIpcGetMemHandle(h, vp(base));
}
inline Result ipc_open_mem(const Api &hip, uintptr_t *base, IpcMemHandle h) noexcept {
  void *p = nullptr;
  const Result r = hip.hipIpcOpenMemHandle(&p, h, hipIpcMemLazyEnablePeerAccess);
  *base = reinterpret_cast<uintptr_t>(p);
  return r;
}
inline void ipc_close_mem(const Api &hip, uintptr_t base) noexcept {
  (void)hip.hipIpcCloseMemHandle(vp(base));
}
inline const char *open_mem_hint(Result) noexcept { return ""; }
// The block that holds p; false when the runtime cannot say (it may lack
// hipMemGetAddressRange).
inline bool mem_range(const Api &hip, uintptr_t p, uintptr_t *base, size_t *size) noexcept {
  if (hip.hipMemGetAddressRange == nullptr) return false;
  hipDeviceptr_t b = nullptr;
  if (hip.hipMemGetAddressRange(&b, size, vp(p)) != hipSuccess) return false;
  *base = reinterpret_cast<uintptr_t>(b);
  return true;
}
inline const char *export_event_hint(Result) noexcept { return ""; }

// Virtual memory management (hipMemCreate) with POSIX file descriptors
// (gpu-stream/runtime_vmm.cpp and src/backends/hip/vmm.cpp, declared in
// gpu-stream/runtime_vmm.h;
// gpu-stream/vmm.cpp uses them), as CUDA's. HIP 5.2 has no device
// attribute for exportable VMM memory: vmm_probe asks the runtime for the
// granularity of such memory instead.
// Handles are hipMemGenericAllocationHandle_t pointers, carried as integers.
constexpr bool kHasVmm = true;
constexpr uint32_t kIpcVmmKind = hurray::kit::fourcc('H', 'I', 'V', '1');
constexpr const char *kIpcMeaningVmm = "a HIP VMM memory descriptor";

}  // namespace hurray::gpu_stream::rt
