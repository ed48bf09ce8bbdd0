// The plugin that a build of the gpu-stream plugin tests
// (gpu_stream_plugin_test.cpp) is for: the CUDA plugin, or with
// HURRAY_GPU_STREAM_TEST_HIP defined the HIP plugin. Both are built on
// src/backends/gpu-stream, so their tests are written once; what differs
// (names, the runtime's symbols and error codes, the native handles) is here.
// The tests are named "cuda: ..." or "hip: ...".
#pragma once

#include <dlfcn.h>
#include <hurray_backend.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "api.h"
#include "plugin_test_util.h"

#if defined(HURRAY_GPU_STREAM_TEST_HIP)
#include <hip/hip_runtime_api.h>
#define GPU_STREAM_PICK(cuda, hip) hip
#define GPU_STREAM_PLUGIN_PATH HURRAY_HIP_PLUGIN
#else
#include <cuda.h>
#define GPU_STREAM_PICK(cuda, hip) cuda
#define GPU_STREAM_PLUGIN_PATH HURRAY_CUDA_PLUGIN
#endif

#define PLUGIN_TEST(text) GPU_STREAM_PICK("cuda: ", "hip: ") text

namespace plugin_under_test {

namespace vendor = GPU_STREAM_PICK(hurray::cuda, hurray::hip);

constexpr const char *kName = GPU_STREAM_PICK("cuda", "hip");
constexpr uint8_t kTag = GPU_STREAM_PICK(HURRAY_DEVICE_CUDA, HURRAY_DEVICE_ROCM);
constexpr const char *kPath = GPU_STREAM_PLUGIN_PATH;
constexpr const char *kNoDevice = GPU_STREAM_PICK("no CUDA device", "no HIP device");
constexpr const char *kLibraryEnv = GPU_STREAM_PICK("HURRAY_CUDA_LIBRARY", "HURRAY_HIP_LIBRARY");
constexpr const char *kNoSuchLibrary =
    GPU_STREAM_PICK("/nonexistent/libcuda.so.1", "/nonexistent/libamdhip64.so");
// probe with libm.so.6 as the runtime: the first required symbol is missing.
constexpr const char *kNoApiMessage =
    GPU_STREAM_PICK("[dlsym] libm.so.6 has no cuInit (a driver for CUDA 11.0 or later is needed)",
                    "[dlsym] libm.so.6 has no hipGetDeviceCount (HIP 4.2 or later is needed)");
// What device_info's detail names as the STANDARD allocator.
constexpr const char *kStandardAlloc = GPU_STREAM_PICK("cuMemAlloc", "hipMalloc");

// The plugin's table, loaded once; a probed plugin (the test is skipped
// without a device); one probe's answer.
inline const hurray_backend_v1 *plugin() {
  static const hurray_backend_v1 *t = gpu_test::load_plugin(kPath);
  return t;
}
struct Probed : gpu_test::Probed {
  Probed() : gpu_test::Probed(kPath, kNoDevice) {}
};
inline hurray_status probe_once(std::string *message) {
  return gpu_test::probe_once(plugin(), message);
}

// The symbol load_api says is missing from a library with none of the
// runtime's (libm): the first required one.
inline std::string first_missing_in_libm() {
  void *libm = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
  REQUIRE(libm != nullptr);
  vendor::Api api;
  const char *missing = vendor::load_api(libm, &api);
  dlclose(libm);
  REQUIRE(missing != nullptr);
  return missing;
}

// Defined by the plugin's own tests (cuda_backend_test.cpp,
// hip_backend_test.cpp): what probe, with the machine's runtime, must have
// answered (st, message), found out without the plugin.
void check_probe_on_this_machine(hurray_status st, const std::string &message);

// The runtime's error codes with their names (nullptr: the plugin knows none).
struct Named {
  int code;
  const char *name;
};
// An error code and the status the plugin makes of it.
struct StatusOf {
  int code;
  hurray_status status;
};

#if defined(HURRAY_GPU_STREAM_TEST_HIP)
constexpr Named kNames[] = {
    {hipSuccess, "hipSuccess"}, {hipErrorOutOfMemory, "hipErrorOutOfMemory"},
    {hipErrorNoDevice, "hipErrorNoDevice"}, {hipErrorInvalidHandle, "hipErrorInvalidHandle"},
    {hipErrorPeerAccessAlreadyEnabled, "hipErrorPeerAccessAlreadyEnabled"},
    {hipErrorNotSupported, "hipErrorNotSupported"}, {12345, nullptr}};
constexpr StatusOf kStatuses[] = {
    {hipSuccess, HURRAY_OK}, {hipErrorOutOfMemory, HURRAY_E_OUT_OF_MEMORY},
    {hipErrorNoDevice, HURRAY_E_DEVICE_UNAVAILABLE},
    {hipErrorInsufficientDriver, HURRAY_E_DEVICE_UNAVAILABLE},
    {hipErrorInvalidDevice, HURRAY_E_DEVICE_UNAVAILABLE},
    {hipErrorInvalidValue, HURRAY_E_INVALID_ARGUMENT},
    {hipErrorInvalidHandle, HURRAY_E_INVALID_ARGUMENT},
    {hipErrorNotSupported, HURRAY_E_UNSUPPORTED}, {hipErrorLaunchFailure, HURRAY_E_BACKEND},
    {12345, HURRAY_E_BACKEND}};
#else
constexpr Named kNames[] = {
    {0, "CUDA_SUCCESS"}, {2, "CUDA_ERROR_OUT_OF_MEMORY"}, {34, "CUDA_ERROR_STUB_LIBRARY"},
    {100, "CUDA_ERROR_NO_DEVICE"}, {400, "CUDA_ERROR_INVALID_HANDLE"}, {999, "CUDA_ERROR_UNKNOWN"},
    {12345, nullptr}, {-1, nullptr},
    // Every name the table has is the header's own spelling of that number.
    {CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT"}};
constexpr StatusOf kStatuses[] = {
    {CUDA_SUCCESS, HURRAY_OK}, {CUDA_ERROR_OUT_OF_MEMORY, HURRAY_E_OUT_OF_MEMORY},
    {34, HURRAY_E_DEVICE_UNAVAILABLE},  // stub library
    {CUDA_ERROR_NO_DEVICE, HURRAY_E_DEVICE_UNAVAILABLE},
    {CUDA_ERROR_NOT_INITIALIZED, HURRAY_E_DEVICE_UNAVAILABLE},
    {CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, HURRAY_E_DEVICE_UNAVAILABLE},
    {CUDA_ERROR_INVALID_VALUE, HURRAY_E_INVALID_ARGUMENT},
    {CUDA_ERROR_INVALID_HANDLE, HURRAY_E_INVALID_ARGUMENT},
    {CUDA_ERROR_NOT_SUPPORTED, HURRAY_E_UNSUPPORTED},
    {CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, HURRAY_E_UNSUPPORTED},
    {CUDA_ERROR_LAUNCH_FAILED, HURRAY_E_BACKEND}, {12345, HURRAY_E_BACKEND}};
#endif

// The descriptions the plugin gives of its own (vendor::error_description).
inline void check_descriptions() {
  using vendor::error_description;
#if defined(HURRAY_GPU_STREAM_TEST_HIP)
  CHECK(std::string(error_description(hipErrorNoDevice)).find("no usable GPU") !=
        std::string::npos);
#else
  CHECK(std::string(error_description(2)) == "out of memory");
  CHECK(std::string(error_description(34)).find("stub") != std::string::npos);
#endif
  CHECK(error_description(12345) == nullptr);
}

// The native handles of device dev: CUDA [0] the CUdevice, [1] the primary
// context, [2] = [3] the plugin's stream, [4] libcuda, nothing after; HIP [0]
// the device ordinal, no context, [2] = [3] the stream, [4] libamdhip64.
inline void check_native(const hurray_backend_native &nat, int32_t dev) {
#if defined(HURRAY_GPU_STREAM_TEST_HIP)
  CHECK(reinterpret_cast<uintptr_t>(nat.handles[0]) == static_cast<uintptr_t>(dev));
  CHECK(nat.handles[1] == nullptr);
  CHECK(nat.handles[2] != nullptr);
  CHECK(dlsym(nat.handles[4], "hipGetDeviceCount") != nullptr);
#else
  (void)dev;
  for (int i = 1; i < 5; ++i) CHECK(nat.handles[i] != nullptr);
  for (int i = 5; i < 8; ++i) CHECK(nat.handles[i] == nullptr);
  // [4] is libcuda: it resolves driver functions.
  CHECK(dlsym(nat.handles[4], "cuCtxGetDevice") != nullptr);
#endif
  CHECK(nat.handles[2] == nat.handles[3]);
}

}  // namespace plugin_under_test
