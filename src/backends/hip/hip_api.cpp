// The HIP runtime entry points, resolved at run time; what hipError_t codes
// are called and mean; how hipPointerGetAttributes answers read.

#include <cstdio>
#include <cstring>
#include <iterator>
#include <type_traits>

#include "api.h"
#include "kit/library.h"

namespace hurray::hip {

namespace {

// Each prototype of HURRAY_HIP_FUNCTIONS must select a declaration of the
// header (static_cast picks an overload, or fails to compile).
#define HURRAY_HIP_XX_(name, required, ...)                                                     \
  static_assert(std::is_same_v<decltype(static_cast<std::add_pointer_t<__VA_ARGS__>>(&::name)), \
                               std::add_pointer_t<__VA_ARGS__>>,                                \
                #name " is not declared with the prototype HURRAY_HIP_FUNCTIONS gives");
HURRAY_HIP_FUNCTIONS(HURRAY_HIP_XX_)
#undef HURRAY_HIP_XX_

using Code = hurray::kit::CodeText;

// hipError_t of HIP 5.2, by number (the first name of each number).
constexpr Code kNames[] = {
    {0, "hipSuccess"},
    {1, "hipErrorInvalidValue"},
    {2, "hipErrorOutOfMemory"},
    {3, "hipErrorNotInitialized"},
    {4, "hipErrorDeinitialized"},
    {5, "hipErrorProfilerDisabled"},
    {6, "hipErrorProfilerNotInitialized"},
    {7, "hipErrorProfilerAlreadyStarted"},
    {8, "hipErrorProfilerAlreadyStopped"},
    {9, "hipErrorInvalidConfiguration"},
    {12, "hipErrorInvalidPitchValue"},
    {13, "hipErrorInvalidSymbol"},
    {17, "hipErrorInvalidDevicePointer"},
    {21, "hipErrorInvalidMemcpyDirection"},
    {35, "hipErrorInsufficientDriver"},
    {52, "hipErrorMissingConfiguration"},
    {53, "hipErrorPriorLaunchFailure"},
    {98, "hipErrorInvalidDeviceFunction"},
    {100, "hipErrorNoDevice"},
    {101, "hipErrorInvalidDevice"},
    {200, "hipErrorInvalidImage"},
    {201, "hipErrorInvalidContext"},
    {202, "hipErrorContextAlreadyCurrent"},
    {205, "hipErrorMapFailed"},
    {206, "hipErrorUnmapFailed"},
    {207, "hipErrorArrayIsMapped"},
    {208, "hipErrorAlreadyMapped"},
    {209, "hipErrorNoBinaryForGpu"},
    {210, "hipErrorAlreadyAcquired"},
    {211, "hipErrorNotMapped"},
    {212, "hipErrorNotMappedAsArray"},
    {213, "hipErrorNotMappedAsPointer"},
    {214, "hipErrorECCNotCorrectable"},
    {215, "hipErrorUnsupportedLimit"},
    {216, "hipErrorContextAlreadyInUse"},
    {217, "hipErrorPeerAccessUnsupported"},
    {218, "hipErrorInvalidKernelFile"},
    {219, "hipErrorInvalidGraphicsContext"},
    {300, "hipErrorInvalidSource"},
    {301, "hipErrorFileNotFound"},
    {302, "hipErrorSharedObjectSymbolNotFound"},
    {303, "hipErrorSharedObjectInitFailed"},
    {304, "hipErrorOperatingSystem"},
    {400, "hipErrorInvalidHandle"},
    {401, "hipErrorIllegalState"},
    {500, "hipErrorNotFound"},
    {600, "hipErrorNotReady"},
    {700, "hipErrorIllegalAddress"},
    {701, "hipErrorLaunchOutOfResources"},
    {702, "hipErrorLaunchTimeOut"},
    {704, "hipErrorPeerAccessAlreadyEnabled"},
    {705, "hipErrorPeerAccessNotEnabled"},
    {708, "hipErrorSetOnActiveProcess"},
    {709, "hipErrorContextIsDestroyed"},
    {710, "hipErrorAssert"},
    {719, "hipErrorLaunchFailure"},
    {720, "hipErrorCooperativeLaunchTooLarge"},
    {801, "hipErrorNotSupported"},
    {900, "hipErrorStreamCaptureUnsupported"},
    {901, "hipErrorStreamCaptureInvalidated"},
    {902, "hipErrorStreamCaptureMerge"},
    {903, "hipErrorStreamCaptureUnmatched"},
    {904, "hipErrorStreamCaptureUnjoined"},
    {905, "hipErrorStreamCaptureIsolation"},
    {906, "hipErrorStreamCaptureImplicit"},
    {907, "hipErrorCapturedEvent"},
    {908, "hipErrorStreamCaptureWrongThread"},
    {910, "hipErrorGraphExecUpdateFailure"},
    {999, "hipErrorUnknown"},
    {1052, "hipErrorRuntimeMemory"},
    {1053, "hipErrorRuntimeOther"},
};

constexpr Code kDescriptions[] = {
    {0, "no error"},
    {1, "invalid argument"},
    {2, "out of memory"},
    {3, "the runtime could not be initialized"},
    {35, "the installed driver (amdgpu / ROCk) is too old for this runtime"},
    {100, "the HIP runtime found no usable GPU"},
    {101, "invalid device ordinal"},
    {217, "peer access is not supported between these devices"},
    {400, "invalid resource handle"},
    {704, "peer access is already enabled"},
    {801, "operation not supported"},
    {999, "unknown error"},
};

}  // namespace

#define HURRAY_HIP_XX_(name, required, ...) HURRAY_KIT_RESOLVE(api->name, #name, required)
HURRAY_KIT_DEFINE_LOAD_API(HURRAY_HIP_FUNCTIONS, HURRAY_HIP_XX_)
#undef HURRAY_HIP_XX_

HURRAY_GPU_DEFINE_ERROR_TABLES()

hurray_status status_of(int code) noexcept {
  switch (code) {
    case 0:  // hipSuccess
      return HURRAY_OK;
    case 2:     // hipErrorOutOfMemory
    case 1052:  // hipErrorRuntimeMemory
      return HURRAY_E_OUT_OF_MEMORY;
    case 3:    // hipErrorNotInitialized
    case 4:    // hipErrorDeinitialized
    case 35:   // hipErrorInsufficientDriver
    case 100:  // hipErrorNoDevice
    case 101:  // hipErrorInvalidDevice
      return HURRAY_E_DEVICE_UNAVAILABLE;
    case 1:    // hipErrorInvalidValue
    case 17:   // hipErrorInvalidDevicePointer
    case 201:  // hipErrorInvalidContext
    case 400:  // hipErrorInvalidHandle
    case 709:  // hipErrorContextIsDestroyed
      return HURRAY_E_INVALID_ARGUMENT;
    case 217:  // hipErrorPeerAccessUnsupported
    case 801:  // hipErrorNotSupported
      return HURRAY_E_UNSUPPORTED;
    default:
      return HURRAY_E_BACKEND;
  }
}

void error_text(const Api *api, int code, ErrorText *out) noexcept {
  const auto e = static_cast<hipError_t>(code);
  const char *name = api != nullptr && api->hipGetErrorName != nullptr ? api->hipGetErrorName(e)
                                                                       : nullptr;
  // An unknown code is named "hipErrorUnknown" by HIP 5: keep the number then.
  if (name != nullptr && std::strcmp(name, "hipErrorUnknown") == 0 && code != 999) name = nullptr;
  // HIP 5's hipGetErrorString answers the name again: that is no description.
  const char *description =
      api != nullptr && api->hipGetErrorString != nullptr ? api->hipGetErrorString(e) : nullptr;
  hurray::gpu_stream::fill_error_text(name, description, code, "HIP", kNames, std::size(kNames),
                                      kDescriptions, std::size(kDescriptions), out);
}

bool class_of_pointer(int runtime_major, int memory_type, int is_managed,
                      uint8_t *memory_class) noexcept {
  if (is_managed != 0) {
    *memory_class = HURRAY_MEMORY_UNIFIED;
    return true;
  }
  enum Kind { kNone, kHost, kDevice, kUnified } kind = kNone;
  if (runtime_major >= 6) {
    switch (memory_type) {
      case 1:
        kind = kHost;
        break;
      case 2:
        kind = kDevice;
        break;
      case 3:   // hipMemoryTypeManaged
      case 11:  // hipMemoryTypeUnified
        kind = kUnified;
        break;
      default:
        break;  // 0 unregistered, 10 array
    }
  } else {
    switch (memory_type) {
      case 0:
        kind = kHost;
        break;
      case 1:
        kind = kDevice;
        break;
      case 3:
        kind = kUnified;
        break;
      default:
        break;  // 2 array
    }
  }
  switch (kind) {
    case kHost:
      *memory_class = HURRAY_MEMORY_HOST_PINNED;
      return true;
    case kDevice:
      *memory_class = HURRAY_MEMORY_STANDARD;
      return true;
    case kUnified:
      *memory_class = HURRAY_MEMORY_UNIFIED;
      return true;
    default:
      return false;
  }
}

}  // namespace hurray::hip
