// The Vulkan functions the plugin calls, as tables of the plugin kit
// (kit/library.h): the loader's global functions, the instance's, the
// device's (core and extension), each looked up through the resolver
// Vulkan gives for its level (vkGetInstanceProcAddr, vkGetDeviceProcAddr).
// device.cpp resolves them in probe(); the rest of the plugin calls
// through State::fn and Device::fn.
#pragma once

#include <vulkan/vulkan.h>

#include "kit/library.h"

namespace hurray::vulkan {

// Before an instance exists: looked up with vkGetInstanceProcAddr(NULL, ...).
// vkEnumerateInstanceVersion is absent from Vulkan 1.0 loaders.
struct GlobalFns {
  PFN_vkEnumerateInstanceVersion vkEnumerateInstanceVersion = nullptr;
  PFN_vkCreateInstance vkCreateInstance = nullptr;
};
inline constexpr kit::Symbol<GlobalFns> kGlobalSymbols[] = {
    {"vkEnumerateInstanceVersion", kit::slot<&GlobalFns::vkEnumerateInstanceVersion>, false},
    {"vkCreateInstance", kit::slot<&GlobalFns::vkCreateInstance>, true},
};

// X(name): every function of the instance, all required.
#define HURRAY_VULKAN_INSTANCE_FUNCTIONS(X)         \
  X(vkDestroyInstance)                              \
  X(vkEnumeratePhysicalDevices)                     \
  X(vkGetPhysicalDeviceProperties)                  \
  X(vkGetPhysicalDeviceProperties2)                 \
  X(vkGetPhysicalDeviceFeatures2)                   \
  X(vkGetPhysicalDeviceMemoryProperties)            \
  X(vkGetPhysicalDeviceQueueFamilyProperties)       \
  X(vkEnumerateDeviceExtensionProperties)           \
  X(vkGetPhysicalDeviceExternalBufferProperties)    \
  X(vkGetPhysicalDeviceExternalSemaphoreProperties) \
  X(vkCreateDevice)                                 \
  X(vkGetDeviceProcAddr)

// X(name): every core function of a device, all required.
#define HURRAY_VULKAN_DEVICE_FUNCTIONS(X) \
  X(vkDestroyDevice)                      \
  X(vkGetDeviceQueue)                     \
  X(vkDeviceWaitIdle)                     \
  X(vkAllocateMemory)                     \
  X(vkFreeMemory)                         \
  X(vkMapMemory)                          \
  X(vkUnmapMemory)                        \
  X(vkFlushMappedMemoryRanges)            \
  X(vkInvalidateMappedMemoryRanges)       \
  X(vkCreateBuffer)                       \
  X(vkDestroyBuffer)                      \
  X(vkGetBufferMemoryRequirements)        \
  X(vkBindBufferMemory)                   \
  X(vkCreateCommandPool)                  \
  X(vkDestroyCommandPool)                 \
  X(vkAllocateCommandBuffers)             \
  X(vkBeginCommandBuffer)                 \
  X(vkEndCommandBuffer)                   \
  X(vkCmdPipelineBarrier)                 \
  X(vkCmdCopyBuffer)                      \
  X(vkQueueSubmit)                        \
  X(vkCreateFence)                        \
  X(vkDestroyFence)                       \
  X(vkWaitForFences)                      \
  X(vkResetFences)                        \
  X(vkCreateSemaphore)                    \
  X(vkDestroySemaphore)                   \
  X(vkWaitSemaphores)                     \
  X(vkSignalSemaphore)                    \
  X(vkGetSemaphoreCounterValue)

struct InstanceFns {
#define HURRAY_VULKAN_MEMBER_(name) PFN_##name name = nullptr;
  HURRAY_VULKAN_INSTANCE_FUNCTIONS(HURRAY_VULKAN_MEMBER_)
};
struct DeviceFns {
  HURRAY_VULKAN_DEVICE_FUNCTIONS(HURRAY_VULKAN_MEMBER_)
#undef HURRAY_VULKAN_MEMBER_
  // Present only with their extension (VK_KHR_external_memory_fd,
  // VK_KHR_external_semaphore_fd).
  PFN_vkGetMemoryFdKHR vkGetMemoryFdKHR = nullptr;
  PFN_vkGetSemaphoreFdKHR vkGetSemaphoreFdKHR = nullptr;
  PFN_vkImportSemaphoreFdKHR vkImportSemaphoreFdKHR = nullptr;
};

inline constexpr kit::Symbol<InstanceFns> kInstanceSymbols[] = {
#define HURRAY_VULKAN_SYMBOL_(name) {#name, kit::slot<&InstanceFns::name>, true},
    HURRAY_VULKAN_INSTANCE_FUNCTIONS(HURRAY_VULKAN_SYMBOL_)
#undef HURRAY_VULKAN_SYMBOL_
};
inline constexpr kit::Symbol<DeviceFns> kDeviceSymbols[] = {
#define HURRAY_VULKAN_SYMBOL_(name) {#name, kit::slot<&DeviceFns::name>, true},
    HURRAY_VULKAN_DEVICE_FUNCTIONS(HURRAY_VULKAN_SYMBOL_)
#undef HURRAY_VULKAN_SYMBOL_
};
// Looked up when the device enabled VK_KHR_external_memory_fd.
inline constexpr kit::Symbol<DeviceFns> kMemoryFdSymbols[] = {
    {"vkGetMemoryFdKHR", kit::slot<&DeviceFns::vkGetMemoryFdKHR>, false},
};
// Looked up when the device enabled VK_KHR_external_semaphore_fd.
inline constexpr kit::Symbol<DeviceFns> kSemaphoreFdSymbols[] = {
    {"vkGetSemaphoreFdKHR", kit::slot<&DeviceFns::vkGetSemaphoreFdKHR>, false},
    {"vkImportSemaphoreFdKHR", kit::slot<&DeviceFns::vkImportSemaphoreFdKHR>, false},
};

// get(handle, name) as a kit lookup: vkGetInstanceProcAddr with an instance
// (VK_NULL_HANDLE: the global functions), vkGetDeviceProcAddr with a device.
// The Resolver must outlive the lookup.
template <class Get, class Handle>
struct Resolver {
  Get get;
  Handle handle;
};
using InstanceResolver = Resolver<PFN_vkGetInstanceProcAddr, VkInstance>;
using DeviceResolver = Resolver<PFN_vkGetDeviceProcAddr, VkDevice>;

template <class Get, class Handle>
kit::Lookup lookup_in(const Resolver<Get, Handle> &at) noexcept {
  return kit::Lookup{[](void *context, const char *name) noexcept -> kit::AnyFunction {
                       const auto *r = static_cast<const Resolver<Get, Handle> *>(context);
                       return r->get(r->handle, name);
                     },
                     const_cast<Resolver<Get, Handle> *>(&at)};
}

}  // namespace hurray::vulkan
