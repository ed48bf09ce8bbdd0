// What src/backends/hip offers the rest of the plugin: the table of HIP
// runtime entry points resolved with dlsym (the plugin links no
// libamdhip64), the names and statuses of hipError_t codes, and the reading
// of hipPointerGetAttributes across HIP versions. Not installed.
#pragma once

// Built with -D__HIP_PLATFORM_AMD__ against Debian's libamdhip64-dev headers
// (HIP 5.2): types and prototypes only.
#include <hip/hip_runtime_api.h>
#include <hurray_backend.h>

#include <cstdint>
#include <span>

#include "gpu-stream/error_text.h"
#include "kit/library.h"

namespace hurray::hip {

// Every HIP function the plugin calls, resolved at run time (hip_api.cpp
// lists them, required or not). Every one but hipLaunchHostFunc exists in
// HIP 4.2 and later (symbol version hip_4.2; Debian's HIP 5.2 runtime
// exports no hipLaunchHostFunc although its header declares it); a missing
// required one makes probe() report HURRAY_E_DEVICE_UNAVAILABLE, a missing
// optional one is nullptr. release_after's completion is hipLaunchHostFunc,
// else hipStreamAddCallback (gpu-stream/release.cpp); with neither it waits
// on the host. hipError_t is [[nodiscard]]: a result the plugin has no use
// for (cleanup) is cast to void.
//
// The header overloads some names with C++ templates (hipMalloc,
// hipHostMalloc, hipMallocManaged): their prototype is spelled out, and
// hip_api.cpp checks that it selects a declaration of the header.
struct Api {
  decltype(&::hipGetDeviceCount) hipGetDeviceCount = nullptr;
  decltype(&::hipGetErrorName) hipGetErrorName = nullptr;
  decltype(&::hipGetErrorString) hipGetErrorString = nullptr;
  decltype(&::hipRuntimeGetVersion) hipRuntimeGetVersion = nullptr;
  decltype(&::hipGetDevice) hipGetDevice = nullptr;
  decltype(&::hipSetDevice) hipSetDevice = nullptr;
  decltype(&::hipDeviceGetName) hipDeviceGetName = nullptr;
  decltype(&::hipDeviceGetAttribute) hipDeviceGetAttribute = nullptr;
  decltype(&::hipDeviceTotalMem) hipDeviceTotalMem = nullptr;
  decltype(&::hipDeviceCanAccessPeer) hipDeviceCanAccessPeer = nullptr;
  decltype(&::hipDeviceGetUuid) hipDeviceGetUuid = nullptr;
  decltype(&::hipDeviceEnablePeerAccess) hipDeviceEnablePeerAccess = nullptr;
  decltype(&::hipDeviceSynchronize) hipDeviceSynchronize = nullptr;
  decltype(&::hipStreamCreateWithFlags) hipStreamCreateWithFlags = nullptr;
  decltype(&::hipStreamDestroy) hipStreamDestroy = nullptr;
  decltype(&::hipStreamSynchronize) hipStreamSynchronize = nullptr;
  decltype(&::hipStreamWaitEvent) hipStreamWaitEvent = nullptr;
  decltype(&::hipLaunchHostFunc) hipLaunchHostFunc = nullptr;
  decltype(&::hipStreamAddCallback) hipStreamAddCallback = nullptr;
  decltype(&::hipEventCreateWithFlags) hipEventCreateWithFlags = nullptr;
  decltype(&::hipEventRecord) hipEventRecord = nullptr;
  decltype(&::hipEventSynchronize) hipEventSynchronize = nullptr;
  decltype(&::hipEventDestroy) hipEventDestroy = nullptr;
  hipError_t (*hipMalloc)(void **, size_t) = nullptr;
  decltype(&::hipFree) hipFree = nullptr;
  hipError_t (*hipHostMalloc)(void **, size_t, unsigned int) = nullptr;
  decltype(&::hipHostFree) hipHostFree = nullptr;
  decltype(&::hipHostGetDevicePointer) hipHostGetDevicePointer = nullptr;
  hipError_t (*hipMallocManaged)(void **, size_t, unsigned int) = nullptr;
  decltype(&::hipMemGetAddressRange) hipMemGetAddressRange = nullptr;
  decltype(&::hipMemcpyAsync) hipMemcpyAsync = nullptr;
  decltype(&::hipPointerGetAttributes) hipPointerGetAttributes = nullptr;
  decltype(&::hipIpcGetMemHandle) hipIpcGetMemHandle = nullptr;
  decltype(&::hipIpcOpenMemHandle) hipIpcOpenMemHandle = nullptr;
  decltype(&::hipIpcCloseMemHandle) hipIpcCloseMemHandle = nullptr;
  decltype(&::hipIpcGetEventHandle) hipIpcGetEventHandle = nullptr;
  decltype(&::hipIpcOpenEventHandle) hipIpcOpenEventHandle = nullptr;
  // Virtual memory management (gpu-stream/runtime_vmm.cpp), all optional: without one of
  // them the plugin makes, exports and imports no VMM memory (HIP 5.2's
  // header declares them; its runtime may answer hipErrorNotSupported).
  decltype(&::hipMemCreate) hipMemCreate = nullptr;
  decltype(&::hipMemRelease) hipMemRelease = nullptr;
  decltype(&::hipMemAddressReserve) hipMemAddressReserve = nullptr;
  decltype(&::hipMemAddressFree) hipMemAddressFree = nullptr;
  decltype(&::hipMemMap) hipMemMap = nullptr;
  decltype(&::hipMemUnmap) hipMemUnmap = nullptr;
  decltype(&::hipMemSetAccess) hipMemSetAccess = nullptr;
  decltype(&::hipMemGetAllocationGranularity) hipMemGetAllocationGranularity = nullptr;
  decltype(&::hipMemRetainAllocationHandle) hipMemRetainAllocationHandle = nullptr;
  decltype(&::hipMemExportToShareableHandle) hipMemExportToShareableHandle = nullptr;
  decltype(&::hipMemImportFromShareableHandle) hipMemImportFromShareableHandle = nullptr;
};

// load_api and the error functions (gpu-stream/runtime_api.h).
#include "gpu-stream/runtime_api.h"

// load_api's table (hip_api.cpp): each function and whether it is required.
std::span<const kit::Symbol<Api>> symbols() noexcept;

// The memory class of a hipPointerGetAttributes answer. HIP 6 renumbered
// hipMemoryType (5.x: Host 0, Device 1, Array 2, Unified 3; 6.x:
// Unregistered 0, Host 1, Device 2, Managed 3, Array 10, Unified 11), so
// the runtime's major version (hipRuntimeGetVersion / 10000000) selects the
// reading; is_managed wins over the type. False for memory that is no linear
// buffer HIP manages (unregistered host memory, arrays, unknown types).
bool class_of_pointer(int runtime_major, int memory_type, int is_managed,
                      uint8_t *memory_class) noexcept;

}  // namespace hurray::hip
