// The runtime side of virtual memory management (runtime_vmm.h), written
// once for CUDA and HIP: physical allocations made with cuMemCreate /
// hipMemCreate that can be exported as POSIX file descriptors, mapped into a
// reserved range and opened to the device read-write. The two runtimes'
// calls have the same shape; the table below spells them. Whether a device
// can (vmm_device_can) is each runtime's own: cuda/vmm.cpp, hip/vmm.cpp.
// gpu-stream/vmm.cpp decides when they are used.
#include <bit>
#include <cstddef>
#include <cstdint>

#include "runtime.h"  // the plugin's own: src/backends/cuda or src/backends/hip
#include "runtime_vmm.h"

namespace hurray::gpu_stream::rt {

namespace {

// clang-format off
//                        CUDA                                        HIP
using Handle =            HURRAY_GPU_PICK(CUmemGenericAllocationHandle, hipMemGenericAllocationHandle_t);
using Address =           HURRAY_GPU_PICK(CUdeviceptr,                  void *);
using Prop =              HURRAY_GPU_PICK(CUmemAllocationProp,          hipMemAllocationProp);
using AccessDesc =        HURRAY_GPU_PICK(CUmemAccessDesc,              hipMemAccessDesc);
constexpr auto kPinned =  HURRAY_GPU_PICK(CU_MEM_ALLOCATION_TYPE_PINNED, hipMemAllocationTypePinned);
constexpr auto kOnDevice = HURRAY_GPU_PICK(CU_MEM_LOCATION_TYPE_DEVICE, hipMemLocationTypeDevice);
constexpr auto kFdType =  HURRAY_GPU_PICK(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, hipMemHandleTypePosixFileDescriptor);
constexpr auto kReadWrite = HURRAY_GPU_PICK(CU_MEM_ACCESS_FLAGS_PROT_READWRITE, hipMemAccessFlagsProtReadWrite);
constexpr auto kMinimum = HURRAY_GPU_PICK(CU_MEM_ALLOC_GRANULARITY_MINIMUM, hipMemAllocationGranularityMinimum);
constexpr Result kNotSupported = HURRAY_GPU_PICK(CUDA_ERROR_NOT_SUPPORTED, hipErrorNotSupported);
constexpr Result kInvalidValue = HURRAY_GPU_PICK(CUDA_ERROR_INVALID_VALUE, hipErrorInvalidValue);
// The member of Prop that asks for handle types (one of them in HIP's
// spelling), and the device's id in a memory location.
constexpr auto kHandleTypes = HURRAY_GPU_PICK(&Prop::requestedHandleTypes, &Prop::requestedHandleType);
constexpr auto kDeviceId =    HURRAY_GPU_PICK(&DeviceRef::dev,            &DeviceRef::ordinal);
// A HIP retain or import that answers success without a handle is taken as
// hipErrorInvalidValue; CUDA's answers are taken as they are.
constexpr bool kNoHandleIsError = HURRAY_GPU_PICK(false, true);

constexpr auto kCreate =      HURRAY_GPU_PICK(&Api::cuMemCreate,                    &Api::hipMemCreate);
constexpr auto kRelease =     HURRAY_GPU_PICK(&Api::cuMemRelease,                   &Api::hipMemRelease);
constexpr auto kReserve =     HURRAY_GPU_PICK(&Api::cuMemAddressReserve,            &Api::hipMemAddressReserve);
constexpr auto kAddressFree = HURRAY_GPU_PICK(&Api::cuMemAddressFree,               &Api::hipMemAddressFree);
constexpr auto kMap =         HURRAY_GPU_PICK(&Api::cuMemMap,                       &Api::hipMemMap);
constexpr auto kUnmap =       HURRAY_GPU_PICK(&Api::cuMemUnmap,                     &Api::hipMemUnmap);
constexpr auto kSetAccess =   HURRAY_GPU_PICK(&Api::cuMemSetAccess,                 &Api::hipMemSetAccess);
constexpr auto kGranularity = HURRAY_GPU_PICK(&Api::cuMemGetAllocationGranularity,  &Api::hipMemGetAllocationGranularity);
constexpr auto kRetain =      HURRAY_GPU_PICK(&Api::cuMemRetainAllocationHandle,    &Api::hipMemRetainAllocationHandle);
constexpr auto kExport =      HURRAY_GPU_PICK(&Api::cuMemExportToShareableHandle,   &Api::hipMemExportToShareableHandle);
constexpr auto kImport =      HURRAY_GPU_PICK(&Api::cuMemImportFromShareableHandle, &Api::hipMemImportFromShareableHandle);
constexpr const char *kReserveName =   HURRAY_GPU_PICK("cuMemAddressReserve", "hipMemAddressReserve");
constexpr const char *kMapName =       HURRAY_GPU_PICK("cuMemMap",            "hipMemMap");
constexpr const char *kSetAccessName = HURRAY_GPU_PICK("cuMemSetAccess",      "hipMemSetAccess");
// clang-format on

// Handles and addresses are integers in CUDA, pointers in HIP, 64 bits
// either way; the plugin carries both as integers.
static_assert(sizeof(Handle) == sizeof(uint64_t) && sizeof(Address) == sizeof(uint64_t));

Prop device_prop(const DeviceRef &d) noexcept {
  Prop prop{};
  prop.type = kPinned;
  prop.location.type = kOnDevice;
  prop.location.id = d.*kDeviceId;
  prop.*kHandleTypes = kFdType;
  return prop;
}

template <auto... Calls>
bool has_all(const Api &api) noexcept {
  return ((api.*Calls != nullptr) && ...);
}
bool has_calls(const Api &api) noexcept {
  return has_all<kCreate, kRelease, kReserve, kAddressFree, kMap, kUnmap, kSetAccess, kGranularity,
                 kRetain, kExport, kImport>(api);
}

// *handle for what a retain or import answered.
Result take_handle(Result r, Handle h, uint64_t *handle) noexcept {
  *handle = r == kSuccess ? std::bit_cast<uint64_t>(h) : 0;
  return kNoHandleIsError && r == kSuccess && h == Handle{} ? kInvalidValue : r;
}

}  // namespace

bool vmm_probe(const Api &api, const DeviceRef &d, uint64_t *granularity) noexcept {
  if (!has_calls(api) || !vmm_device_can(api, d)) return false;
  const Prop prop = device_prop(d);
  size_t g = 0;
  if ((api.*kGranularity)(&g, &prop, kMinimum) != kSuccess || g == 0 || (g & (g - 1)) != 0)
    return false;
  *granularity = g;
  return true;
}

Result vmm_create(const Api &api, const DeviceRef &d, uint64_t size, uint64_t *handle) noexcept {
  const Prop prop = device_prop(d);
  Handle h{};
  const Result r = (api.*kCreate)(&h, static_cast<size_t>(size), &prop, 0);
  *handle = r == kSuccess ? std::bit_cast<uint64_t>(h) : 0;
  return r;
}

Result vmm_map(const Api &api, const DeviceRef &d, uint64_t handle, uint64_t size, uint64_t align,
               uintptr_t *base, const char **function) noexcept {
  Address p{};
  const auto n = static_cast<size_t>(size);
  *function = kReserveName;
  Result r = (api.*kReserve)(&p, n, static_cast<size_t>(align), Address{}, 0);
  if (r != kSuccess) return r;
  *function = kMapName;
  r = (api.*kMap)(p, n, 0, std::bit_cast<Handle>(handle), 0);
  if (r == kSuccess) {
    AccessDesc access{};
    access.location.type = kOnDevice;
    access.location.id = d.*kDeviceId;
    access.flags = kReadWrite;
    *function = kSetAccessName;
    r = (api.*kSetAccess)(p, n, &access, 1);
    if (r != kSuccess) (void)(api.*kUnmap)(p, n);
  }
  if (r != kSuccess) {
    (void)(api.*kAddressFree)(p, n);
    return r;
  }
  *base = std::bit_cast<uintptr_t>(p);
  return kSuccess;
}

void vmm_unmap(const Api &api, uintptr_t base, uint64_t size) noexcept {
  const auto n = static_cast<size_t>(size);
  (void)(api.*kUnmap)(std::bit_cast<Address>(base), n);
  (void)(api.*kAddressFree)(std::bit_cast<Address>(base), n);
}

void vmm_release(const Api &api, uint64_t handle) noexcept {
  (void)(api.*kRelease)(std::bit_cast<Handle>(handle));
}

Result vmm_retain(const Api &api, uintptr_t p, uint64_t *handle) noexcept {
  if (api.*kRetain == nullptr) return kNotSupported;
  Handle h{};
  const Result r = (api.*kRetain)(&h, reinterpret_cast<void *>(p));
  return take_handle(r, h, handle);
}

Result vmm_export(const Api &api, uint64_t handle, int *fd) noexcept {
  int out = -1;
  const Result r = (api.*kExport)(&out, std::bit_cast<Handle>(handle), kFdType, 0);
  *fd = r == kSuccess ? out : -1;
  return r;
}

Result vmm_import(const Api &api, int fd, uint64_t *handle) noexcept {
  Handle h{};
  const Result r = (api.*kImport)(&h, reinterpret_cast<void *>(static_cast<intptr_t>(fd)), kFdType);
  return take_handle(r, h, handle);
}

}  // namespace hurray::gpu_stream::rt
