// libhurray-cuda.so, the CUDA device plugin (device tag 0x01), plugin ABI
// hurray_backend_v1, driver API only: the one GPU stream driver
// (src/backends/gpu-stream) compiled with this runtime.h. It holds the CUDA
// side: the device (CUdevice and retained primary context) and making its
// context current (pushed only when it is not current already); the calls
// whose shape differs from HIP's live here and in runtime.cpp, what differs
// only in spelling in gpu-stream/names.h. The plugin links no libcuda:
// probe() dlopens libcuda.so.1 ($HURRAY_CUDA_LIBRARY). The user reference
// (native handle slots, classes, events, IPC kinds, threads) is
// docs/backends/cuda.md.
#pragma once

#include <cuda.h>  // types and prototypes only: built with the toolkit's headers
#include <hurray_backend.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "api.h"
#include "kit/ipc.h"

#define HURRAY_GPU_RUNTIME_CUDA 1
#include "gpu-stream/names.h"

namespace hurray::gpu_stream::rt {

// The driver's version, as cuDriverGetVersion numbers it (1000 * major + 10 * minor).
inline int version_major(int v) noexcept { return v / 1000; }
inline int version_minor(int v) noexcept { return v % 1000 / 10; }

// A device: the CUdevice and its primary context (retained by the plugin).
struct DeviceRef {
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
};

inline bool is_device(const DeviceRef &d, int runtime_device) noexcept {
  return d.dev == static_cast<CUdevice>(runtime_device);
}
inline void *native_device(const DeviceRef &d) noexcept {
  return reinterpret_cast<void *>(static_cast<uintptr_t>(d.dev));
}
inline void *native_context(const DeviceRef &d) noexcept { return d.ctx; }

// The device's UUID (cuDeviceGetUuid) into out[16]; false when the driver
// cannot say (a driver before CUDA 11.4 lacks the symbol).
inline bool device_uuid(const Api &cu, const DeviceRef &d, uint8_t *out) noexcept {
  CUuuid u{};
  if (cu.cuDeviceGetUuid == nullptr || cu.cuDeviceGetUuid(&u, d.dev) != CUDA_SUCCESS) return false;
  std::memcpy(out, u.bytes, sizeof u.bytes);
  return true;
}

// Makes a primary context current on this thread for the life of the object.
// Where it is current already (a CUDA program's thread usually has it: the
// runtime API makes the primary context current), nothing is pushed or
// popped: on an H200 the three pushes and pops of an event record + wait
// cost about 0.15 us of its 6 us (tests/gpu/cuda-bench.sh). Either way the
// caller's context stack is as it was when the object goes.
class Current {
 public:
  static constexpr const char *kFunction = "cuCtxPushCurrent";
  static constexpr const char *kWhat = "the primary context of device";

  Current(const Api &cu, const DeviceRef &d) noexcept : cu_(cu) {
    CUcontext now = nullptr;
    if (cu.cuCtxGetCurrent != nullptr && cu.cuCtxGetCurrent(&now) == CUDA_SUCCESS && now == d.ctx)
      return;
    result_ = cu.cuCtxPushCurrent(d.ctx);
    pushed_ = result_ == CUDA_SUCCESS;
  }
  ~Current() {
    if (pushed_) {
      CUcontext popped = nullptr;
      cu_.cuCtxPopCurrent(&popped);
    }
  }
  Current(const Current &) = delete;
  Current &operator=(const Current &) = delete;
  Result result() const noexcept { return result_; }

