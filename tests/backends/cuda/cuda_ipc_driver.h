// The CUDA driver as the IPC tests of cuda_fake_ipc_process_test.cpp and
// their consumer (cuda_fake_ipc_peer.cpp) use it themselves: the fake driver
// (fake_cuda.cpp, fake_cuda_memory.cpp), or with HURRAY_CUDA_IPC_REAL=1 the
// machine's libcuda.so.1 (tests/gpu/cuda-check.sh, part "ipc-wrapped-vmm").
// Device memory is read and written with synchronous copies in device 0's
// primary context; the fake's counters are there only with the fake.
#pragma once

#include <cuda.h>
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace cuda_ipc_test {

inline bool real_device() {
  const char *v = std::getenv("HURRAY_CUDA_IPC_REAL");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

// What the fake counts (hurray_fake_cuda_memory_counts), in its order.
enum { kOpens, kCloses, kCreates, kImports, kMaps, kUnmaps, kVmmLive, kBad };

struct Driver {
  void *lib = nullptr;
  CUcontext ctx = nullptr;
  CUresult (*mem_alloc)(CUdeviceptr *, size_t) = nullptr;
  CUresult (*mem_free)(CUdeviceptr) = nullptr;
  CUresult (*dtoh)(void *, CUdeviceptr, size_t) = nullptr;
  CUresult (*htod)(CUdeviceptr, const void *, size_t) = nullptr;
  void (*counts_fn)(int *) = nullptr;  // the fake only
  void (*live_fn)(int *) = nullptr;

  // lib_path: the fake's, unless the environment asks for the real driver.
  // False when something is missing (why in *why).
  bool open(const char *fake_path, const char **why) {
    lib = dlopen(real_device() ? "libcuda.so.1" : fake_path, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return *why = "dlopen of the driver failed", false;
    auto init = sym<CUresult (*)(unsigned)>("cuInit");
    auto get = sym<CUresult (*)(CUdevice *, int)>("cuDeviceGet");
    auto retain = sym<CUresult (*)(CUcontext *, CUdevice)>("cuDevicePrimaryCtxRetain");
    auto push = sym<CUresult (*)(CUcontext)>("cuCtxPushCurrent_v2");
    mem_alloc = sym<decltype(mem_alloc)>("cuMemAlloc_v2");
    mem_free = sym<decltype(mem_free)>("cuMemFree_v2");
    dtoh = sym<decltype(dtoh)>("cuMemcpyDtoH_v2");
    htod = sym<decltype(htod)>("cuMemcpyHtoD_v2");
    counts_fn = sym<decltype(counts_fn)>("hurray_fake_cuda_memory_counts");
    live_fn = sym<decltype(live_fn)>("hurray_fake_cuda_memory_live");
    if (!init || !get || !retain || !push || !mem_alloc || !mem_free || !dtoh || !htod)
      return *why = "a driver function is missing", false;
    CUdevice dev = 0;
    if (init(0) != CUDA_SUCCESS || get(&dev, 0) != CUDA_SUCCESS ||
        retain(&ctx, dev) != CUDA_SUCCESS || push(ctx) != CUDA_SUCCESS)
      return *why = "no device 0 or its primary context", false;
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
  std::vector<unsigned char> read(const void *p, size_t n) const {
    std::vector<unsigned char> out(n);
    if (dtoh(out.data(), reinterpret_cast<uintptr_t>(p), n) != CUDA_SUCCESS) out.clear();
    return out;
  }
  bool fill(void *p, unsigned char v, size_t n) const {
    const std::vector<unsigned char> bytes(n, v);
    return htod(reinterpret_cast<uintptr_t>(p), bytes.data(), n) == CUDA_SUCCESS;
  }
  unsigned char at(const void *p) const {
    const std::vector<unsigned char> b = read(p, 1);
    return b.empty() ? 0 : b[0];
  }
};

}  // namespace cuda_ipc_test
