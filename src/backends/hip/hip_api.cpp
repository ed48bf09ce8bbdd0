// The HIP runtime entry points, resolved at run time; what hipError_t codes
// are called and mean; how hipPointerGetAttributes answers read.

#include <cstdio>
#include <cstring>
#include <iterator>

#include "api.h"
#include "kit/library.h"

namespace hurray::hip {

namespace {

// Compiles only when `address` converts to the type of Member: for an
// overloaded name, when the prototype Api spells out selects a declaration of
// the header. It does not compare the address with null: under UBSan, GCC does
// not fold that comparison for a function, and the static_assert fails.
template <auto Member>
constexpr bool selects(typename kit::MemberOf<decltype(Member)>::Function) {
  return true;
}
static_assert(selects<&Api::hipMalloc>(&::hipMalloc));
static_assert(selects<&Api::hipHostMalloc>(&::hipHostMalloc));
static_assert(selects<&Api::hipMallocManaged>(&::hipMallocManaged));

}  // namespace

std::span<const kit::Symbol<Api>> symbols() noexcept { return kSymbols; }

const char *load_api(void *lib, Api *api) noexcept {
  return kit::load_symbols<Api>(lib, kSymbols, api);
}

const gpu_stream::Runtime kErrorColumn = gpu_stream::Runtime::kHip;

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
  hurray::gpu_stream::fill_error_text(name, description, code, kErrorColumn, out);
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
