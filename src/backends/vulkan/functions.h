// The Vulkan functions the plugin calls, as tables of the plugin kit
// (kit/library.h): the loader's global functions, the instance's, the
// device's (core and extension), each looked up through the resolver
// Vulkan gives for its level (vkGetInstanceProcAddr, vkGetDeviceProcAddr).
// device.cpp resolves them in probe(); the rest of the plugin calls
// through State::fn and Device::fn.
//
// Each struct has one table, and a static_assert that the table names every
// member: a function added to a struct and left out of its table (a null
// pointer called later) does not compile.
#pragma once

#include <vulkan/vulkan.h>

#include "kit/library.h"

namespace hurray::vulkan {

// The one function looked up with dlsym in the loader.
struct LoaderFns {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
};
inline constexpr kit::Symbol<LoaderFns> kLoaderSymbols[] = {
    kit::required<&LoaderFns::vkGetInstanceProcAddr>,
};
static_assert(kit::names_every_member(kLoaderSymbols));

// Before an instance exists: looked up with vkGetInstanceProcAddr(NULL, ...).
// vkEnumerateInstanceVersion is absent from Vulkan 1.0 loaders.
struct GlobalFns {
  PFN_vkEnumerateInstanceVersion vkEnumerateInstanceVersion = nullptr;
  PFN_vkCreateInstance vkCreateInstance = nullptr;
};
inline constexpr kit::Symbol<GlobalFns> kGlobalSymbols[] = {
    kit::optional<&GlobalFns::vkEnumerateInstanceVersion>,
    kit::required<&GlobalFns::vkCreateInstance>,
};
static_assert(kit::names_every_member(kGlobalSymbols));

// Every function of the instance, all required.
struct InstanceFns {
  PFN_vkDestroyInstance vkDestroyInstance = nullptr;
  PFN_vkEnumeratePhysicalDevices vkEnumeratePhysicalDevices = nullptr;
  PFN_vkGetPhysicalDeviceProperties vkGetPhysicalDeviceProperties = nullptr;
  PFN_vkGetPhysicalDeviceProperties2 vkGetPhysicalDeviceProperties2 = nullptr;
  PFN_vkGetPhysicalDeviceFeatures2 vkGetPhysicalDeviceFeatures2 = nullptr;
  PFN_vkGetPhysicalDeviceMemoryProperties vkGetPhysicalDeviceMemoryProperties = nullptr;
  PFN_vkGetPhysicalDeviceQueueFamilyProperties vkGetPhysicalDeviceQueueFamilyProperties = nullptr;
  PFN_vkEnumerateDeviceExtensionProperties vkEnumerateDeviceExtensionProperties = nullptr;
  PFN_vkGetPhysicalDeviceExternalBufferProperties vkGetPhysicalDeviceExternalBufferProperties =
      nullptr;
  PFN_vkGetPhysicalDeviceExternalSemaphoreProperties
      vkGetPhysicalDeviceExternalSemaphoreProperties = nullptr;
  PFN_vkCreateDevice vkCreateDevice = nullptr;
  PFN_vkGetDeviceProcAddr vkGetDeviceProcAddr = nullptr;
};
inline constexpr kit::Symbol<InstanceFns> kInstanceSymbols[] = {
    kit::required<&InstanceFns::vkDestroyInstance>,
    kit::required<&InstanceFns::vkEnumeratePhysicalDevices>,
    kit::required<&InstanceFns::vkGetPhysicalDeviceProperties>,
    kit::required<&InstanceFns::vkGetPhysicalDeviceProperties2>,
    kit::required<&InstanceFns::vkGetPhysicalDeviceFeatures2>,
    kit::required<&InstanceFns::vkGetPhysicalDeviceMemoryProperties>,
    kit::required<&InstanceFns::vkGetPhysicalDeviceQueueFamilyProperties>,
    kit::required<&InstanceFns::vkEnumerateDeviceExtensionProperties>,
    kit::required<&InstanceFns::vkGetPhysicalDeviceExternalBufferProperties>,
    kit::required<&InstanceFns::vkGetPhysicalDeviceExternalSemaphoreProperties>,
    kit::required<&InstanceFns::vkCreateDevice>,
    kit::required<&InstanceFns::vkGetDeviceProcAddr>,
};
static_assert(kit::names_every_member(kInstanceSymbols));

// Every core function of a device, all required.
struct DeviceCoreFns {
  PFN_vkDestroyDevice vkDestroyDevice = nullptr;
  PFN_vkGetDeviceQueue vkGetDeviceQueue = nullptr;
  PFN_vkDeviceWaitIdle vkDeviceWaitIdle = nullptr;
  PFN_vkAllocateMemory vkAllocateMemory = nullptr;
  PFN_vkFreeMemory vkFreeMemory = nullptr;
  PFN_vkMapMemory vkMapMemory = nullptr;
  PFN_vkUnmapMemory vkUnmapMemory = nullptr;
  PFN_vkFlushMappedMemoryRanges vkFlushMappedMemoryRanges = nullptr;
  PFN_vkInvalidateMappedMemoryRanges vkInvalidateMappedMemoryRanges = nullptr;
  PFN_vkCreateBuffer vkCreateBuffer = nullptr;
  PFN_vkDestroyBuffer vkDestroyBuffer = nullptr;
  PFN_vkGetBufferMemoryRequirements vkGetBufferMemoryRequirements = nullptr;
  PFN_vkBindBufferMemory vkBindBufferMemory = nullptr;
  PFN_vkCreateCommandPool vkCreateCommandPool = nullptr;
  PFN_vkDestroyCommandPool vkDestroyCommandPool = nullptr;
  PFN_vkAllocateCommandBuffers vkAllocateCommandBuffers = nullptr;
  PFN_vkBeginCommandBuffer vkBeginCommandBuffer = nullptr;
  PFN_vkEndCommandBuffer vkEndCommandBuffer = nullptr;
  PFN_vkCmdPipelineBarrier vkCmdPipelineBarrier = nullptr;
  PFN_vkCmdCopyBuffer vkCmdCopyBuffer = nullptr;
  PFN_vkQueueSubmit vkQueueSubmit = nullptr;
  PFN_vkCreateFence vkCreateFence = nullptr;
  PFN_vkDestroyFence vkDestroyFence = nullptr;
  PFN_vkWaitForFences vkWaitForFences = nullptr;
  PFN_vkResetFences vkResetFences = nullptr;
  PFN_vkCreateSemaphore vkCreateSemaphore = nullptr;
  PFN_vkDestroySemaphore vkDestroySemaphore = nullptr;
  PFN_vkWaitSemaphores vkWaitSemaphores = nullptr;
  PFN_vkSignalSemaphore vkSignalSemaphore = nullptr;
  PFN_vkGetSemaphoreCounterValue vkGetSemaphoreCounterValue = nullptr;
};
inline constexpr kit::Symbol<DeviceCoreFns> kDeviceSymbols[] = {
    kit::required<&DeviceCoreFns::vkDestroyDevice>,
    kit::required<&DeviceCoreFns::vkGetDeviceQueue>,
    kit::required<&DeviceCoreFns::vkDeviceWaitIdle>,
    kit::required<&DeviceCoreFns::vkAllocateMemory>,
    kit::required<&DeviceCoreFns::vkFreeMemory>,
    kit::required<&DeviceCoreFns::vkMapMemory>,
    kit::required<&DeviceCoreFns::vkUnmapMemory>,
    kit::required<&DeviceCoreFns::vkFlushMappedMemoryRanges>,
    kit::required<&DeviceCoreFns::vkInvalidateMappedMemoryRanges>,
    kit::required<&DeviceCoreFns::vkCreateBuffer>,
    kit::required<&DeviceCoreFns::vkDestroyBuffer>,
    kit::required<&DeviceCoreFns::vkGetBufferMemoryRequirements>,
    kit::required<&DeviceCoreFns::vkBindBufferMemory>,
    kit::required<&DeviceCoreFns::vkCreateCommandPool>,
    kit::required<&DeviceCoreFns::vkDestroyCommandPool>,
    kit::required<&DeviceCoreFns::vkAllocateCommandBuffers>,
    kit::required<&DeviceCoreFns::vkBeginCommandBuffer>,
    kit::required<&DeviceCoreFns::vkEndCommandBuffer>,
    kit::required<&DeviceCoreFns::vkCmdPipelineBarrier>,
    kit::required<&DeviceCoreFns::vkCmdCopyBuffer>,
    kit::required<&DeviceCoreFns::vkQueueSubmit>,
    kit::required<&DeviceCoreFns::vkCreateFence>,
    kit::required<&DeviceCoreFns::vkDestroyFence>,
    kit::required<&DeviceCoreFns::vkWaitForFences>,
    kit::required<&DeviceCoreFns::vkResetFences>,
    kit::required<&DeviceCoreFns::vkCreateSemaphore>,
    kit::required<&DeviceCoreFns::vkDestroySemaphore>,
    kit::required<&DeviceCoreFns::vkWaitSemaphores>,
    kit::required<&DeviceCoreFns::vkSignalSemaphore>,
    kit::required<&DeviceCoreFns::vkGetSemaphoreCounterValue>,
};
static_assert(kit::names_every_member(kDeviceSymbols));

// Present only with VK_KHR_external_memory_fd; looked up when the device
// enabled it.
struct MemoryFdFns {
  PFN_vkGetMemoryFdKHR vkGetMemoryFdKHR = nullptr;
};
inline constexpr kit::Symbol<MemoryFdFns> kMemoryFdSymbols[] = {
    kit::optional<&MemoryFdFns::vkGetMemoryFdKHR>,
};
static_assert(kit::names_every_member(kMemoryFdSymbols));

// Present only with VK_KHR_external_semaphore_fd; looked up when the device
// enabled it.
struct SemaphoreFdFns {
  PFN_vkGetSemaphoreFdKHR vkGetSemaphoreFdKHR = nullptr;
  PFN_vkImportSemaphoreFdKHR vkImportSemaphoreFdKHR = nullptr;
};
inline constexpr kit::Symbol<SemaphoreFdFns> kSemaphoreFdSymbols[] = {
    kit::optional<&SemaphoreFdFns::vkGetSemaphoreFdKHR>,
    kit::optional<&SemaphoreFdFns::vkImportSemaphoreFdKHR>,
};
static_assert(kit::names_every_member(kSemaphoreFdSymbols));

// A device's functions, called as d->fn.vkX whichever table resolved them;
// each part is resolved into through its base (kit::resolve_symbols<Part>).
// Nothing is declared here directly, so the three tables cover it.
struct DeviceFns : DeviceCoreFns, MemoryFdFns, SemaphoreFdFns {};
static_assert(sizeof(DeviceFns) ==
              sizeof(DeviceCoreFns) + sizeof(MemoryFdFns) + sizeof(SemaphoreFdFns));

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
