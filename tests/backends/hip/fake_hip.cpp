// A fake HIP runtime for the HIP plugin's IPC tests without a GPU
// (libhurray_fake_hip.so; the plugin loads it through HURRAY_HIP_LIBRARY).
// It is the fake CUDA driver (tests/backends/cuda/fake_cuda.cpp and
// fake_cuda_memory.cpp, compiled into the same library) under HIP's names:
// each hip* function the plugin resolves (src/backends/hip/api.h) is a thin
// call of its cu* twin, its CUresult answered as the hipError_t of the same
// meaning, so the memory model (memfd-backed device memory, legacy IPC
// handles as /proc/<pid>/fd paths, VMM memfds named "fake-cuda-vmm"), its
// counters and its controls (hurray_fake_cuda_memory_counts, ...) are the
// CUDA tests' own. One device (ordinal 0); hipSetDevice of another is
// hipErrorInvalidDevice. The library is linked -Bsymbolic, so its hip*
// calls reach its own cu* even where a process holds the CUDA fake too.
// Controls of its own (the environment, read at each call):
//   HURRAY_FAKE_HIP_MAJOR        hipRuntimeGetVersion answers this major
//                                version (default: the header's)
//   HURRAY_FAKE_HIP_GRANULARITY  hipMemGetAllocationGranularity answers this
//                                many bytes (default: the fake's 2 MiB)
//   HURRAY_FAKE_HIP_NO_ACCESS    hipMemSetAccess fails (hipErrorNotSupported)
// What the plugin resolves and the tests do not use is hipErrorNotSupported.
#include <cuda.h>
#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define FAKE_API extern "C" __attribute__((visibility("default")))

namespace {

thread_local int current_device = 0;

hipError_t to_hip(CUresult r) {
  switch (r) {
    case CUDA_SUCCESS:
      return hipSuccess;
    case CUDA_ERROR_INVALID_VALUE:
      return hipErrorInvalidValue;
    case CUDA_ERROR_OUT_OF_MEMORY:
      return hipErrorOutOfMemory;
    case CUDA_ERROR_INVALID_DEVICE:
      return hipErrorInvalidDevice;
    case CUDA_ERROR_INVALID_CONTEXT:
      return hipErrorInvalidContext;
    case CUDA_ERROR_ALREADY_MAPPED:
      return hipErrorAlreadyMapped;
    case CUDA_ERROR_INVALID_HANDLE:
      return hipErrorInvalidHandle;
    case CUDA_ERROR_NOT_FOUND:
      return hipErrorNotFound;
    case CUDA_ERROR_NOT_SUPPORTED:
    case CUDA_ERROR_NOT_PERMITTED:
      return hipErrorNotSupported;
    default:
      return hipErrorUnknown;
  }
}

CUdeviceptr dp(const void *p) { return reinterpret_cast<uintptr_t>(p); }
void *vp(CUdeviceptr p) { return reinterpret_cast<void *>(static_cast<uintptr_t>(p)); }
CUmemGenericAllocationHandle cu_handle(hipMemGenericAllocationHandle_t h) {
  return reinterpret_cast<uintptr_t>(h);
}
hipMemGenericAllocationHandle_t hip_handle(CUmemGenericAllocationHandle h) {
  return reinterpret_cast<hipMemGenericAllocationHandle_t>(static_cast<uintptr_t>(h));
}

CUmemLocationType cu_location(hipMemLocationType t) {
  return t == hipMemLocationTypeDevice ? CU_MEM_LOCATION_TYPE_DEVICE
                                       : CU_MEM_LOCATION_TYPE_INVALID;
}
CUmemAllocationHandleType cu_handle_type(hipMemAllocationHandleType t) {
  return t == hipMemHandleTypePosixFileDescriptor ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
                                                  : CU_MEM_HANDLE_TYPE_NONE;
}
CUmemAllocationProp cu_prop(const hipMemAllocationProp &p) {
  CUmemAllocationProp c{};
  c.type = p.type == hipMemAllocationTypePinned ? CU_MEM_ALLOCATION_TYPE_PINNED
                                                : CU_MEM_ALLOCATION_TYPE_INVALID;
  c.location.type = cu_location(p.location.type);
  c.location.id = p.location.id;
  c.requestedHandleTypes = cu_handle_type(p.requestedHandleType);
  return c;
}

}  // namespace

