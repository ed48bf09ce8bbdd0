// The Level Zero entry points, resolved at run time, and the names of the
// ze_result_t codes they return.
#include "api.h"
#include "kit/errors.h"
#include "kit/library.h"

namespace hurray::level_zero {


namespace {

// Every code of ze_result_t in Level Zero 1.4 (ze_api.h), in its order.
constexpr hurray::kit::CodeText kResultNames[] = {
    {ZE_RESULT_SUCCESS, "ZE_RESULT_SUCCESS"},
    {ZE_RESULT_NOT_READY, "ZE_RESULT_NOT_READY"},
    {ZE_RESULT_ERROR_DEVICE_LOST, "ZE_RESULT_ERROR_DEVICE_LOST"},
    {ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY, "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY"},
    {ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY"},
    {ZE_RESULT_ERROR_MODULE_BUILD_FAILURE, "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE"},
    {ZE_RESULT_ERROR_MODULE_LINK_FAILURE, "ZE_RESULT_ERROR_MODULE_LINK_FAILURE"},
    {ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET, "ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET"},
    {ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE, "ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE"},
    {ZE_RESULT_EXP_ERROR_DEVICE_IS_NOT_VERTEX, "ZE_RESULT_EXP_ERROR_DEVICE_IS_NOT_VERTEX"},
    {ZE_RESULT_EXP_ERROR_VERTEX_IS_NOT_DEVICE, "ZE_RESULT_EXP_ERROR_VERTEX_IS_NOT_DEVICE"},
    {ZE_RESULT_EXP_ERROR_REMOTE_DEVICE, "ZE_RESULT_EXP_ERROR_REMOTE_DEVICE"},
    {ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS, "ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS"},
    {ZE_RESULT_ERROR_NOT_AVAILABLE, "ZE_RESULT_ERROR_NOT_AVAILABLE"},
    {ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE, "ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE"},
    {ZE_RESULT_WARNING_DROPPED_DATA, "ZE_RESULT_WARNING_DROPPED_DATA"},
    {ZE_RESULT_ERROR_UNINITIALIZED, "ZE_RESULT_ERROR_UNINITIALIZED"},
    {ZE_RESULT_ERROR_UNSUPPORTED_VERSION, "ZE_RESULT_ERROR_UNSUPPORTED_VERSION"},
    {ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE"},
    {ZE_RESULT_ERROR_INVALID_ARGUMENT, "ZE_RESULT_ERROR_INVALID_ARGUMENT"},
    {ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "ZE_RESULT_ERROR_INVALID_NULL_HANDLE"},
    {ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE, "ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE"},
    {ZE_RESULT_ERROR_INVALID_NULL_POINTER, "ZE_RESULT_ERROR_INVALID_NULL_POINTER"},
    {ZE_RESULT_ERROR_INVALID_SIZE, "ZE_RESULT_ERROR_INVALID_SIZE"},
    {ZE_RESULT_ERROR_UNSUPPORTED_SIZE, "ZE_RESULT_ERROR_UNSUPPORTED_SIZE"},
    {ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT, "ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT"},
    {ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT,
     "ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT"},
    {ZE_RESULT_ERROR_INVALID_ENUMERATION, "ZE_RESULT_ERROR_INVALID_ENUMERATION"},
    {ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION, "ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION"},
    {ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT, "ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT"},
    {ZE_RESULT_ERROR_INVALID_NATIVE_BINARY, "ZE_RESULT_ERROR_INVALID_NATIVE_BINARY"},
    {ZE_RESULT_ERROR_INVALID_GLOBAL_NAME, "ZE_RESULT_ERROR_INVALID_GLOBAL_NAME"},
    {ZE_RESULT_ERROR_INVALID_KERNEL_NAME, "ZE_RESULT_ERROR_INVALID_KERNEL_NAME"},
    {ZE_RESULT_ERROR_INVALID_FUNCTION_NAME, "ZE_RESULT_ERROR_INVALID_FUNCTION_NAME"},
    {ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION, "ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION"},
    {ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION,
     "ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION"},
    {ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX,
     "ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX"},
    {ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE, "ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE"},
    {ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE,
     "ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE"},
    {ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED, "ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED"},
    {ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE, "ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE"},
    {ZE_RESULT_ERROR_OVERLAPPING_REGIONS, "ZE_RESULT_ERROR_OVERLAPPING_REGIONS"},
    {ZE_RESULT_WARNING_ACTION_REQUIRED, "ZE_RESULT_WARNING_ACTION_REQUIRED"},
    {ZE_RESULT_ERROR_UNKNOWN, "ZE_RESULT_ERROR_UNKNOWN"},
};

}  // namespace

const char *result_name(ze_result_t result) noexcept {
  return hurray::kit::lookup(kResultNames, static_cast<int>(result));
}

// The ze* functions, looked up by their names; every one is required.
constexpr kit::Symbol<Api> kSymbols[] = {
    kit::required<&Api::zeInit>,
    kit::required<&Api::zeDriverGet>,
    kit::required<&Api::zeDriverGetApiVersion>,
    kit::required<&Api::zeDriverGetProperties>,
    kit::required<&Api::zeDriverGetIpcProperties>,
    kit::required<&Api::zeDeviceGet>,
    kit::required<&Api::zeDeviceGetProperties>,
    kit::required<&Api::zeDeviceGetCommandQueueGroupProperties>,
    kit::required<&Api::zeDeviceGetMemoryAccessProperties>,
    kit::required<&Api::zeDeviceCanAccessPeer>,
    kit::required<&Api::zeContextCreate>,
    kit::required<&Api::zeContextDestroy>,
    kit::required<&Api::zeCommandListCreateImmediate>,
    kit::required<&Api::zeCommandListDestroy>,
    kit::required<&Api::zeCommandListAppendBarrier>,
    kit::required<&Api::zeCommandListAppendMemoryCopy>,
    kit::required<&Api::zeCommandListAppendWaitOnEvents>,
    kit::required<&Api::zeEventPoolCreate>,
    kit::required<&Api::zeEventPoolDestroy>,
    kit::required<&Api::zeEventPoolGetIpcHandle>,
    kit::required<&Api::zeEventPoolOpenIpcHandle>,
    kit::required<&Api::zeEventPoolCloseIpcHandle>,
    kit::required<&Api::zeEventCreate>,
    kit::required<&Api::zeEventDestroy>,
    kit::required<&Api::zeEventHostSynchronize>,
    kit::required<&Api::zeEventHostReset>,
    kit::required<&Api::zeMemAllocDevice>,
    kit::required<&Api::zeMemAllocHost>,
    kit::required<&Api::zeMemAllocShared>,
    kit::required<&Api::zeMemFree>,
    kit::required<&Api::zeMemGetAllocProperties>,
    kit::required<&Api::zeMemGetIpcHandle>,
    kit::required<&Api::zeMemOpenIpcHandle>,
    kit::required<&Api::zeMemCloseIpcHandle>,
};
static_assert(kit::names_every_member(kSymbols));

const char *load_api(void *lib, Api *api) noexcept {
  return kit::load_symbols<Api>(lib, kSymbols, api);
}

}  // namespace hurray::level_zero
