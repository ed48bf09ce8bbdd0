// What src/backends/cuda offers the rest of the plugin: the table of CUDA
// driver entry points resolved with dlsym (the plugin links no libcuda), and
// the names and statuses of CUresult codes. Not installed.
#pragma once

#include <cuda.h>  // types and prototypes only: built with the toolkit's headers
#include <hurray_backend.h>

#include "gpu-stream/error_text.h"

namespace hurray::cuda {

// XX(name, symbol, required): every driver function the plugin calls, with
// the exact symbol it resolves. cuda.h maps several API names to versioned
// symbols (cuMemAlloc -> cuMemAlloc_v2) and the prototype of `name` is the
// one of that versioned symbol, so `symbol` must be the header's mapping:
// cu_api.cpp checks that at compile time. Every symbol here exists in the
// drivers of CUDA 11.0 and later; a missing required one makes probe()
// report HURRAY_E_DEVICE_UNAVAILABLE. The optional ones improve messages,
// except cuLaunchHostFunc (CUDA 10.0): without it release_after waits on the
// host (gpu-stream/release.cpp), and the virtual memory management calls
// (cuMemCreate ... cuMemImportFromShareableHandle, CUDA 10.2/11.0): without
// them memory crosses processes by cuIpcGetMemHandle only (gpu-stream/vmm.cpp).
#define HURRAY_CUDA_FUNCTIONS(XX)                                     \
  XX(cuInit, "cuInit", true)                                          \
  XX(cuDriverGetVersion, "cuDriverGetVersion", true)                  \
  XX(cuGetErrorName, "cuGetErrorName", false)                         \
  XX(cuGetErrorString, "cuGetErrorString", false)                     \
  XX(cuDeviceGetCount, "cuDeviceGetCount", true)                      \
  XX(cuDeviceGet, "cuDeviceGet", true)                                \
  XX(cuDeviceGetName, "cuDeviceGetName", true)                        \
  XX(cuDeviceGetAttribute, "cuDeviceGetAttribute", true)              \
  XX(cuDeviceTotalMem, "cuDeviceTotalMem_v2", true)                   \
  XX(cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer", true)            \
  XX(cuDeviceGetUuid, "cuDeviceGetUuid_v2", false)                    \
  XX(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", true)      \
  XX(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", true) \
  XX(cuCtxPushCurrent, "cuCtxPushCurrent_v2", true)                   \
  XX(cuCtxPopCurrent, "cuCtxPopCurrent_v2", true)                     \
  XX(cuCtxGetCurrent, "cuCtxGetCurrent", false)                       \
  XX(cuCtxSynchronize, "cuCtxSynchronize", true)                      \
  XX(cuCtxEnablePeerAccess, "cuCtxEnablePeerAccess", true)            \
  XX(cuStreamCreate, "cuStreamCreate", true)                          \
  XX(cuStreamDestroy, "cuStreamDestroy_v2", true)                     \
  XX(cuStreamSynchronize, "cuStreamSynchronize", true)                \
  XX(cuStreamWaitEvent, "cuStreamWaitEvent", true)                    \
  XX(cuLaunchHostFunc, "cuLaunchHostFunc", false)                     \
  XX(cuEventCreate, "cuEventCreate", true)                            \
  XX(cuEventRecord, "cuEventRecord", true)                            \
  XX(cuEventSynchronize, "cuEventSynchronize", true)                  \
  XX(cuEventDestroy, "cuEventDestroy_v2", true)                       \
  XX(cuMemAlloc, "cuMemAlloc_v2", true)                               \
  XX(cuMemFree, "cuMemFree_v2", true)                                 \
  XX(cuMemHostAlloc, "cuMemHostAlloc", true)                          \
  XX(cuMemFreeHost, "cuMemFreeHost", true)                            \
  XX(cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2", true) \
  XX(cuMemAllocManaged, "cuMemAllocManaged", true)                    \
  XX(cuMemGetAddressRange, "cuMemGetAddressRange_v2", true)           \
  XX(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", true)                 \
  XX(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", true)                 \
  XX(cuPointerGetAttributes, "cuPointerGetAttributes", true)          \
  XX(cuIpcGetMemHandle, "cuIpcGetMemHandle", true)                    \
  XX(cuIpcOpenMemHandle, "cuIpcOpenMemHandle_v2", true)               \
  XX(cuIpcCloseMemHandle, "cuIpcCloseMemHandle", true)                \
  XX(cuIpcGetEventHandle, "cuIpcGetEventHandle", true)                \
  XX(cuIpcOpenEventHandle, "cuIpcOpenEventHandle", true)                    \
  XX(cuMemCreate, "cuMemCreate", false)                                      \
  XX(cuMemRelease, "cuMemRelease", false)                                    \
  XX(cuMemAddressReserve, "cuMemAddressReserve", false)                      \
  XX(cuMemAddressFree, "cuMemAddressFree", false)                            \
  XX(cuMemMap, "cuMemMap", false)                                            \
  XX(cuMemUnmap, "cuMemUnmap", false)                                        \
  XX(cuMemSetAccess, "cuMemSetAccess", false)                                \
  XX(cuMemGetAllocationGranularity, "cuMemGetAllocationGranularity", false)  \
  XX(cuMemRetainAllocationHandle, "cuMemRetainAllocationHandle", false)      \
  XX(cuMemExportToShareableHandle, "cuMemExportToShareableHandle", false)    \
  XX(cuMemImportFromShareableHandle, "cuMemImportFromShareableHandle", false)

// The resolved entry points; a missing optional one is nullptr. (Member
// names go through cuda.h's macros too, e.g. cuMemAlloc is the member
// cuMemAlloc_v2; code writes api.cuMemAlloc and gets it.)
struct Api {
#define HURRAY_CUDA_XX_(name, symbol, required) decltype(&::name) name = nullptr;
  HURRAY_CUDA_FUNCTIONS(HURRAY_CUDA_XX_)
#undef HURRAY_CUDA_XX_
};

// load_api and the error functions (gpu-stream/runtime_api.h).
#include "gpu-stream/runtime_api.h"

}  // namespace hurray::cuda