 private:
  const Api &cu_;
  Result result_ = CUDA_SUCCESS;
  bool pushed_ = false;
};

inline CUdeviceptr dptr(uintptr_t p) noexcept { return static_cast<CUdeviceptr>(p); }

// Copies and synchronisation on the current context. Device copies use the
// async calls on the plugin's stream: the legacy synchronous cuMemcpyHtoD
// would run on the NULL stream, which does not wait for a non-blocking one.
inline const char *copy_function(bool to_host) noexcept {
  return to_host ? "cuMemcpyDtoHAsync" : "cuMemcpyHtoDAsync";
}
inline Result copy_async(const Api &cu, bool to_host, void *host, uintptr_t dev, size_t n,
                         Stream s) noexcept {
  return to_host ? cu.cuMemcpyDtoHAsync(host, dptr(dev), n, s)
                 : cu.cuMemcpyHtoDAsync(dptr(dev), host, n, s);
}

// A non-blocking stream on the current context.
inline Result stream_create(const Api &cu, Stream *s) noexcept {
  return cu.cuStreamCreate(s, CU_STREAM_NON_BLOCKING);
}

// Host functions (release_after): Fn(user) on the runtime's own thread once
// the work queued on s so far has completed; Fn must not call the driver.
// Not run at all after an error in the context (cuLaunchHostFunc's rule).
inline bool has_host_func(const Api &cu) noexcept { return cu.cuLaunchHostFunc != nullptr; }
inline const char *host_func_name(const Api &) noexcept { return "cuLaunchHostFunc"; }
template <void (*Fn)(void *)>
Result launch_host_func(const Api &cu, Stream s, void *user) noexcept {
  return cu.cuLaunchHostFunc(s, Fn, user);
}

// Events.
inline Result event_create(const Api &cu, bool ipc, Event *ev) noexcept {
  const unsigned flags = static_cast<unsigned>(CU_EVENT_DISABLE_TIMING) |
                         (ipc ? static_cast<unsigned>(CU_EVENT_INTERPROCESS) : 0u);
  return cu.cuEventCreate(ev, flags);
}
inline const char *record_hint(Result r) noexcept {
  return r == CUDA_ERROR_INVALID_HANDLE ? "; the stream must belong to the device's primary context"
                                        : "";
}

// IPC.
inline Result ipc_get_mem(const Api &cu, IpcMemHandle *h, uintptr_t base) noexcept {
  return cu.cuIpcGetMemHandle(h, dptr(base));
}
inline Result ipc_open_mem(const Api &cu, uintptr_t *base, IpcMemHandle h) noexcept {
  CUdeviceptr p = 0;
  const Result r = cu.cuIpcOpenMemHandle(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  *base = static_cast<uintptr_t>(p);
  return r;
}
inline void ipc_close_mem(const Api &cu, uintptr_t base) noexcept {
  cu.cuIpcCloseMemHandle(dptr(base));
}
inline const char *open_mem_hint(Result r) noexcept {
  return r == CUDA_ERROR_INVALID_CONTEXT ? "; a process cannot open its own handle" : "";
}
// The block that holds p; false when the driver cannot say.
inline bool mem_range(const Api &cu, uintptr_t p, uintptr_t *base, size_t *size) noexcept {
  CUdeviceptr b = 0;
  if (cu.cuMemGetAddressRange(&b, size, dptr(p)) != CUDA_SUCCESS) return false;
  *base = static_cast<uintptr_t>(b);
  return true;
}
// Virtual memory management (cuMemCreate) with POSIX file descriptors
// (gpu-stream/runtime_vmm.cpp and src/backends/cuda/vmm.cpp, declared in
// gpu-stream/runtime_vmm.h;
// gpu-stream/vmm.cpp uses them). Handles are
// CUmemGenericAllocationHandle values.
constexpr bool kHasVmm = true;
constexpr uint32_t kIpcVmmKind = hurray::kit::fourcc('C', 'U', 'V', '1');
constexpr const char *kIpcMeaningVmm = "a CUDA VMM memory descriptor";

inline const char *export_event_hint(Result r) noexcept {
  return r == CUDA_ERROR_INVALID_HANDLE
             ? "; only events from event_record (CU_EVENT_INTERPROCESS) can be exported"
             : "";
}

}  // namespace hurray::gpu_stream::rt
