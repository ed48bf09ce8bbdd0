// The runtime as the IPC tests over a fake (cuda_fake_ipc_process_test.cpp,
// cuda_fake_ipc_hostile_test.cpp) and their consumer (cuda_fake_ipc_peer.cpp)
// use it themselves, for the plugin each build is for: the CUDA driver, or
// with HURRAY_IPC_TEST_HIP defined the HIP runtime (the same files, built
// again by tests/backends/hip as the "hip: ..." tests). The fake
// (fake_cuda.cpp, fake_cuda_memory.cpp; HIP: tests/backends/hip/fake_hip.cpp
// over them), or with the vendor's kRealEnv=1 the machine's library
// (tests/gpu/cuda-check.sh, part "ipc-wrapped-vmm"). Device memory is read
// and written with synchronous copies on device 0 (CUDA: in its primary
// context); the fake's counters are there only with the fake.
#pragma once

#include <dlfcn.h>
#include <hurray.h>
#include <hurray_ipc.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#if defined(HURRAY_IPC_TEST_HIP)
#include <hip/hip_runtime_api.h>
#define GPU_IPC_PICK(cuda, hip) hip
#else
#include <cuda.h>
#define GPU_IPC_PICK(cuda, hip) cuda
#endif

// The tests' names: "cuda (stand-in: fake driver): ...", "hip (stand-in:
// fake runtime): ...".
#define FAKE(text) \
  GPU_IPC_PICK("cuda (stand-in: fake driver): ", "hip (stand-in: fake runtime): ") text

