// What CUDA and HIP call the same things, side by side: the types, names and
// words of the GPU stream driver whose only difference is their spelling.
// Included by each plugin's runtime.h after it defines which runtime it is
// (HURRAY_GPU_RUNTIME_CUDA or HURRAY_GPU_RUNTIME_HIP) and includes the
// runtime's api header (api.h); what differs in shape stays there.
#pragma once

#include <hurray_backend.h>

#include <cstdint>

#include "kit/ipc.h"

#if defined(HURRAY_GPU_RUNTIME_CUDA)
#define HURRAY_GPU_PICK(cuda, hip) cuda
#elif defined(HURRAY_GPU_RUNTIME_HIP)
#define HURRAY_GPU_PICK(cuda, hip) hip
#else
#error "define HURRAY_GPU_RUNTIME_CUDA or HURRAY_GPU_RUNTIME_HIP before gpu-stream/names.h"
#endif

namespace hurray::gpu_stream::rt {

namespace vendor = HURRAY_GPU_PICK(hurray::cuda, hurray::hip);

// clang-format off
//                    CUDA                   HIP
using Api =           HURRAY_GPU_PICK(vendor::Api,       vendor::Api);
using Result =        HURRAY_GPU_PICK(CUresult,          hipError_t);
using Stream =        HURRAY_GPU_PICK(CUstream,          hipStream_t);
using Event =         HURRAY_GPU_PICK(CUevent,           hipEvent_t);
using IpcMemHandle =  HURRAY_GPU_PICK(CUipcMemHandle,    hipIpcMemHandle_t);
using IpcEventHandle = HURRAY_GPU_PICK(CUipcEventHandle, hipIpcEventHandle_t);
using ErrorText = vendor::ErrorText;

constexpr Result kSuccess = HURRAY_GPU_PICK(CUDA_SUCCESS, hipSuccess);
constexpr uint8_t kDeviceTag = HURRAY_GPU_PICK(HURRAY_DEVICE_CUDA, HURRAY_DEVICE_ROCM);
constexpr const char *kVendor = HURRAY_GPU_PICK("CUDA", "HIP");
constexpr const char *kLibraryEnv = HURRAY_GPU_PICK("HURRAY_CUDA_LIBRARY", "HURRAY_HIP_LIBRARY");
constexpr const char *kShareableEnv =
    HURRAY_GPU_PICK("HURRAY_CUDA_SHAREABLE", "HURRAY_HIP_SHAREABLE");
// SHAREABLE STANDARD memory by VMM where the device exports it, unless the
// environment says "legacy" (CUDA); only where it says "vmm" (HIP: never run
// on an AMD GPU yet, docs/backends/hip.md).
constexpr bool kShareableVmmByDefault = HURRAY_GPU_PICK(true, false);
#if defined(HURRAY_GPU_RUNTIME_CUDA)
inline constexpr const char *kSonames[] = {"libcuda.so.1", nullptr};
#else
inline constexpr const char *kSonames[] = {"libamdhip64.so", "libamdhip64.so.5",
                                           "libamdhip64.so.6", nullptr};
#endif
constexpr const char *kNeeded =
    HURRAY_GPU_PICK("a driver for CUDA 11.0 or later is needed", "HIP 4.2 or later is needed");
// Every allocation of either runtime is aligned to at least this.
constexpr uint32_t kBaseAlignment = 256;
constexpr uint32_t kIpcMemoryKind = HURRAY_GPU_PICK(hurray::kit::fourcc('C', 'U', 'M', '1'),
                                                    hurray::kit::fourcc('H', 'P', 'M', '1'));
constexpr uint32_t kIpcEventKind = HURRAY_GPU_PICK(hurray::kit::fourcc('C', 'U', 'E', '1'),
                                                   hurray::kit::fourcc('H', 'P', 'E', '1'));
// The words of the messages.
constexpr const char *kIpcMeaningMemory = HURRAY_GPU_PICK("a CUDA memory handle", "a HIP memory handle");
constexpr const char *kIpcMeaningEvent = HURRAY_GPU_PICK("a CUDA event handle", "a HIP event handle");
constexpr const char *kVersionOf = HURRAY_GPU_PICK("CUDA driver", "HIP runtime");
constexpr const char *kStandardAlloc = HURRAY_GPU_PICK("cuMemAlloc", "hipMalloc");
constexpr const char *kPinnedAlloc = HURRAY_GPU_PICK("cuMemHostAlloc(PORTABLE|DEVICEMAP), data = host pointer", "hipHostMalloc(Mapped|Portable), data = host pointer");
constexpr const char *kManagedAlloc = HURRAY_GPU_PICK("cuMemAllocManaged", "hipMallocManaged");
constexpr const char *kNoMapHost = HURRAY_GPU_PICK("the device cannot map host memory (CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY is 0)", "the device cannot map host memory (hipDeviceAttributeCanMapHostMemory is 0)");
constexpr const char *kNoManaged = HURRAY_GPU_PICK("the device has no managed memory (CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY is 0)", "the device has no managed memory (hipDeviceAttributeManagedMemory is 0)");
constexpr const char *kCanAccessPeer = HURRAY_GPU_PICK("cuDeviceCanAccessPeer", "hipDeviceCanAccessPeer");
constexpr const char *kEnablePeer = HURRAY_GPU_PICK("cuCtxEnablePeerAccess", "hipDeviceEnablePeerAccess");
constexpr const char *kIpcExports = HURRAY_GPU_PICK("CUDA IPC (cuIpcGetMemHandle) exports cuMemAlloc memory only", "HIP IPC (hipIpcGetMemHandle) exports hipMalloc memory only");
constexpr const char *kNoIpcEvents = HURRAY_GPU_PICK("(CU_EVENT_INTERPROCESS failed in probe, or the device reports no IPC event support)", "(hipEventInterprocess failed in probe)");
constexpr const char *kHostDevicePointer = HURRAY_GPU_PICK("cuMemHostGetDevicePointer", "hipHostGetDevicePointer");
constexpr const char *kEventCreate = HURRAY_GPU_PICK("cuEventCreate", "hipEventCreateWithFlags");
constexpr const char *kIpcGetMem = HURRAY_GPU_PICK("cuIpcGetMemHandle", "hipIpcGetMemHandle");
constexpr const char *kIpcOpenMem = HURRAY_GPU_PICK("cuIpcOpenMemHandle", "hipIpcOpenMemHandle");
constexpr const char *kAddressRange = HURRAY_GPU_PICK("cuMemGetAddressRange", "hipMemGetAddressRange");
constexpr const char *kStreamCreate = HURRAY_GPU_PICK("cuStreamCreate", "hipStreamCreateWithFlags");
constexpr const char *kVmmCreate = HURRAY_GPU_PICK("cuMemCreate", "hipMemCreate");
constexpr const char *kVmmExport = HURRAY_GPU_PICK("cuMemExportToShareableHandle", "hipMemExportToShareableHandle");
constexpr const char *kVmmImport = HURRAY_GPU_PICK("cuMemImportFromShareableHandle", "hipMemImportFromShareableHandle");
constexpr const char *kVmmFdType = HURRAY_GPU_PICK("CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR", "hipMemHandleTypePosixFileDescriptor");
constexpr const char *kHostWaitNote = HURRAY_GPU_PICK("; release_after: host wait (no cuLaunchHostFunc)", "; release_after: host wait (no hipLaunchHostFunc or hipStreamAddCallback)");
// clang-format on

// Calls of the same shape in both runtimes, each with its name for the messages.
constexpr const char *sync_device_name =
    HURRAY_GPU_PICK("cuCtxSynchronize", "hipDeviceSynchronize");
inline Result sync_device(const Api &api) noexcept {
  return api.HURRAY_GPU_PICK(cuCtxSynchronize, hipDeviceSynchronize)();
}
constexpr const char *sync_stream_name =
    HURRAY_GPU_PICK("cuStreamSynchronize", "hipStreamSynchronize");
inline Result sync_stream(const Api &api, Stream s) noexcept {
  return api.HURRAY_GPU_PICK(cuStreamSynchronize, hipStreamSynchronize)(s);
}
constexpr const char *event_record_name = HURRAY_GPU_PICK("cuEventRecord", "hipEventRecord");
inline Result event_record(const Api &api, Event ev, Stream s) noexcept {
  return api.HURRAY_GPU_PICK(cuEventRecord, hipEventRecord)(ev, s);
}
constexpr const char *event_sync_name =
    HURRAY_GPU_PICK("cuEventSynchronize", "hipEventSynchronize");
inline Result event_sync(const Api &api, Event ev) noexcept {
  return api.HURRAY_GPU_PICK(cuEventSynchronize, hipEventSynchronize)(ev);
}
constexpr const char *ipc_get_event_name =
    HURRAY_GPU_PICK("cuIpcGetEventHandle", "hipIpcGetEventHandle");
inline Result ipc_get_event(const Api &api, IpcEventHandle *h, Event ev) noexcept {
  return api.HURRAY_GPU_PICK(cuIpcGetEventHandle, hipIpcGetEventHandle)(h, ev);
}
constexpr const char *ipc_open_event_name =
    HURRAY_GPU_PICK("cuIpcOpenEventHandle", "hipIpcOpenEventHandle");
inline Result ipc_open_event(const Api &api, Event *ev, IpcEventHandle h) noexcept {
  return api.HURRAY_GPU_PICK(cuIpcOpenEventHandle, hipIpcOpenEventHandle)(ev, h);
}
constexpr const char *stream_wait_name = HURRAY_GPU_PICK("cuStreamWaitEvent", "hipStreamWaitEvent");
inline Result stream_wait_event(const Api &api, Stream s, Event ev) noexcept {
  return api.HURRAY_GPU_PICK(cuStreamWaitEvent, hipStreamWaitEvent)(s, ev, 0u);
}
// Cleanup: what the runtime answers is of no use.
inline void event_destroy(const Api &api, Event ev) noexcept {
  (void)api.HURRAY_GPU_PICK(cuEventDestroy, hipEventDestroy)(ev);
}
inline void stream_destroy(const Api &api, Stream s) noexcept {
  (void)api.HURRAY_GPU_PICK(cuStreamDestroy, hipStreamDestroy)(s);
}

// The runtime's own tables (the plugin's api file).
inline const char *load_api(void *lib, Api *api) noexcept { return vendor::load_api(lib, api); }
inline hurray_status status_of(Result r) noexcept {
  return vendor::status_of(static_cast<int>(r));
}
inline void error_text(const Api &api, Result r, ErrorText *out) noexcept {
  vendor::error_text(&api, static_cast<int>(r), out);
}

}  // namespace hurray::gpu_stream::rt
