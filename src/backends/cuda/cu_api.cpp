// The CUDA driver entry points, resolved at run time, and what CUresult codes
// are called and mean.

#include <cstdio>
#include <iterator>
#include <string_view>

#include "api.h"
#include "kit/library.h"

namespace hurray::cuda {

// The symbols cuda.h maps to versioned ones, as this plugin expects them: a
// header that maps one to another symbol (a newer version, or _ptsz with
// CUDA_API_PER_THREAD_DEFAULT_STREAM) changes the prototype too; look at it
// before changing the name here.
static_assert(std::string_view(kit::member_name<&Api::cuDeviceTotalMem>) == "cuDeviceTotalMem_v2");
static_assert(std::string_view(kit::member_name<&Api::cuDeviceGetUuid>) == "cuDeviceGetUuid_v2");
static_assert(std::string_view(kit::member_name<&Api::cuDevicePrimaryCtxRelease>) ==
              "cuDevicePrimaryCtxRelease_v2");
static_assert(std::string_view(kit::member_name<&Api::cuCtxPushCurrent>) == "cuCtxPushCurrent_v2");
static_assert(std::string_view(kit::member_name<&Api::cuCtxPopCurrent>) == "cuCtxPopCurrent_v2");
static_assert(std::string_view(kit::member_name<&Api::cuStreamDestroy>) == "cuStreamDestroy_v2");
static_assert(std::string_view(kit::member_name<&Api::cuEventDestroy>) == "cuEventDestroy_v2");
static_assert(std::string_view(kit::member_name<&Api::cuMemAlloc>) == "cuMemAlloc_v2");
static_assert(std::string_view(kit::member_name<&Api::cuMemFree>) == "cuMemFree_v2");
static_assert(std::string_view(kit::member_name<&Api::cuMemHostGetDevicePointer>) ==
              "cuMemHostGetDevicePointer_v2");
static_assert(std::string_view(kit::member_name<&Api::cuMemGetAddressRange>) ==
              "cuMemGetAddressRange_v2");
static_assert(std::string_view(kit::member_name<&Api::cuMemcpyHtoDAsync>) ==
              "cuMemcpyHtoDAsync_v2");
static_assert(std::string_view(kit::member_name<&Api::cuMemcpyDtoHAsync>) ==
              "cuMemcpyDtoHAsync_v2");
static_assert(std::string_view(kit::member_name<&Api::cuIpcOpenMemHandle>) ==
              "cuIpcOpenMemHandle_v2");

const char *load_api(void *lib, Api *api) noexcept {
  return kit::load_symbols<Api>(lib, kSymbols, api);
}

// (CUresult is 0x7ff... at most: every code fits an int.)
const gpu_stream::Runtime kErrorColumn = gpu_stream::Runtime::kCuda;

hurray_status status_of(int code) noexcept {
  switch (code) {
    case CUDA_SUCCESS:
      return HURRAY_OK;
    case CUDA_ERROR_OUT_OF_MEMORY:
      return HURRAY_E_OUT_OF_MEMORY;
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case 34:  // CUDA_ERROR_STUB_LIBRARY (CUDA 11.1)
    case 46:  // CUDA_ERROR_DEVICE_UNAVAILABLE (CUDA 11.1)
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_SYSTEM_NOT_READY:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
      return HURRAY_E_DEVICE_UNAVAILABLE;
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_CONTEXT:
    case CUDA_ERROR_INVALID_HANDLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
      return HURRAY_E_INVALID_ARGUMENT;
    case CUDA_ERROR_NOT_SUPPORTED:
    case CUDA_ERROR_PEER_ACCESS_UNSUPPORTED:
      return HURRAY_E_UNSUPPORTED;
    default:
      return HURRAY_E_BACKEND;
  }
}

void error_text(const Api *api, int code, ErrorText *out) noexcept {
  const auto result = static_cast<CUresult>(code);
  const char *name = nullptr, *description = nullptr;
  if (api != nullptr && api->cuGetErrorName != nullptr &&
      api->cuGetErrorName(result, &name) != CUDA_SUCCESS)
    name = nullptr;
  if (api != nullptr && api->cuGetErrorString != nullptr &&
      api->cuGetErrorString(result, &description) != CUDA_SUCCESS)
    description = nullptr;
  hurray::gpu_stream::fill_error_text(name, description, code, kErrorColumn, out);
}

}  // namespace hurray::cuda