namespace cuda_ipc_test {

constexpr uint32_t fourcc(char a, char b, char c, char d) {
  return static_cast<uint32_t>(a) | static_cast<uint32_t>(b) << 8 |
         static_cast<uint32_t>(c) << 16 | static_cast<uint32_t>(d) << 24;
}

// The plugin under test, as libhurray and its environment name it.
constexpr uint8_t kTag = GPU_IPC_PICK(HURRAY_DEVICE_CUDA, HURRAY_DEVICE_ROCM);
constexpr const char *kBackends = GPU_IPC_PICK("cpu,cuda", "cpu,hip");
constexpr const char *kLibraryEnv = GPU_IPC_PICK("HURRAY_CUDA_LIBRARY", "HURRAY_HIP_LIBRARY");
constexpr const char *kRealEnv = GPU_IPC_PICK("HURRAY_CUDA_IPC_REAL", "HURRAY_HIP_IPC_REAL");
constexpr const char *kRealLibrary = GPU_IPC_PICK("libcuda.so.1", "libamdhip64.so");
// SHAREABLE STANDARD memory by VMM: CUDA's default (the variable unset),
// HIP's only where it says "vmm" (docs/backends/hip.md).
constexpr const char *kShareableEnv =
    GPU_IPC_PICK("HURRAY_CUDA_SHAREABLE", "HURRAY_HIP_SHAREABLE");
constexpr const char *kShareableVmm = GPU_IPC_PICK(nullptr, "vmm");
// The plugin's handle kinds (gpu-stream/names.h, the plugin's runtime.h),
// and another backend's VMM kind.
constexpr uint32_t kMemoryKind =
    GPU_IPC_PICK(fourcc('C', 'U', 'M', '1'), fourcc('H', 'P', 'M', '1'));
constexpr uint32_t kVmmKind =
    GPU_IPC_PICK(fourcc('C', 'U', 'V', '1'), fourcc('H', 'I', 'V', '1'));
// Another backend's VMM kind (a HANDOFF of it goes to the wrong plugin).
constexpr uint32_t kOtherVmmKind =
    GPU_IPC_PICK(fourcc('H', 'P', 'V', '1'), fourcc('C', 'U', 'V', '1'));
constexpr const char *kVmmImport =
    GPU_IPC_PICK("cuMemImportFromShareableHandle", "hipMemImportFromShareableHandle");
constexpr const char *kVmmMap = GPU_IPC_PICK("cuMemMap", "hipMemMap");
constexpr const char *kName = GPU_IPC_PICK("cuda", "hip");

// The runtime's types where CUDA and HIP spell them apart.
using Result = GPU_IPC_PICK(CUresult, hipError_t);
using Ptr = GPU_IPC_PICK(CUdeviceptr, void *);
using VmmHandle = GPU_IPC_PICK(CUmemGenericAllocationHandle, hipMemGenericAllocationHandle_t);
using Prop = GPU_IPC_PICK(CUmemAllocationProp, hipMemAllocationProp);
using Access = GPU_IPC_PICK(CUmemAccessDesc, hipMemAccessDesc);
using IpcHandle = GPU_IPC_PICK(CUipcMemHandle, hipIpcMemHandle_t);
constexpr Result kOk = GPU_IPC_PICK(CUDA_SUCCESS, hipSuccess);
constexpr auto kFdType =
    GPU_IPC_PICK(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, hipMemHandleTypePosixFileDescriptor);

// A channel's options: the one device is the plugin's.
inline hurray_ipc_options channel_options() {
  static const uint8_t tags[] = {kTag};
  hurray_ipc_options o = HURRAY_IPC_OPTIONS_INIT;
  o.device_count = 1;
  o.device_tags = tags;
  return o;
}

// The environment of a plugin that makes SHAREABLE memory by VMM.
inline void shareable_by_vmm() {
#if defined(HURRAY_IPC_TEST_HIP)
  setenv(kShareableEnv, kShareableVmm, 1);
#else
  unsetenv(kShareableEnv);
#endif
}

inline bool real_device() {
  const char *v = std::getenv(kRealEnv);
  return v != nullptr && std::strcmp(v, "1") == 0;
}

// What the fake counts (hurray_fake_cuda_memory_counts), in its order.
enum { kOpens, kCloses, kCreates, kImports, kMaps, kUnmaps, kVmmLive, kBad };

inline Ptr dev(const void *p) {
  static_assert(sizeof(Ptr) == sizeof p, "a device address is a pointer's size");
  Ptr d;
  std::memcpy(&d, &p, sizeof p);
  return d;
}
inline void *host(Ptr d) {
  void *p;
  std::memcpy(&p, &d, sizeof p);
  return p;
}

// A VMM allocation the test makes itself: created, reserved, mapped and
// opened to device 0 read-write.
struct VmmMemory {
  VmmHandle handle{};
  Ptr base{};
  size_t size = 0;
};

struct Driver {
  void *lib = nullptr;
  Result (*alloc_fn)(Ptr *, size_t) = nullptr;
  Result (*free_fn)(Ptr) = nullptr;
#if defined(HURRAY_IPC_TEST_HIP)
  Result (*copy)(void *, const void *, size_t, hipMemcpyKind) = nullptr;
#else
  CUcontext ctx = nullptr;
  Result (*dtoh)(void *, Ptr, size_t) = nullptr;
  Result (*htod)(Ptr, const void *, size_t) = nullptr;
#endif
  void (*counts_fn)(int *) = nullptr;  // the fake only
  void (*live_fn)(int *) = nullptr;