// ---- the runtime and its device ----------------------------------------------

FAKE_API hipError_t hipGetDeviceCount(int *n) {
  *n = 1;
  return hipSuccess;
}
FAKE_API const char *hipGetErrorName(hipError_t e) {
  return e == hipSuccess ? "hipSuccess" : "hipErrorFake";
}
FAKE_API const char *hipGetErrorString(hipError_t e) {
  return e == hipSuccess ? "no error" : "an error of the fake HIP runtime";
}
FAKE_API hipError_t hipRuntimeGetVersion(int *v) {
  const char *major = std::getenv("HURRAY_FAKE_HIP_MAJOR");
  *v = major == nullptr ? HIP_VERSION
                        : std::atoi(major) * 10000000 + HIP_VERSION_MINOR * 100000;
  return hipSuccess;
}
FAKE_API hipError_t hipGetDevice(int *d) {
  *d = current_device;
  return hipSuccess;
}
FAKE_API hipError_t hipSetDevice(int d) {
  if (d != 0) return hipErrorInvalidDevice;
  current_device = d;
  return hipSuccess;
}
FAKE_API hipError_t hipDeviceGetName(char *name, int len, hipDevice_t) {
  std::snprintf(name, static_cast<size_t>(len), "fake HIP device");
  return hipSuccess;
}
FAKE_API hipError_t hipDeviceGetAttribute(int *, hipDeviceAttribute_t, int) {
  return hipErrorInvalidValue;  // no attribute the plugin asks for is there
}
FAKE_API hipError_t hipDeviceTotalMem(size_t *bytes, hipDevice_t) {
  *bytes = size_t{1} << 30;
  return hipSuccess;
}
FAKE_API hipError_t hipDeviceCanAccessPeer(int *can, int, int) {
  *can = 0;
  return hipSuccess;
}
FAKE_API hipError_t hipDeviceSynchronize() { return to_hip(cuCtxSynchronize()); }

// ---- streams and events (fake_cuda.cpp) ---------------------------------------

FAKE_API hipError_t hipStreamCreateWithFlags(hipStream_t *s, unsigned int) {
  CUstream c = nullptr;
  const CUresult r = cuStreamCreate(&c, 0);
  *s = reinterpret_cast<hipStream_t>(c);
  return to_hip(r);
}
FAKE_API hipError_t hipStreamDestroy(hipStream_t s) {
  return to_hip(cuStreamDestroy(reinterpret_cast<CUstream>(s)));
}
FAKE_API hipError_t hipStreamSynchronize(hipStream_t s) {
  return to_hip(cuStreamSynchronize(reinterpret_cast<CUstream>(s)));
}
FAKE_API hipError_t hipStreamWaitEvent(hipStream_t s, hipEvent_t e, unsigned int) {
  return to_hip(cuStreamWaitEvent(reinterpret_cast<CUstream>(s), reinterpret_cast<CUevent>(e), 0));
}
FAKE_API hipError_t hipLaunchHostFunc(hipStream_t s, hipHostFn_t fn, void *user) {
  return to_hip(cuLaunchHostFunc(reinterpret_cast<CUstream>(s), fn, user));
}
FAKE_API hipError_t hipEventCreateWithFlags(hipEvent_t *e, unsigned) {
  CUevent c = nullptr;
  const CUresult r = cuEventCreate(&c, 0);
  *e = reinterpret_cast<hipEvent_t>(c);
  return to_hip(r);
}
FAKE_API hipError_t hipEventRecord(hipEvent_t e, hipStream_t s) {
  return to_hip(cuEventRecord(reinterpret_cast<CUevent>(e), reinterpret_cast<CUstream>(s)));
}
FAKE_API hipError_t hipEventSynchronize(hipEvent_t e) {
  return to_hip(cuEventSynchronize(reinterpret_cast<CUevent>(e)));
}
FAKE_API hipError_t hipEventDestroy(hipEvent_t e) {
  return to_hip(cuEventDestroy(reinterpret_cast<CUevent>(e)));
}

// ---- memory (fake_cuda_memory.cpp) --------------------------------------------

