// The HIP side of virtual memory management (runtime.h declares it), the
// mirror of src/backends/cuda/vmm.cpp: physical allocations made with
// hipMemCreate, exportable as POSIX file descriptors
// (hipMemHandleTypePosixFileDescriptor), mapped into a reserved range with
// hipMemMap and opened to the device with hipMemSetAccess.
// gpu-stream/vmm.cpp decides when they are used. hipMemAllocationProp is
// laid out as the header the plugin is built against says (HIP 5.2 on
// Debian); HIP 6 reordered it, so VMM is used only with a runtime of the
// header's major version. Never run on an AMD GPU yet (docs/backends/hip.md).
#include "gpu-stream/driver.h"

namespace hurray::gpu_stream::rt {

namespace {

hipMemAllocationProp device_prop(const DeviceRef &d) noexcept {
  hipMemAllocationProp prop{};
  prop.type = hipMemAllocationTypePinned;
  prop.location.type = hipMemLocationTypeDevice;
  prop.location.id = d.ordinal;
  prop.requestedHandleType = hipMemHandleTypePosixFileDescriptor;
  return prop;
}

bool has_calls(const Api &hip) noexcept {
  return hip.hipMemCreate && hip.hipMemRelease && hip.hipMemAddressReserve &&
         hip.hipMemAddressFree && hip.hipMemMap && hip.hipMemUnmap && hip.hipMemSetAccess &&
         hip.hipMemGetAllocationGranularity && hip.hipMemRetainAllocationHandle &&
         hip.hipMemExportToShareableHandle && hip.hipMemImportFromShareableHandle;
}

hipMemGenericAllocationHandle_t to_handle(uint64_t h) noexcept {
  return reinterpret_cast<hipMemGenericAllocationHandle_t>(static_cast<uintptr_t>(h));
}
uint64_t from_handle(hipMemGenericAllocationHandle_t h) noexcept {
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(h));
}

}  // namespace

bool vmm_probe(const Api &hip, const DeviceRef &d, uint64_t *granularity) noexcept {
  int version = 0;
  if (!has_calls(hip) || hip.hipRuntimeGetVersion(&version) != hipSuccess ||
      version_major(version) != HIP_VERSION_MAJOR)
    return false;
  const hipMemAllocationProp prop = device_prop(d);
  size_t g = 0;
  if (hip.hipMemGetAllocationGranularity(&g, &prop, hipMemAllocationGranularityMinimum) !=
          hipSuccess ||
      g == 0 || (g & (g - 1)) != 0)
    return false;
  *granularity = g;
  return true;
}

Result vmm_create(const Api &hip, const DeviceRef &d, uint64_t size, uint64_t *handle) noexcept {
  const hipMemAllocationProp prop = device_prop(d);
  hipMemGenericAllocationHandle_t h = nullptr;
  const hipError_t r = hip.hipMemCreate(&h, static_cast<size_t>(size), &prop, 0);
  *handle = r == hipSuccess ? from_handle(h) : 0;
  return r;
}

Result vmm_map(const Api &hip, const DeviceRef &d, uint64_t handle, uint64_t size, uint64_t align,
               uintptr_t *base, const char **function) noexcept {
  void *p = nullptr;
  const auto n = static_cast<size_t>(size);
  *function = "hipMemAddressReserve";
  hipError_t r = hip.hipMemAddressReserve(&p, n, static_cast<size_t>(align), nullptr, 0);
  if (r != hipSuccess) return r;
  *function = "hipMemMap";
  r = hip.hipMemMap(p, n, 0, to_handle(handle), 0);
  if (r == hipSuccess) {
    hipMemAccessDesc access{};
    access.location.type = hipMemLocationTypeDevice;
    access.location.id = d.ordinal;
    access.flags = hipMemAccessFlagsProtReadWrite;
    *function = "hipMemSetAccess";
    r = hip.hipMemSetAccess(p, n, &access, 1);
    if (r != hipSuccess) (void)hip.hipMemUnmap(p, n);
  }
  if (r != hipSuccess) {
    (void)hip.hipMemAddressFree(p, n);
    return r;
  }
  *base = reinterpret_cast<uintptr_t>(p);
  return hipSuccess;
}

void vmm_unmap(const Api &hip, uintptr_t base, uint64_t size) noexcept {
  (void)hip.hipMemUnmap(vp(base), static_cast<size_t>(size));
  (void)hip.hipMemAddressFree(vp(base), static_cast<size_t>(size));
}

void vmm_release(const Api &hip, uint64_t handle) noexcept {
  (void)hip.hipMemRelease(to_handle(handle));
}

Result vmm_retain(const Api &hip, uintptr_t p, uint64_t *handle) noexcept {
  if (hip.hipMemRetainAllocationHandle == nullptr) return hipErrorNotSupported;
  hipMemGenericAllocationHandle_t h = nullptr;
  const hipError_t r = hip.hipMemRetainAllocationHandle(&h, vp(p));
  *handle = r == hipSuccess ? from_handle(h) : 0;
  return r == hipSuccess && h == nullptr ? hipErrorInvalidValue : r;
}

Result vmm_export(const Api &hip, uint64_t handle, int *fd) noexcept {
  int out = -1;
  const hipError_t r = hip.hipMemExportToShareableHandle(
      &out, to_handle(handle), hipMemHandleTypePosixFileDescriptor, 0);
  *fd = r == hipSuccess ? out : -1;
  return r;
}

Result vmm_import(const Api &hip, int fd, uint64_t *handle) noexcept {
  hipMemGenericAllocationHandle_t h = nullptr;
  const hipError_t r = hip.hipMemImportFromShareableHandle(
      &h, reinterpret_cast<void *>(static_cast<intptr_t>(fd)), hipMemHandleTypePosixFileDescriptor);
  *handle = r == hipSuccess ? from_handle(h) : 0;
  return r == hipSuccess && h == nullptr ? hipErrorInvalidValue : r;
}

}  // namespace hurray::gpu_stream::rt
