// What src/backends/hip offers the rest of the plugin: the table of HIP
// runtime entry points resolved with dlsym (the plugin links no
// libamdhip64), the names and statuses of hipError_t codes, and the reading
// of hipPointerGetAttributes across HIP versions. Not installed.
#pragma once

// Built with -D__HIP_PLATFORM_AMD__ against Debian's libamdhip64-dev headers
// (HIP 5.2): types and prototypes only.
#include <hip/hip_runtime_api.h>
#include <hurray_backend.h>

#include "gpu-stream/error_text.h"

#include <cstdint>
#include <type_traits>

namespace hurray::hip {

// XX(name, required, signature...): every HIP function the plugin calls and
// the prototype it is called with (last, since it holds commas). The header
// overloads some names with C++ templates (hipMalloc, hipHostMalloc,
// hipMallocManaged), so the prototype is spelled out; hip_api.cpp checks each
// against the header at compile time. Every one but hipLaunchHostFunc exists
// in HIP 4.2 and later (symbol version hip_4.2; Debian's HIP 5.2 runtime
// exports no hipLaunchHostFunc although its header declares it); a missing
// required one makes probe() report HURRAY_E_DEVICE_UNAVAILABLE.
// release_after's completion is hipLaunchHostFunc, else hipStreamAddCallback
// (gpu-stream/release.cpp); with neither it waits on the host.
// hipError_t is [[nodiscard]]: a result the plugin has no use for (cleanup)
// is cast to void.
#define HURRAY_HIP_FUNCTIONS(XX)                                                                 \
  XX(hipGetDeviceCount, true, hipError_t(int *))                                                 \
  XX(hipGetErrorName, false, const char *(hipError_t))                                           \
  XX(hipGetErrorString, false, const char *(hipError_t))                                         \
  XX(hipRuntimeGetVersion, true, hipError_t(int *))                                              \
  XX(hipGetDevice, true, hipError_t(int *))                                                      \
  XX(hipSetDevice, true, hipError_t(int))                                                        \
  XX(hipDeviceGetName, true, hipError_t(char *, int, hipDevice_t))                               \
  XX(hipDeviceGetAttribute, true, hipError_t(int *, hipDeviceAttribute_t, int))                  \
  XX(hipDeviceTotalMem, true, hipError_t(size_t *, hipDevice_t))                                 \
  XX(hipDeviceCanAccessPeer, true, hipError_t(int *, int, int))                                  \
  XX(hipDeviceGetUuid, false, hipError_t(hipUUID *, hipDevice_t))                                \
  XX(hipDeviceEnablePeerAccess, true, hipError_t(int, unsigned int))                             \
  XX(hipDeviceSynchronize, true, hipError_t())                                                   \
  XX(hipStreamCreateWithFlags, true, hipError_t(hipStream_t *, unsigned int))                    \
  XX(hipStreamDestroy, true, hipError_t(hipStream_t))                                            \
  XX(hipStreamSynchronize, true, hipError_t(hipStream_t))                                        \
  XX(hipStreamWaitEvent, true, hipError_t(hipStream_t, hipEvent_t, unsigned int))                \
  XX(hipLaunchHostFunc, false, hipError_t(hipStream_t, hipHostFn_t, void *))                     \
  XX(hipStreamAddCallback, false, hipError_t(hipStream_t, hipStreamCallback_t, void *, unsigned)) \
  XX(hipEventCreateWithFlags, true, hipError_t(hipEvent_t *, unsigned))                          \
  XX(hipEventRecord, true, hipError_t(hipEvent_t, hipStream_t))                                  \
  XX(hipEventSynchronize, true, hipError_t(hipEvent_t))                                          \
  XX(hipEventDestroy, true, hipError_t(hipEvent_t))                                              \
  XX(hipMalloc, true, hipError_t(void **, size_t))                                               \
  XX(hipFree, true, hipError_t(void *))                                                          \
  XX(hipHostMalloc, true, hipError_t(void **, size_t, unsigned int))                             \
  XX(hipHostFree, true, hipError_t(void *))                                                      \
  XX(hipHostGetDevicePointer, true, hipError_t(void **, void *, unsigned int))                   \
  XX(hipMallocManaged, true, hipError_t(void **, size_t, unsigned int))                          \
  XX(hipMemGetAddressRange, false, hipError_t(hipDeviceptr_t *, size_t *, hipDeviceptr_t))       \
  XX(hipMemcpyAsync, true, hipError_t(void *, const void *, size_t, hipMemcpyKind, hipStream_t)) \
  XX(hipPointerGetAttributes, true, hipError_t(hipPointerAttribute_t *, const void *))           \
  XX(hipIpcGetMemHandle, true, hipError_t(hipIpcMemHandle_t *, void *))                          \
  XX(hipIpcOpenMemHandle, true, hipError_t(void **, hipIpcMemHandle_t, unsigned int))            \
  XX(hipIpcCloseMemHandle, true, hipError_t(void *))                                             \
  XX(hipIpcGetEventHandle, true, hipError_t(hipIpcEventHandle_t *, hipEvent_t))                  \
  XX(hipIpcOpenEventHandle, true, hipError_t(hipEvent_t *, hipIpcEventHandle_t))                \
  HURRAY_HIP_VMM_FUNCTIONS(XX)

// Virtual memory management (hip/vmm.cpp), all optional: without one of
// them the plugin makes, exports and imports no VMM memory (HIP 5.2's
// header declares them; its runtime may answer hipErrorNotSupported).
#define HURRAY_HIP_VMM_FUNCTIONS(XX)                                                             \
  XX(hipMemCreate, false,                                                                        \
     hipError_t(hipMemGenericAllocationHandle_t *, size_t, const hipMemAllocationProp *,          \
                unsigned long long))                                                             \
  XX(hipMemRelease, false, hipError_t(hipMemGenericAllocationHandle_t))                          \
  XX(hipMemAddressReserve, false, hipError_t(void **, size_t, size_t, void *, unsigned long long)) \
  XX(hipMemAddressFree, false, hipError_t(void *, size_t))                                       \
  XX(hipMemMap, false,                                                                           \
     hipError_t(void *, size_t, size_t, hipMemGenericAllocationHandle_t, unsigned long long))   \
  XX(hipMemUnmap, false, hipError_t(void *, size_t))                                             \
  XX(hipMemSetAccess, false, hipError_t(void *, size_t, const hipMemAccessDesc *, size_t))       \
  XX(hipMemGetAllocationGranularity, false,                                                      \
     hipError_t(size_t *, const hipMemAllocationProp *, hipMemAllocationGranularity_flags))     \
  XX(hipMemRetainAllocationHandle, false, hipError_t(hipMemGenericAllocationHandle_t *, void *)) \
  XX(hipMemExportToShareableHandle, false,                                                       \
     hipError_t(void *, hipMemGenericAllocationHandle_t, hipMemAllocationHandleType,             \
                unsigned long long))                                                             \
  XX(hipMemImportFromShareableHandle, false,                                                     \
     hipError_t(hipMemGenericAllocationHandle_t *, void *, hipMemAllocationHandleType))

// The resolved entry points; a missing optional one is nullptr.
struct Api {
#define HURRAY_HIP_XX_(name, required, ...) std::add_pointer_t<__VA_ARGS__> name = nullptr;
  HURRAY_HIP_FUNCTIONS(HURRAY_HIP_XX_)
#undef HURRAY_HIP_XX_
};

// load_api and the error functions (gpu-stream/runtime_api.h).
#include "gpu-stream/runtime_api.h"

// The memory class of a hipPointerGetAttributes answer. HIP 6 renumbered
// hipMemoryType (5.x: Host 0, Device 1, Array 2, Unified 3; 6.x:
// Unregistered 0, Host 1, Device 2, Managed 3, Array 10, Unified 11), so
// the runtime's major version (hipRuntimeGetVersion / 10000000) selects the
// reading; is_managed wins over the type. False for memory that is no linear
// buffer HIP manages (unregistered host memory, arrays, unknown types).
bool class_of_pointer(int runtime_major, int memory_type, int is_managed,
                      uint8_t *memory_class) noexcept;

}  // namespace hurray::hip
