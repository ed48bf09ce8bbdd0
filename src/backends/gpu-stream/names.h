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
// The words of the messages: X(name, CUDA, HIP).
#define HURRAY_GPU_WORDS(X) \
  X(kIpcMeaningMemory, "a CUDA memory handle", "a HIP memory handle") \
  X(kIpcMeaningEvent, "a CUDA event handle", "a HIP event handle") \
  X(kVersionOf, "CUDA driver", "HIP runtime") \
  X(kStandardAlloc, "cuMemAlloc", "hipMalloc") \
  X(kPinnedAlloc, "cuMemHostAlloc(PORTABLE|DEVICEMAP), data = host pointer", "hipHostMalloc(Mapped|Portable), data = host pointer") \
  X(kManagedAlloc, "cuMemAllocManaged", "hipMallocManaged") \
  X(kNoMapHost, "the device cannot map host memory (CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY is 0)", "the device cannot map host memory (hipDeviceAttributeCanMapHostMemory is 0)") \
  X(kNoManaged, "the device has no managed memory (CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY is 0)", "the device has no managed memory (hipDeviceAttributeManagedMemory is 0)") \
  X(kCanAccessPeer, "cuDeviceCanAccessPeer", "hipDeviceCanAccessPeer") \
  X(kEnablePeer, "cuCtxEnablePeerAccess", "hipDeviceEnablePeerAccess") \
  X(kIpcExports, "CUDA IPC (cuIpcGetMemHandle) exports cuMemAlloc memory only", "HIP IPC (hipIpcGetMemHandle) exports hipMalloc memory only") \
  X(kNoIpcEvents, "(CU_EVENT_INTERPROCESS failed in probe, or the device reports no IPC event support)", "(hipEventInterprocess failed in probe)") \
  X(kHostDevicePointer, "cuMemHostGetDevicePointer", "hipHostGetDevicePointer") \
  X(kEventCreate, "cuEventCreate", "hipEventCreateWithFlags") \
  X(kIpcGetMem, "cuIpcGetMemHandle", "hipIpcGetMemHandle") \
  X(kIpcOpenMem, "cuIpcOpenMemHandle", "hipIpcOpenMemHandle") \
  X(kAddressRange, "cuMemGetAddressRange", "hipMemGetAddressRange") \
  X(kStreamCreate, "cuStreamCreate", "hipStreamCreateWithFlags") \
  X(kVmmCreate, "cuMemCreate", "hipMemCreate") \
  X(kVmmExport, "cuMemExportToShareableHandle", "hipMemExportToShareableHandle") \
  X(kVmmImport, "cuMemImportFromShareableHandle", "hipMemImportFromShareableHandle") \
  X(kVmmFdType, "CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR", "hipMemHandleTypePosixFileDescriptor") \
  X(kHostWaitNote, "; release_after: host wait (no cuLaunchHostFunc)", "; release_after: host wait (no hipLaunchHostFunc or hipStreamAddCallback)")
#define HURRAY_GPU_WORD_(name, cuda, hip) constexpr const char *name = HURRAY_GPU_PICK(cuda, hip);
HURRAY_GPU_WORDS(HURRAY_GPU_WORD_)
#undef HURRAY_GPU_WORD_
// clang-format on

// Calls of the same shape in both runtimes: the name of each, and the call.
#define HURRAY_GPU_CALL_(name, cuda, hip)                                       \
  constexpr const char *name##_name = HURRAY_GPU_PICK(#cuda, #hip);            \
  template <class... A>                                                         \
  Result name(const Api &api, A... a) noexcept {                                \
    return api.HURRAY_GPU_PICK(cuda, hip)(a...);                                \
  }
HURRAY_GPU_CALL_(sync_device, cuCtxSynchronize, hipDeviceSynchronize)
HURRAY_GPU_CALL_(sync_stream, cuStreamSynchronize, hipStreamSynchronize)
HURRAY_GPU_CALL_(event_record, cuEventRecord, hipEventRecord)
HURRAY_GPU_CALL_(event_sync, cuEventSynchronize, hipEventSynchronize)
HURRAY_GPU_CALL_(event_destroy_raw, cuEventDestroy, hipEventDestroy)
HURRAY_GPU_CALL_(ipc_get_event, cuIpcGetEventHandle, hipIpcGetEventHandle)
HURRAY_GPU_CALL_(ipc_open_event, cuIpcOpenEventHandle, hipIpcOpenEventHandle)
HURRAY_GPU_CALL_(stream_wait, cuStreamWaitEvent, hipStreamWaitEvent)
HURRAY_GPU_CALL_(stream_destroy_raw, cuStreamDestroy, hipStreamDestroy)
#undef HURRAY_GPU_CALL_

inline Result stream_wait_event(const Api &api, Stream s, Event ev) noexcept {
  return stream_wait(api, s, ev, 0u);
}
inline void event_destroy(const Api &api, Event ev) noexcept { (void)event_destroy_raw(api, ev); }
inline void stream_destroy(const Api &api, Stream s) noexcept { (void)stream_destroy_raw(api, s); }

// The runtime's own tables (the plugin's api file).
inline const char *load_api(void *lib, Api *api) noexcept { return vendor::load_api(lib, api); }
inline hurray_status status_of(Result r) noexcept {
  return vendor::status_of(static_cast<int>(r));
}
inline void error_text(const Api &api, Result r, ErrorText *out) noexcept {
  vendor::error_text(&api, static_cast<int>(r), out);
}

}  // namespace hurray::gpu_stream::rt
