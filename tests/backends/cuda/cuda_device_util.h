// What the CUDA device tests share (cuda_device_test.cpp,
// cuda_device_release_test.cpp; one program, hurray_cuda_device_tests): the
// driver functions they call themselves, taken from the plugin's dlopen
// handle of libcuda (native slot 4: the program links libhurray and dl
// only), a primary context made current for a scope, a PTX module's kernel,
// and the skip (77) without a device.
#pragma once

#include <cuda.h>
#include <dlfcn.h>
#include <hurray.h>
#include <hurray_backend.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "plugin_test_util.h"

namespace cuda_test {

// ---- driver functions the test calls itself ---------------------------------

#define TEST_CU_FUNCTIONS(XX)                          \
  XX(cuGetErrorName, "cuGetErrorName")                 \
  XX(cuCtxPushCurrent, "cuCtxPushCurrent_v2")          \
  XX(cuCtxPopCurrent, "cuCtxPopCurrent_v2")            \
  XX(cuPointerGetAttributes, "cuPointerGetAttributes") \
  XX(cuStreamCreate, "cuStreamCreate")                 \
  XX(cuStreamDestroy, "cuStreamDestroy_v2")            \
  XX(cuStreamSynchronize, "cuStreamSynchronize")       \
  XX(cuStreamQuery, "cuStreamQuery")                   \
  XX(cuModuleLoadData, "cuModuleLoadData")             \
  XX(cuModuleGetFunction, "cuModuleGetFunction")       \
  XX(cuModuleUnload, "cuModuleUnload")                 \
  XX(cuLaunchKernel, "cuLaunchKernel")                 \
  XX(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2")        \
  XX(cuCtxSynchronize, "cuCtxSynchronize")             \
  XX(cuMemHostAlloc, "cuMemHostAlloc")                 \
  XX(cuMemFreeHost, "cuMemFreeHost")

struct Cu {
#define TEST_CU_XX_(name, symbol) decltype(&::name) name = nullptr;
  TEST_CU_FUNCTIONS(TEST_CU_XX_)
#undef TEST_CU_XX_
  explicit Cu(void *lib) {
    REQUIRE(lib != nullptr);
#define TEST_CU_XX_(name, symbol)                                 \
  name = reinterpret_cast<decltype(&::name)>(dlsym(lib, symbol)); \
  INFO("dlsym " symbol);                                          \
  REQUIRE(name != nullptr);
    TEST_CU_FUNCTIONS(TEST_CU_XX_)
#undef TEST_CU_XX_
  }
  std::string name_of(CUresult r) const {
    const char *s = nullptr;
    if (cuGetErrorName(r, &s) == CUDA_SUCCESS && s != nullptr) return s;
    return "CUresult " + std::to_string(static_cast<int>(r));
  }
};

#define CU_OK(cu, call)                      \
  do {                                       \
    const CUresult r_ = (call);              \
    INFO(#call << ": " << (cu).name_of(r_)); \
    REQUIRE(r_ == CUDA_SUCCESS);             \
  } while (0)

// The primary context current for a scope.
struct Push {
  const Cu &cu;
  explicit Push(const Cu &c, void *ctx) : cu(c) {
    CU_OK(cu, cu.cuCtxPushCurrent(static_cast<CUcontext>(ctx)));
  }
  ~Push() {
    CUcontext popped = nullptr;
    cu.cuCtxPopCurrent(&popped);
  }
  Push(const Push &) = delete;
  Push &operator=(const Push &) = delete;
};

// The one kernel `name` of a PTX module, loaded on the current context.
struct Module {
  const Cu &cu;
  CUmodule module = nullptr;
  CUfunction fn = nullptr;
  Module(const Cu &c, const char *ptx, const char *name) : cu(c) {
    CU_OK(cu, cu.cuModuleLoadData(&module, ptx));
    CU_OK(cu, cu.cuModuleGetFunction(&fn, module, name));
  }
  ~Module() {
    if (module != nullptr) cu.cuModuleUnload(module);
  }
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;
  void launch(unsigned blocks, unsigned threads, void **args, CUstream stream) const {
    CU_OK(cu, cu.cuLaunchKernel(fn, blocks, 1, 1, threads, 1, 1, 0, stream, args, nullptr));
  }
};

// Skip (77) unless the public API sees a CUDA device.
inline int32_t require_device() {
  int32_t n = 0;
  hurray_error err{};
  if (hurray_device_count(nullptr, HURRAY_DEVICE_CUDA, &n, &err) != HURRAY_OK)
    gpu_test::skip("no CUDA device", err.message);
  return n;
}

struct Probed : gpu_test::Probed {
  Probed() : gpu_test::Probed(HURRAY_CUDA_PLUGIN, "no CUDA device") {}
};

}  // namespace cuda_test
