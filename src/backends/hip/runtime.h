// The HIP side of the GPU stream driver (src/backends/gpu-stream): its
// types, the names its messages use, and making a device current (HIP has a
// current device per thread instead of contexts). What differs from CUDA in
// shape lives in runtime.cpp.
#pragma once

#include <hip/hip_runtime_api.h>
#include <hurray_backend.h>

#include <cstddef>
#include <cstdint>

#include "internal.h"
#include "kit/ipc.h"

namespace hurray::gpu_stream::rt {

using Api = hurray::hip::Api;
using Result = hipError_t;
using Stream = hipStream_t;
using Event = hipEvent_t;
using IpcMemHandle = hipIpcMemHandle_t;
using IpcEventHandle = hipIpcEventHandle_t;
using ErrorText = hurray::hip::ErrorText;

constexpr Result kSuccess = hipSuccess;
constexpr uint8_t kDeviceTag = HURRAY_DEVICE_ROCM;
constexpr const char *kVendor = "HIP";
constexpr const char *kLibraryEnv = "HURRAY_HIP_LIBRARY";
inline constexpr const char *kSonames[] = {"libamdhip64.so", "libamdhip64.so.5",
                                           "libamdhip64.so.6", nullptr};
constexpr const char *kNeeded = "HIP 4.2 or later is needed";
constexpr uint32_t kBaseAlignment = 256;
constexpr uint32_t kIpcMemoryKind = hurray::kit::fourcc('H', 'P', 'M', '1');
constexpr uint32_t kIpcEventKind = hurray::kit::fourcc('H', 'P', 'E', '1');

// The words of the messages.
constexpr const char *kVersionOf = "HIP runtime";
constexpr const char *kStandardAlloc = "hipMalloc";
constexpr const char *kPinnedAlloc = "hipHostMalloc(Mapped|Portable), data = host pointer";
constexpr const char *kManagedAlloc = "hipMallocManaged";
constexpr const char *kNoMapHost =
    "the device cannot map host memory (hipDeviceAttributeCanMapHostMemory is 0)";
constexpr const char *kNoManaged =
    "the device has no managed memory (hipDeviceAttributeManagedMemory is 0)";
constexpr const char *kCanAccessPeer = "hipDeviceCanAccessPeer";
constexpr const char *kEnablePeer = "hipDeviceEnablePeerAccess";
constexpr const char *kIpcExports = "HIP IPC (hipIpcGetMemHandle) exports hipMalloc memory only";
constexpr const char *kNoIpcEvents = "(hipEventInterprocess failed in probe)";
constexpr const char *kHostDevicePointer = "hipHostGetDevicePointer";
constexpr const char *kSyncDevice = "hipDeviceSynchronize";
constexpr const char *kSyncStream = "hipStreamSynchronize";
constexpr const char *kEventCreate = "hipEventCreateWithFlags";
constexpr const char *kEventRecord = "hipEventRecord";
constexpr const char *kEventSync = "hipEventSynchronize";
constexpr const char *kStreamWait = "hipStreamWaitEvent";
constexpr const char *kIpcGetMem = "hipIpcGetMemHandle";
constexpr const char *kIpcOpenMem = "hipIpcOpenMemHandle";
constexpr const char *kIpcGetEvent = "hipIpcGetEventHandle";
constexpr const char *kIpcOpenEvent = "hipIpcOpenEventHandle";

// HIP_VERSION style: major * 10000000 + minor * 100000 + patch.
inline int version_major(int v) noexcept { return v / 10000000; }
inline int version_minor(int v) noexcept { return v / 100000 % 100; }

inline const char *load_api(void *lib, Api *api) noexcept {
  return hurray::hip::load_api(lib, api);
}
inline hurray_status status_of(Result r) noexcept {
  return hurray::hip::status_of(static_cast<int>(r));
}
inline void error_text(const Api &api, Result r, ErrorText *out) noexcept {
  hurray::hip::error_text(&api, static_cast<int>(r), out);
}

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

inline void *vp(uintptr_t p) noexcept { return reinterpret_cast<void *>(p); }

// Copies and synchronisation on the current device.
inline Result sync_device(const Api &hip) noexcept { return hip.hipDeviceSynchronize(); }
inline Result sync_stream(const Api &hip, Stream s) noexcept { return hip.hipStreamSynchronize(s); }
inline const char *copy_function(bool) noexcept { return "hipMemcpyAsync"; }
inline Result copy_async(const Api &hip, bool to_host, void *host, uintptr_t dev, size_t n,
                         Stream s) noexcept {
  return to_host ? hip.hipMemcpyAsync(host, vp(dev), n, hipMemcpyDeviceToHost, s)
                 : hip.hipMemcpyAsync(vp(dev), host, n, hipMemcpyHostToDevice, s);
}

// Events.
inline Result event_create(const Api &hip, bool ipc, Event *ev) noexcept {
  return hip.hipEventCreateWithFlags(ev, hipEventDisableTiming | (ipc ? hipEventInterprocess : 0u));
}
inline Result event_record(const Api &hip, Event ev, Stream s) noexcept {
  return hip.hipEventRecord(ev, s);
}
inline Result event_sync(const Api &hip, Event ev) noexcept { return hip.hipEventSynchronize(ev); }
inline Result stream_wait_event(const Api &hip, Stream s, Event ev) noexcept {
  return hip.hipStreamWaitEvent(s, ev, 0);
}
inline void event_destroy(const Api &hip, Event ev) noexcept { (void)hip.hipEventDestroy(ev); }
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
inline Result ipc_get_event(const Api &hip, IpcEventHandle *h, Event ev) noexcept {
  return hip.hipIpcGetEventHandle(h, ev);
}
inline Result ipc_open_event(const Api &hip, Event *ev, IpcEventHandle h) noexcept {
  return hip.hipIpcOpenEventHandle(ev, h);
}
inline const char *export_event_hint(Result) noexcept { return ""; }

}  // namespace hurray::gpu_stream::rt