  // fake_path: the fake's, unless the environment asks for the real
  // runtime. False when something is missing (why in *why).
  bool open(const char *fake_path, const char **why) {
    lib = dlopen(real_device() ? kRealLibrary : fake_path, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return *why = "dlopen of the runtime failed", false;
    alloc_fn = sym<decltype(alloc_fn)>(GPU_IPC_PICK("cuMemAlloc_v2", "hipMalloc"));
    free_fn = sym<decltype(free_fn)>(GPU_IPC_PICK("cuMemFree_v2", "hipFree"));
    counts_fn = sym<decltype(counts_fn)>("hurray_fake_cuda_memory_counts");
    live_fn = sym<decltype(live_fn)>("hurray_fake_cuda_memory_live");
    if (!alloc_fn || !free_fn) return *why = "a runtime function is missing", false;
#if defined(HURRAY_IPC_TEST_HIP)
    copy = sym<decltype(copy)>("hipMemcpy");
    auto set = sym<Result (*)(int)>("hipSetDevice");
    if (!copy || !set) return *why = "a runtime function is missing", false;
    if (set(0) != kOk) return *why = "no device 0", false;
#else
    auto init = sym<CUresult (*)(unsigned)>("cuInit");
    auto get = sym<CUresult (*)(CUdevice *, int)>("cuDeviceGet");
    auto retain = sym<CUresult (*)(CUcontext *, CUdevice)>("cuDevicePrimaryCtxRetain");
    auto push = sym<CUresult (*)(CUcontext)>("cuCtxPushCurrent_v2");
    dtoh = sym<decltype(dtoh)>("cuMemcpyDtoH_v2");
    htod = sym<decltype(htod)>("cuMemcpyHtoD_v2");
    if (!init || !get || !retain || !push || !dtoh || !htod)
      return *why = "a driver function is missing", false;
    CUdevice d = 0;
    if (init(0) != CUDA_SUCCESS || get(&d, 0) != CUDA_SUCCESS ||
        retain(&ctx, d) != CUDA_SUCCESS || push(ctx) != CUDA_SUCCESS)
      return *why = "no device 0 or its primary context", false;
#endif
    return true;
  }
  template <class F>
  F sym(const char *name) const {
    return reinterpret_cast<F>(dlsym(lib, name));
  }
  bool fake() const { return counts_fn != nullptr; }
  std::vector<int> counts() const {
    std::vector<int> c(8, 0);
    if (counts_fn) counts_fn(c.data());
    return c;
  }
  // cuMemAlloc / hipMalloc, cuMemFree / hipFree.
  void *mem_alloc(size_t n) const {
    Ptr p{};
    return alloc_fn(&p, n) == kOk ? host(p) : nullptr;
  }
  bool mem_free(void *p) const { return free_fn(dev(p)) == kOk; }
  std::vector<unsigned char> read(const void *p, size_t n) const {
    std::vector<unsigned char> out(n);
    if (GPU_IPC_PICK(dtoh(out.data(), dev(p), n), copy(out.data(), p, n, hipMemcpyDeviceToHost)) !=
        kOk)
      out.clear();
    return out;
  }
  bool fill(void *p, unsigned char v, size_t n) const {
    const std::vector<unsigned char> bytes(n, v);
    return GPU_IPC_PICK(htod(dev(p), bytes.data(), n),
                        copy(p, bytes.data(), n, hipMemcpyHostToDevice)) == kOk;
  }
  unsigned char at(const void *p) const {
    const std::vector<unsigned char> b = read(p, 1);
    return b.empty() ? 0 : b[0];
  }
  // The legacy IPC handle (cuIpcGetMemHandle, hipIpcGetMemHandle) of an
  // allocation's base.
  bool ipc_handle(void *base, IpcHandle *h) const {
    auto get = sym<Result (*)(IpcHandle *, Ptr)>(
        GPU_IPC_PICK("cuIpcGetMemHandle", "hipIpcGetMemHandle"));
    return get != nullptr && get(h, dev(base)) == kOk;
  }

  // Device 0's physical memory, exportable as a POSIX file descriptor.
  static Prop vmm_prop() {
    Prop prop{};
    prop.type = GPU_IPC_PICK(CU_MEM_ALLOCATION_TYPE_PINNED, hipMemAllocationTypePinned);
    prop.location.type = GPU_IPC_PICK(CU_MEM_LOCATION_TYPE_DEVICE, hipMemLocationTypeDevice);
    prop.GPU_IPC_PICK(requestedHandleTypes, requestedHandleType) = kFdType;
    return prop;
  }
  // A new VMM allocation of `size` bytes (cuMemCreate, hipMemCreate)
  // exported as a POSIX file descriptor, or -1; the allocation lives while
  // the descriptor does.
  int vmm_descriptor(size_t size) const {
    auto create = sym<Result (*)(VmmHandle *, size_t, const Prop *, unsigned long long)>(
        GPU_IPC_PICK("cuMemCreate", "hipMemCreate"));
    auto export_fd = sym<Result (*)(void *, VmmHandle, decltype(kFdType), unsigned long long)>(
        GPU_IPC_PICK("cuMemExportToShareableHandle", "hipMemExportToShareableHandle"));
    auto release = sym<Result (*)(VmmHandle)>(GPU_IPC_PICK("cuMemRelease", "hipMemRelease"));
    const Prop prop = vmm_prop();
    VmmHandle h{};
    int fd = -1;
    if (!create || !export_fd || !release || create(&h, size, &prop, 0) != kOk) return -1;
    if (export_fd(&fd, h, kFdType, 0) != kOk) fd = -1;
    (void)release(h);
    return fd;
  }

  // A VMM allocation of the granularity's size, exportable as a POSIX file
  // descriptor, mapped read-write (cuMemCreate ... cuMemSetAccess, the hip
  // twins); false if a call fails.
  bool vmm_make(VmmMemory *m) const {
    auto granularity = sym<Result (*)(size_t *, const Prop *, GPU_IPC_PICK(
                                          CUmemAllocationGranularity_flags,
                                          hipMemAllocationGranularity_flags))>(
        GPU_IPC_PICK("cuMemGetAllocationGranularity", "hipMemGetAllocationGranularity"));
    auto create = sym<Result (*)(VmmHandle *, size_t, const Prop *, unsigned long long)>(
        GPU_IPC_PICK("cuMemCreate", "hipMemCreate"));
    auto reserve = sym<Result (*)(Ptr *, size_t, size_t, Ptr, unsigned long long)>(
        GPU_IPC_PICK("cuMemAddressReserve", "hipMemAddressReserve"));
    auto map = sym<Result (*)(Ptr, size_t, size_t, VmmHandle, unsigned long long)>(
        GPU_IPC_PICK("cuMemMap", "hipMemMap"));
    auto access = sym<Result (*)(Ptr, size_t, const Access *, size_t)>(
        GPU_IPC_PICK("cuMemSetAccess", "hipMemSetAccess"));
    if (!granularity || !create || !reserve || !map || !access) return false;
    const Prop prop = vmm_prop();
    Access a{};
    a.location.type = prop.location.type;
    a.flags = GPU_IPC_PICK(CU_MEM_ACCESS_FLAGS_PROT_READWRITE, hipMemAccessFlagsProtReadWrite);
    return granularity(&m->size, &prop,
                       GPU_IPC_PICK(CU_MEM_ALLOC_GRANULARITY_MINIMUM,
                                    hipMemAllocationGranularityMinimum)) == kOk &&
           create(&m->handle, m->size, &prop, 0) == kOk &&
           reserve(&m->base, m->size, 0, Ptr{}, 0) == kOk &&
           map(m->base, m->size, 0, m->handle, 0) == kOk &&
           access(m->base, m->size, &a, 1) == kOk;
  }
  // Unmap, release and free what vmm_make made; false if a call fails.
  bool vmm_free(const VmmMemory &m) const {
    auto unmap = sym<Result (*)(Ptr, size_t)>(GPU_IPC_PICK("cuMemUnmap", "hipMemUnmap"));
    auto release = sym<Result (*)(VmmHandle)>(GPU_IPC_PICK("cuMemRelease", "hipMemRelease"));
    auto address_free =
        sym<Result (*)(Ptr, size_t)>(GPU_IPC_PICK("cuMemAddressFree", "hipMemAddressFree"));
    return unmap && release && address_free && unmap(m.base, m.size) == kOk &&
           release(m.handle) == kOk && address_free(m.base, m.size) == kOk;
  }
};

}  // namespace cuda_ipc_test
