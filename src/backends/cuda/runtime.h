// The CUDA side of the GPU stream driver (src/backends/gpu-stream): its
// types, the names its messages use, and making a device's primary context
// current. What differs from HIP in shape lives in runtime.cpp.
#pragma once

#include <cuda.h>  // types and prototypes only: built with the toolkit's headers
#include <hurray_backend.h>

#include <cstddef>
#include <cstdint>

#include "internal.h"
#include "kit/ipc.h"

namespace hurray::gpu_stream::rt {

using Api = hurray::cuda::Api;
using Result = CUresult;
using Stream = CUstream;
using Event = CUevent;
using IpcMemHandle = CUipcMemHandle;
using IpcEventHandle = CUipcEventHandle;
using ErrorText = hurray::cuda::ErrorText;

constexpr Result kSuccess = CUDA_SUCCESS;
constexpr uint8_t kDeviceTag = HURRAY_DEVICE_CUDA;
constexpr const char *kVendor = "CUDA";
constexpr const char *kLibraryEnv = "HURRAY_CUDA_LIBRARY";
inline constexpr const char *kSonames[] = {"libcuda.so.1", nullptr};
constexpr const char *kNeeded = "a driver for CUDA 11.0 or later is needed";
constexpr uint32_t kBaseAlignment = 256;  // what every CUDA allocation has
constexpr uint32_t kIpcMemoryKind = hurray::kit::fourcc('C', 'U', 'M', '1');
constexpr uint32_t kIpcEventKind = hurray::kit::fourcc('C', 'U', 'E', '1');

// The words of the messages.
constexpr const char *kVersionOf = "CUDA driver";
constexpr const char *kStandardAlloc = "cuMemAlloc";
constexpr const char *kPinnedAlloc = "cuMemHostAlloc(PORTABLE|DEVICEMAP), data = host pointer";
constexpr const char *kManagedAlloc = "cuMemAllocManaged";
constexpr const char *kNoMapHost =
    "the device cannot map host memory (CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY is 0)";
constexpr const char *kNoManaged =
    "the device has no managed memory (CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY is 0)";
constexpr const char *kCanAccessPeer = "cuDeviceCanAccessPeer";
constexpr const char *kEnablePeer = "cuCtxEnablePeerAccess";
constexpr const char *kIpcExports = "CUDA IPC (cuIpcGetMemHandle) exports cuMemAlloc memory only";
constexpr const char *kNoIpcEvents =
    "(CU_EVENT_INTERPROCESS failed in probe, or the device reports no IPC event support)";
constexpr const char *kHostDevicePointer = "cuMemHostGetDevicePointer";
constexpr const char *kSyncDevice = "cuCtxSynchronize";
constexpr const char *kSyncStream = "cuStreamSynchronize";
constexpr const char *kEventCreate = "cuEventCreate";
constexpr const char *kEventRecord = "cuEventRecord";
constexpr const char *kEventSync = "cuEventSynchronize";
constexpr const char *kStreamWait = "cuStreamWaitEvent";
constexpr const char *kIpcGetMem = "cuIpcGetMemHandle";
constexpr const char *kIpcOpenMem = "cuIpcOpenMemHandle";
constexpr const char *kIpcGetEvent = "cuIpcGetEventHandle";
constexpr const char *kIpcOpenEvent = "cuIpcOpenEventHandle";

inline int version_major(int v) noexcept { return v / 1000; }
inline int version_minor(int v) noexcept { return v % 1000 / 10; }

inline const char *load_api(void *lib, Api *api) noexcept {
  return hurray::cuda::load_api(lib, api);
}
inline hurray_status status_of(Result r) noexcept {
  return hurray::cuda::status_of(static_cast<int>(r));
}
inline void error_text(const Api &api, Result r, ErrorText *out) noexcept {
  hurray::cuda::error_text(&api, static_cast<int>(r), out);
}

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
inline Result sync_device(const Api &cu) noexcept { return cu.cuCtxSynchronize(); }
inline Result sync_stream(const Api &cu, Stream s) noexcept { return cu.cuStreamSynchronize(s); }
inline const char *copy_function(bool to_host) noexcept {
  return to_host ? "cuMemcpyDtoHAsync" : "cuMemcpyHtoDAsync";
}
inline Result copy_async(const Api &cu, bool to_host, void *host, uintptr_t dev, size_t n,
                         Stream s) noexcept {
  return to_host ? cu.cuMemcpyDtoHAsync(host, dptr(dev), n, s)
                 : cu.cuMemcpyHtoDAsync(dptr(dev), host, n, s);
}

// Events.
inline Result event_create(const Api &cu, bool ipc, Event *ev) noexcept {
  const unsigned flags = static_cast<unsigned>(CU_EVENT_DISABLE_TIMING) |
                         (ipc ? static_cast<unsigned>(CU_EVENT_INTERPROCESS) : 0u);
  return cu.cuEventCreate(ev, flags);
}
inline Result event_record(const Api &cu, Event ev, Stream s) noexcept {
  return cu.cuEventRecord(ev, s);
}
inline Result event_sync(const Api &cu, Event ev) noexcept { return cu.cuEventSynchronize(ev); }
inline Result stream_wait_event(const Api &cu, Stream s, Event ev) noexcept {
  return cu.cuStreamWaitEvent(s, ev, 0);
}
inline void event_destroy(const Api &cu, Event ev) noexcept { cu.cuEventDestroy(ev); }
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
inline Result ipc_get_event(const Api &cu, IpcEventHandle *h, Event ev) noexcept {
  return cu.cuIpcGetEventHandle(h, ev);
}
inline Result ipc_open_event(const Api &cu, Event *ev, IpcEventHandle h) noexcept {
  return cu.cuIpcOpenEventHandle(ev, h);
}
inline const char *export_event_hint(Result r) noexcept {
  return r == CUDA_ERROR_INVALID_HANDLE
             ? "; only events from event_record (CU_EVENT_INTERPROCESS) can be exported"
             : "";
}

}  // namespace hurray::gpu_stream::rt