FAKE_API hipError_t hipMalloc(void **p, size_t n) {
  CUdeviceptr d = 0;
  const CUresult r = cuMemAlloc(&d, n);
  *p = vp(d);
  return to_hip(r);
}
FAKE_API hipError_t hipFree(void *p) { return to_hip(cuMemFree(dp(p))); }
FAKE_API hipError_t hipMemGetAddressRange(hipDeviceptr_t *base, size_t *size, hipDeviceptr_t p) {
  CUdeviceptr b = 0;
  const CUresult r = cuMemGetAddressRange(&b, size, dp(p));
  *base = vp(b);
  return to_hip(r);
}
FAKE_API hipError_t hipPointerGetAttributes(hipPointerAttribute_t *attr, const void *p) {
  size_t size = 0;
  CUdeviceptr base = 0;
  if (cuMemGetAddressRange(&base, &size, dp(p)) != CUDA_SUCCESS) return hipErrorInvalidValue;
  std::memset(attr, 0, sizeof *attr);
  attr->memoryType = hipMemoryTypeDevice;  // numbered as the header's major version says
  attr->device = 0;
  attr->devicePointer = const_cast<void *>(p);
  return hipSuccess;
}
// Copies run when what the stream holds has run.
FAKE_API hipError_t hipMemcpyAsync(void *dst, const void *src, size_t n, hipMemcpyKind kind,
                                   hipStream_t s) {
  const auto cs = reinterpret_cast<CUstream>(s);
  switch (kind) {
    case hipMemcpyHostToDevice:
      return to_hip(cuMemcpyHtoDAsync(dp(dst), src, n, cs));
    case hipMemcpyDeviceToHost:
      return to_hip(cuMemcpyDtoHAsync(dst, dp(src), n, cs));
    default:
      return hipErrorInvalidValue;
  }
}
// The tests' own synchronous copies (the plugin does not resolve it).
FAKE_API hipError_t hipMemcpy(void *dst, const void *src, size_t n, hipMemcpyKind kind) {
  switch (kind) {
    case hipMemcpyHostToDevice:
      return to_hip(cuMemcpyHtoD(dp(dst), src, n));
    case hipMemcpyDeviceToHost:
      return to_hip(cuMemcpyDtoH(dst, dp(src), n));
    default:
      return hipErrorInvalidValue;
  }
}
FAKE_API hipError_t hipIpcGetMemHandle(hipIpcMemHandle_t *h, void *p) {
  static_assert(sizeof(CUipcMemHandle) == sizeof(hipIpcMemHandle_t), "64 bytes each");
  CUipcMemHandle c;
  const CUresult r = cuIpcGetMemHandle(&c, dp(p));
  if (r == CUDA_SUCCESS) std::memcpy(h, &c, sizeof c);
  return to_hip(r);
}
FAKE_API hipError_t hipIpcOpenMemHandle(void **p, hipIpcMemHandle_t h, unsigned int) {
  CUipcMemHandle c;
  std::memcpy(&c, &h, sizeof c);
  CUdeviceptr d = 0;
  const CUresult r = cuIpcOpenMemHandle(&d, c, 0);
  *p = vp(d);
  return to_hip(r);
}
FAKE_API hipError_t hipIpcCloseMemHandle(void *p) { return to_hip(cuIpcCloseMemHandle(dp(p))); }

// ---- virtual memory management ------------------------------------------------

