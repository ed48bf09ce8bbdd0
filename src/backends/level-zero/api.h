// What src/backends/level-zero offers the rest of the plugin: the table of
// Level Zero entry points resolved with dlsym (the plugin links no
// libze_loader) and the names of ze_result_t codes. Not installed.
#pragma once

#include <level_zero/ze_api.h>

namespace hurray::level_zero {

// Every ze* function the plugin calls, resolved at run time (ze_api.cpp
// lists them). All are Level Zero 1.0 functions that every loader exports; a
// loader that lacks one is HURRAY_E_DEVICE_UNAVAILABLE.
struct Api {
  decltype(&::zeInit) zeInit = nullptr;
  decltype(&::zeDriverGet) zeDriverGet = nullptr;
  decltype(&::zeDriverGetApiVersion) zeDriverGetApiVersion = nullptr;
  decltype(&::zeDriverGetProperties) zeDriverGetProperties = nullptr;
  decltype(&::zeDriverGetIpcProperties) zeDriverGetIpcProperties = nullptr;
  decltype(&::zeDeviceGet) zeDeviceGet = nullptr;
  decltype(&::zeDeviceGetProperties) zeDeviceGetProperties = nullptr;
  decltype(&::zeDeviceGetCommandQueueGroupProperties) zeDeviceGetCommandQueueGroupProperties =
      nullptr;
  decltype(&::zeDeviceGetMemoryAccessProperties) zeDeviceGetMemoryAccessProperties = nullptr;
  decltype(&::zeDeviceCanAccessPeer) zeDeviceCanAccessPeer = nullptr;
  decltype(&::zeContextCreate) zeContextCreate = nullptr;
  decltype(&::zeContextDestroy) zeContextDestroy = nullptr;
  decltype(&::zeCommandListCreateImmediate) zeCommandListCreateImmediate = nullptr;
  decltype(&::zeCommandListDestroy) zeCommandListDestroy = nullptr;
  decltype(&::zeCommandListAppendBarrier) zeCommandListAppendBarrier = nullptr;
  decltype(&::zeCommandListAppendMemoryCopy) zeCommandListAppendMemoryCopy = nullptr;
  decltype(&::zeCommandListAppendWaitOnEvents) zeCommandListAppendWaitOnEvents = nullptr;
  decltype(&::zeEventPoolCreate) zeEventPoolCreate = nullptr;
  decltype(&::zeEventPoolDestroy) zeEventPoolDestroy = nullptr;
  decltype(&::zeEventPoolGetIpcHandle) zeEventPoolGetIpcHandle = nullptr;
  decltype(&::zeEventPoolOpenIpcHandle) zeEventPoolOpenIpcHandle = nullptr;
  decltype(&::zeEventPoolCloseIpcHandle) zeEventPoolCloseIpcHandle = nullptr;
  decltype(&::zeEventCreate) zeEventCreate = nullptr;
  decltype(&::zeEventDestroy) zeEventDestroy = nullptr;
  decltype(&::zeEventHostSynchronize) zeEventHostSynchronize = nullptr;
  decltype(&::zeEventHostReset) zeEventHostReset = nullptr;
  decltype(&::zeMemAllocDevice) zeMemAllocDevice = nullptr;
  decltype(&::zeMemAllocHost) zeMemAllocHost = nullptr;
  decltype(&::zeMemAllocShared) zeMemAllocShared = nullptr;
  decltype(&::zeMemFree) zeMemFree = nullptr;
  decltype(&::zeMemGetAllocProperties) zeMemGetAllocProperties = nullptr;
  decltype(&::zeMemGetIpcHandle) zeMemGetIpcHandle = nullptr;
  decltype(&::zeMemOpenIpcHandle) zeMemOpenIpcHandle = nullptr;
  decltype(&::zeMemCloseIpcHandle) zeMemCloseIpcHandle = nullptr;
};

// Resolve every function of Api from `lib` (a dlopen handle). Returns
// nullptr on success, else the name of the first one that is missing.
const char *load_api(void *lib, Api *api) noexcept;

// "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY" for 0x70000003; nullptr for a code
// this plugin does not know (format it with its number then).
const char *result_name(ze_result_t result) noexcept;

}  // namespace hurray::level_zero
