// The CUDA side of virtual memory management (runtime.h declares it):
// physical allocations made with cuMemCreate that can be exported as POSIX
// file descriptors (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), mapped into
// a reserved range with cuMemMap and opened to the device with
// cuMemSetAccess. gpu-stream/vmm.cpp decides when they are used.
#include "gpu-stream/driver.h"

namespace hurray::gpu_stream::rt {

namespace {

CUmemAllocationProp device_prop(const DeviceRef &d) noexcept {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = d.dev;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return prop;
}

bool has_calls(const Api &cu) noexcept {
  return cu.cuMemCreate && cu.cuMemRelease && cu.cuMemAddressReserve && cu.cuMemAddressFree &&
         cu.cuMemMap && cu.cuMemUnmap && cu.cuMemSetAccess && cu.cuMemGetAllocationGranularity &&
         cu.cuMemRetainAllocationHandle && cu.cuMemExportToShareableHandle &&
         cu.cuMemImportFromShareableHandle;
}

}  // namespace

bool vmm_probe(const Api &cu, const DeviceRef &d, uint64_t *granularity) noexcept {
  if (!has_calls(cu)) return false;
  int vmm = 0, fd = 0;
  if (cu.cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
                              d.dev) != CUDA_SUCCESS ||
      cu.cuDeviceGetAttribute(&fd, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
                              d.dev) != CUDA_SUCCESS ||
      vmm != 1 || fd != 1)
    return false;
  const CUmemAllocationProp prop = device_prop(d);
  size_t g = 0;
  if (cu.cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) !=
          CUDA_SUCCESS ||
      g == 0 || (g & (g - 1)) != 0)
    return false;
  *granularity = g;
  return true;
}

Result vmm_create(const Api &cu, const DeviceRef &d, uint64_t size, uint64_t *handle) noexcept {
  const CUmemAllocationProp prop = device_prop(d);
  CUmemGenericAllocationHandle h = 0;
  const CUresult r = cu.cuMemCreate(&h, static_cast<size_t>(size), &prop, 0);
  *handle = r == CUDA_SUCCESS ? static_cast<uint64_t>(h) : 0;
  return r;
}

Result vmm_map(const Api &cu, const DeviceRef &d, uint64_t handle, uint64_t size, uint64_t align,
               uintptr_t *base, const char **function) noexcept {
  CUdeviceptr p = 0;
  *function = "cuMemAddressReserve";
  CUresult r = cu.cuMemAddressReserve(&p, static_cast<size_t>(size), static_cast<size_t>(align),
                                      0, 0);
  if (r != CUDA_SUCCESS) return r;
  *function = "cuMemMap";
  r = cu.cuMemMap(p, static_cast<size_t>(size), 0, static_cast<CUmemGenericAllocationHandle>(handle),
                  0);
  if (r == CUDA_SUCCESS) {
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = d.dev;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    *function = "cuMemSetAccess";
    r = cu.cuMemSetAccess(p, static_cast<size_t>(size), &access, 1);
    if (r != CUDA_SUCCESS) cu.cuMemUnmap(p, static_cast<size_t>(size));
  }
  if (r != CUDA_SUCCESS) {
    cu.cuMemAddressFree(p, static_cast<size_t>(size));
    return r;
  }
  *base = static_cast<uintptr_t>(p);
  return CUDA_SUCCESS;
}

void vmm_unmap(const Api &cu, uintptr_t base, uint64_t size) noexcept {
  cu.cuMemUnmap(dptr(base), static_cast<size_t>(size));
  cu.cuMemAddressFree(dptr(base), static_cast<size_t>(size));
}

void vmm_release(const Api &cu, uint64_t handle) noexcept {
  cu.cuMemRelease(static_cast<CUmemGenericAllocationHandle>(handle));
}

Result vmm_retain(const Api &cu, uintptr_t p, uint64_t *handle) noexcept {
  if (cu.cuMemRetainAllocationHandle == nullptr) return CUDA_ERROR_NOT_SUPPORTED;
  CUmemGenericAllocationHandle h = 0;
  const CUresult r = cu.cuMemRetainAllocationHandle(&h, reinterpret_cast<void *>(p));
  *handle = r == CUDA_SUCCESS ? static_cast<uint64_t>(h) : 0;
  return r;
}

Result vmm_export(const Api &cu, uint64_t handle, int *fd) noexcept {
  int out = -1;
  const CUresult r =
      cu.cuMemExportToShareableHandle(&out, static_cast<CUmemGenericAllocationHandle>(handle),
                                      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  *fd = r == CUDA_SUCCESS ? out : -1;
  return r;
}

Result vmm_import(const Api &cu, int fd, uint64_t *handle) noexcept {
  CUmemGenericAllocationHandle h = 0;
  const CUresult r = cu.cuMemImportFromShareableHandle(
      &h, reinterpret_cast<void *>(static_cast<intptr_t>(fd)),
      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  *handle = r == CUDA_SUCCESS ? static_cast<uint64_t>(h) : 0;
  return r;
}

}  // namespace hurray::gpu_stream::rt