FAKE_API hipError_t hipMemGetAllocationGranularity(size_t *g, const hipMemAllocationProp *prop,
                                                   hipMemAllocationGranularity_flags) {
  if (prop == nullptr) return hipErrorInvalidValue;
  const CUmemAllocationProp c = cu_prop(*prop);
  const CUresult r = cuMemGetAllocationGranularity(g, &c, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  if (const char *forced = std::getenv("HURRAY_FAKE_HIP_GRANULARITY"); r == CUDA_SUCCESS && forced)
    *g = static_cast<size_t>(std::strtoull(forced, nullptr, 0));
  return to_hip(r);
}
FAKE_API hipError_t hipMemCreate(hipMemGenericAllocationHandle_t *h, size_t size,
                                 const hipMemAllocationProp *prop, unsigned long long) {
  if (prop == nullptr) return hipErrorInvalidValue;
  const CUmemAllocationProp c = cu_prop(*prop);
  CUmemGenericAllocationHandle ch = 0;
  const CUresult r = cuMemCreate(&ch, size, &c, 0);
  *h = hip_handle(ch);
  return to_hip(r);
}
FAKE_API hipError_t hipMemRelease(hipMemGenericAllocationHandle_t h) {
  return to_hip(cuMemRelease(cu_handle(h)));
}
FAKE_API hipError_t hipMemAddressReserve(void **p, size_t size, size_t align, void *addr,
                                         unsigned long long) {
  CUdeviceptr d = 0;
  const CUresult r = cuMemAddressReserve(&d, size, align, dp(addr), 0);
  *p = vp(d);
  return to_hip(r);
}
FAKE_API hipError_t hipMemAddressFree(void *p, size_t size) {
  return to_hip(cuMemAddressFree(dp(p), size));
}
FAKE_API hipError_t hipMemMap(void *p, size_t size, size_t offset,
                              hipMemGenericAllocationHandle_t h, unsigned long long) {
  return to_hip(cuMemMap(dp(p), size, offset, cu_handle(h), 0));
}
FAKE_API hipError_t hipMemUnmap(void *p, size_t size) { return to_hip(cuMemUnmap(dp(p), size)); }
FAKE_API hipError_t hipMemSetAccess(void *p, size_t size, const hipMemAccessDesc *desc,
                                    size_t count) {
  if (desc == nullptr || count != 1) return hipErrorInvalidValue;
  if (std::getenv("HURRAY_FAKE_HIP_NO_ACCESS") != nullptr) return hipErrorNotSupported;
  CUmemAccessDesc c{};
  c.location.type = cu_location(desc->location.type);
  c.location.id = desc->location.id;
  c.flags = desc->flags == hipMemAccessFlagsProtReadWrite ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE
            : desc->flags == hipMemAccessFlagsProtRead    ? CU_MEM_ACCESS_FLAGS_PROT_READ
                                                          : CU_MEM_ACCESS_FLAGS_PROT_NONE;
  return to_hip(cuMemSetAccess(dp(p), size, &c, 1));
}
FAKE_API hipError_t hipMemRetainAllocationHandle(hipMemGenericAllocationHandle_t *h, void *p) {
  CUmemGenericAllocationHandle c = 0;
  const CUresult r = cuMemRetainAllocationHandle(&c, p);
  *h = hip_handle(c);
  return to_hip(r);
}
FAKE_API hipError_t hipMemExportToShareableHandle(void *out, hipMemGenericAllocationHandle_t h,
                                                  hipMemAllocationHandleType type,
                                                  unsigned long long) {
  return to_hip(cuMemExportToShareableHandle(out, cu_handle(h), cu_handle_type(type), 0));
}
// The descriptor comes as its value in the pointer, as the plugin passes it.
FAKE_API hipError_t hipMemImportFromShareableHandle(hipMemGenericAllocationHandle_t *h, void *os,
                                                    hipMemAllocationHandleType type) {
  CUmemGenericAllocationHandle c = 0;
  const CUresult r = cuMemImportFromShareableHandle(&c, os, cu_handle_type(type));
  *h = hip_handle(c);
  return to_hip(r);
}

// What the tests do not use.
FAKE_API hipError_t hipDeviceGetUuid(hipUUID *, hipDevice_t) { return hipErrorNotSupported; }
FAKE_API hipError_t hipDeviceEnablePeerAccess(int, unsigned int) { return hipErrorNotSupported; }
FAKE_API hipError_t hipHostMalloc(void **, size_t, unsigned int) { return hipErrorNotSupported; }
FAKE_API hipError_t hipHostFree(void *) { return hipErrorNotSupported; }
FAKE_API hipError_t hipHostGetDevicePointer(void **, void *, unsigned int) {
  return hipErrorNotSupported;
}
FAKE_API hipError_t hipMallocManaged(void **, size_t, unsigned int) { return hipErrorNotSupported; }
FAKE_API hipError_t hipIpcGetEventHandle(hipIpcEventHandle_t *, hipEvent_t) {
  return hipErrorNotSupported;
}
FAKE_API hipError_t hipIpcOpenEventHandle(hipEvent_t *, hipIpcEventHandle_t) {
  return hipErrorNotSupported;
}
