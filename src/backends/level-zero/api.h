// What src/backends/level-zero offers the rest of the plugin: the table of
// Level Zero entry points resolved with dlsym (the plugin links no
// libze_loader) and the names of ze_result_t codes. Not installed.
#pragma once

#include <level_zero/ze_api.h>

namespace hurray::level_zero {

// Every ze* function the plugin calls. All are Level Zero 1.0 functions that
// every loader exports; a loader that lacks one is HURRAY_E_DEVICE_UNAVAILABLE.
#define HURRAY_ZE_FUNCTIONS(XX)              \
  XX(zeInit)                                 \
  XX(zeDriverGet)                            \
  XX(zeDriverGetApiVersion)                  \
  XX(zeDriverGetProperties)                  \
  XX(zeDriverGetIpcProperties)               \
  XX(zeDeviceGet)                            \
  XX(zeDeviceGetProperties)                  \
  XX(zeDeviceGetCommandQueueGroupProperties) \
  XX(zeDeviceGetMemoryAccessProperties)      \
  XX(zeDeviceCanAccessPeer)                  \
  XX(zeContextCreate)                        \
  XX(zeContextDestroy)                       \
  XX(zeCommandListCreateImmediate)           \
  XX(zeCommandListDestroy)                   \
  XX(zeCommandListAppendBarrier)             \
  XX(zeCommandListAppendMemoryCopy)          \
  XX(zeCommandListAppendWaitOnEvents)        \
  XX(zeEventPoolCreate)                      \
  XX(zeEventPoolDestroy)                     \
  XX(zeEventPoolGetIpcHandle)                \
  XX(zeEventPoolOpenIpcHandle)               \
  XX(zeEventPoolCloseIpcHandle)              \
  XX(zeEventCreate)                          \
  XX(zeEventDestroy)                         \
  XX(zeEventHostSynchronize)                 \
  XX(zeEventHostReset)                       \
  XX(zeMemAllocDevice)                       \
  XX(zeMemAllocHost)                         \
  XX(zeMemAllocShared)                       \
  XX(zeMemFree)                              \
  XX(zeMemGetAllocProperties)                \
  XX(zeMemGetIpcHandle)                      \
  XX(zeMemOpenIpcHandle)                     \
  XX(zeMemCloseIpcHandle)

// The resolved entry points.
struct Api {
#define HURRAY_ZE_XX_(name) decltype(&::name) name = nullptr;
  HURRAY_ZE_FUNCTIONS(HURRAY_ZE_XX_)
#undef HURRAY_ZE_XX_
};

// Resolve every function of HURRAY_ZE_FUNCTIONS from `lib` (a dlopen handle).
// Returns nullptr on success, else the name of the first one that is missing.
const char *load_api(void *lib, Api *api) noexcept;

// "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY" for 0x70000003; nullptr for a code
// this plugin does not know (format it with its number then).
const char *result_name(ze_result_t result) noexcept;

}  // namespace hurray::level_zero
