// What src/backends/cuda offers the rest of the plugin: the table of CUDA
// driver entry points resolved with dlsym (the plugin links no libcuda), and
// the names and statuses of CUresult codes. Not installed.
#pragma once

#include <cuda.h>  // types and prototypes only: built with the toolkit's headers
#include <hurray_backend.h>

#include "gpu-stream/error_text.h"

namespace hurray::cuda {

// Every driver function the plugin calls, resolved at run time (cu_api.cpp
// lists them, required or not). cuda.h maps several API names to versioned
// symbols with macros (#define cuMemAlloc cuMemAlloc_v2), so a member
// declared here as cuMemAlloc is named cuMemAlloc_v2, has the prototype of
// that versioned symbol, and is looked up by that name (kit/member_name.h);
// code writes api.cuMemAlloc and gets it. cu_api.cpp checks the versioned
// names at compile time. Every symbol here exists in the drivers of CUDA 11.0
// and later; a missing required one makes probe() report
// HURRAY_E_DEVICE_UNAVAILABLE. A missing optional one is nullptr. The
// optional ones improve messages, except cuLaunchHostFunc (CUDA 10.0):
// without it release_after waits on the host (gpu-stream/release.cpp), and
// the virtual memory management calls (cuMemCreate ...
// cuMemImportFromShareableHandle, CUDA 10.2/11.0): without them memory
// crosses processes by cuIpcGetMemHandle only (gpu-stream/vmm.cpp).
struct Api {
  decltype(&::cuInit) cuInit = nullptr;
  decltype(&::cuDriverGetVersion) cuDriverGetVersion = nullptr;
  decltype(&::cuGetErrorName) cuGetErrorName = nullptr;
  decltype(&::cuGetErrorString) cuGetErrorString = nullptr;
  decltype(&::cuDeviceGetCount) cuDeviceGetCount = nullptr;
  decltype(&::cuDeviceGet) cuDeviceGet = nullptr;
  decltype(&::cuDeviceGetName) cuDeviceGetName = nullptr;
  decltype(&::cuDeviceGetAttribute) cuDeviceGetAttribute = nullptr;
  decltype(&::cuDeviceTotalMem) cuDeviceTotalMem = nullptr;
  decltype(&::cuDeviceCanAccessPeer) cuDeviceCanAccessPeer = nullptr;
  decltype(&::cuDeviceGetUuid) cuDeviceGetUuid = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) cuDevicePrimaryCtxRetain = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease) cuDevicePrimaryCtxRelease = nullptr;
  decltype(&::cuCtxPushCurrent) cuCtxPushCurrent = nullptr;
  decltype(&::cuCtxPopCurrent) cuCtxPopCurrent = nullptr;
  decltype(&::cuCtxGetCurrent) cuCtxGetCurrent = nullptr;
  decltype(&::cuCtxSynchronize) cuCtxSynchronize = nullptr;
  decltype(&::cuCtxEnablePeerAccess) cuCtxEnablePeerAccess = nullptr;
  decltype(&::cuStreamCreate) cuStreamCreate = nullptr;
  decltype(&::cuStreamDestroy) cuStreamDestroy = nullptr;
  decltype(&::cuStreamSynchronize) cuStreamSynchronize = nullptr;
  decltype(&::cuStreamWaitEvent) cuStreamWaitEvent = nullptr;
  decltype(&::cuLaunchHostFunc) cuLaunchHostFunc = nullptr;
  decltype(&::cuEventCreate) cuEventCreate = nullptr;
  decltype(&::cuEventRecord) cuEventRecord = nullptr;
  decltype(&::cuEventSynchronize) cuEventSynchronize = nullptr;
  decltype(&::cuEventDestroy) cuEventDestroy = nullptr;
  decltype(&::cuMemAlloc) cuMemAlloc = nullptr;
  decltype(&::cuMemFree) cuMemFree = nullptr;
  decltype(&::cuMemHostAlloc) cuMemHostAlloc = nullptr;
  decltype(&::cuMemFreeHost) cuMemFreeHost = nullptr;
  decltype(&::cuMemHostGetDevicePointer) cuMemHostGetDevicePointer = nullptr;
  decltype(&::cuMemAllocManaged) cuMemAllocManaged = nullptr;
  decltype(&::cuMemGetAddressRange) cuMemGetAddressRange = nullptr;
  decltype(&::cuMemcpyHtoDAsync) cuMemcpyHtoDAsync = nullptr;
  decltype(&::cuMemcpyDtoHAsync) cuMemcpyDtoHAsync = nullptr;
  decltype(&::cuPointerGetAttributes) cuPointerGetAttributes = nullptr;
  decltype(&::cuIpcGetMemHandle) cuIpcGetMemHandle = nullptr;
  decltype(&::cuIpcOpenMemHandle) cuIpcOpenMemHandle = nullptr;
  decltype(&::cuIpcCloseMemHandle) cuIpcCloseMemHandle = nullptr;
  decltype(&::cuIpcGetEventHandle) cuIpcGetEventHandle = nullptr;
  decltype(&::cuIpcOpenEventHandle) cuIpcOpenEventHandle = nullptr;
  decltype(&::cuMemCreate) cuMemCreate = nullptr;
  decltype(&::cuMemRelease) cuMemRelease = nullptr;
  decltype(&::cuMemAddressReserve) cuMemAddressReserve = nullptr;
  decltype(&::cuMemAddressFree) cuMemAddressFree = nullptr;
  decltype(&::cuMemMap) cuMemMap = nullptr;
  decltype(&::cuMemUnmap) cuMemUnmap = nullptr;
  decltype(&::cuMemSetAccess) cuMemSetAccess = nullptr;
  decltype(&::cuMemGetAllocationGranularity) cuMemGetAllocationGranularity = nullptr;
  decltype(&::cuMemRetainAllocationHandle) cuMemRetainAllocationHandle = nullptr;
  decltype(&::cuMemExportToShareableHandle) cuMemExportToShareableHandle = nullptr;
  decltype(&::cuMemImportFromShareableHandle) cuMemImportFromShareableHandle = nullptr;
};

// load_api and the error functions (gpu-stream/runtime_api.h).
#include "gpu-stream/runtime_api.h"

}  // namespace hurray::cuda
