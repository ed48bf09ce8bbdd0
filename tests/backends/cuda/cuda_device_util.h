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
#include <string_view>

#include "plugin_test_util.h"

namespace cuda_test {

// ---- driver functions the test calls itself ---------------------------------

// Each member is named as cuda.h names the function, and cuda.h renames some
// to their versioned symbols (#define cuCtxPushCurrent cuCtxPushCurrent_v2),
// so the name kit::required looks up is the symbol whose prototype the
// member has.
struct Cu {
  decltype(&::cuGetErrorName) cuGetErrorName = nullptr;
  decltype(&::cuCtxPushCurrent) cuCtxPushCurrent = nullptr;
  decltype(&::cuCtxPopCurrent) cuCtxPopCurrent = nullptr;
  decltype(&::cuPointerGetAttributes) cuPointerGetAttributes = nullptr;
  decltype(&::cuStreamCreate) cuStreamCreate = nullptr;
  decltype(&::cuStreamDestroy) cuStreamDestroy = nullptr;
  decltype(&::cuStreamSynchronize) cuStreamSynchronize = nullptr;
  decltype(&::cuStreamQuery) cuStreamQuery = nullptr;
  decltype(&::cuModuleLoadData) cuModuleLoadData = nullptr;
  decltype(&::cuModuleGetFunction) cuModuleGetFunction = nullptr;
  decltype(&::cuModuleUnload) cuModuleUnload = nullptr;
  decltype(&::cuLaunchKernel) cuLaunchKernel = nullptr;
  decltype(&::cuMemcpyDtoHAsync) cuMemcpyDtoHAsync = nullptr;
  decltype(&::cuCtxSynchronize) cuCtxSynchronize = nullptr;
  decltype(&::cuMemHostAlloc) cuMemHostAlloc = nullptr;
  decltype(&::cuMemFreeHost) cuMemFreeHost = nullptr;
  explicit Cu(void *lib);
  std::string name_of(CUresult r) const {
    const char *s = nullptr;
    if (cuGetErrorName(r, &s) == CUDA_SUCCESS && s != nullptr) return s;
    return "CUresult " + std::to_string(static_cast<int>(r));
  }
};

constexpr hurray::kit::Symbol<Cu> kCuSymbols[] = {
    hurray::kit::required<&Cu::cuGetErrorName>,
    hurray::kit::required<&Cu::cuCtxPushCurrent>,
    hurray::kit::required<&Cu::cuCtxPopCurrent>,
    hurray::kit::required<&Cu::cuPointerGetAttributes>,
    hurray::kit::required<&Cu::cuStreamCreate>,
    hurray::kit::required<&Cu::cuStreamDestroy>,
    hurray::kit::required<&Cu::cuStreamSynchronize>,
    hurray::kit::required<&Cu::cuStreamQuery>,
    hurray::kit::required<&Cu::cuModuleLoadData>,
    hurray::kit::required<&Cu::cuModuleGetFunction>,
    hurray::kit::required<&Cu::cuModuleUnload>,
    hurray::kit::required<&Cu::cuLaunchKernel>,
    hurray::kit::required<&Cu::cuMemcpyDtoHAsync>,
    hurray::kit::required<&Cu::cuCtxSynchronize>,
    hurray::kit::required<&Cu::cuMemHostAlloc>,
    hurray::kit::required<&Cu::cuMemFreeHost>,
};
static_assert(hurray::kit::names_every_member(kCuSymbols));
// The versioned symbols the tests have always called.
static_assert(std::string_view(hurray::kit::member_name<&Cu::cuCtxPushCurrent>) ==
              "cuCtxPushCurrent_v2");
static_assert(std::string_view(hurray::kit::member_name<&Cu::cuCtxPopCurrent>) ==
              "cuCtxPopCurrent_v2");
static_assert(std::string_view(hurray::kit::member_name<&Cu::cuStreamDestroy>) ==
              "cuStreamDestroy_v2");
static_assert(std::string_view(hurray::kit::member_name<&Cu::cuMemcpyDtoHAsync>) ==
              "cuMemcpyDtoHAsync_v2");

inline Cu::Cu(void *lib) { gpu_test::load_symbols(lib, kCuSymbols, this); }

// Requires that a driver call answered CUDA_SUCCESS; a failure names the
// call (`what`, its text) and the error.
inline void cu_ok(const Cu &cu, CUresult r, const char *what) {
  INFO(what << ": " << cu.name_of(r));
  REQUIRE(r == CUDA_SUCCESS);
}
// cu_ok with the call's own text.
#define CU_OK(cu, call) ::cuda_test::cu_ok((cu), (call), #call)

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
