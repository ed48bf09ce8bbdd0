// Shared by the Vulkan plugin tests: the plugin, opened with dlopen and used
// only through its hurray_backend_v1 table, and the Vulkan functions a test
// needs, resolved through native handle 5 (the plugin's
// vkGetInstanceProcAddr) so that nothing here links libvulkan.
#pragma once

#include <hurray_backend.h>
#include <vulkan/vulkan.h>

#include <cstdint>
#include <string>

namespace hvk {

// The plugin's table (dlopen + hurray_backend_entry; a failure fails the
// test, it never skips).
const hurray_backend_v1 &table();

// The probed state, probed once per process. When probe fails (no Vulkan
// loader or driver) this prints the reason and exits with 77, which CTest
// reports as a skipped test.
void *state();

// What device_info and native answer for device d (REQUIREs success).
hurray_backend_device_info info_of(int32_t d);
hurray_backend_native native_of(int32_t d);

// "HURRAY_E_DEVICE_UNAVAILABLE" for 10 (libhurray is not linked here).
const char *status_name(int status);

// Runs this executable again as "--probe-child" with `env` (NAME=value
// entries, added to the environment) and returns what it printed:
// "status=<n>\nmessage=<text>\n".
std::string probe_in_child(const char *const *env, int *exit_code);
int probe_child_main();

// The Vulkan functions the tests call, each member named as Vulkan names the
// function: main.cpp looks each up by its member's name.
struct VkFunctions {
  PFN_vkGetPhysicalDeviceQueueFamilyProperties vkGetPhysicalDeviceQueueFamilyProperties = nullptr;
  PFN_vkGetPhysicalDeviceMemoryProperties vkGetPhysicalDeviceMemoryProperties = nullptr;
  PFN_vkGetDeviceQueue vkGetDeviceQueue = nullptr;
  PFN_vkCreateBuffer vkCreateBuffer = nullptr;
  PFN_vkDestroyBuffer vkDestroyBuffer = nullptr;
  PFN_vkGetBufferMemoryRequirements vkGetBufferMemoryRequirements = nullptr;
  PFN_vkBindBufferMemory vkBindBufferMemory = nullptr;
  PFN_vkAllocateMemory vkAllocateMemory = nullptr;
  PFN_vkFreeMemory vkFreeMemory = nullptr;
  PFN_vkMapMemory vkMapMemory = nullptr;
  PFN_vkUnmapMemory vkUnmapMemory = nullptr;
  PFN_vkCreateShaderModule vkCreateShaderModule = nullptr;
  PFN_vkDestroyShaderModule vkDestroyShaderModule = nullptr;
  PFN_vkCreateDescriptorSetLayout vkCreateDescriptorSetLayout = nullptr;
  PFN_vkDestroyDescriptorSetLayout vkDestroyDescriptorSetLayout = nullptr;
  PFN_vkCreatePipelineLayout vkCreatePipelineLayout = nullptr;
  PFN_vkDestroyPipelineLayout vkDestroyPipelineLayout = nullptr;
  PFN_vkCreateComputePipelines vkCreateComputePipelines = nullptr;
  PFN_vkDestroyPipeline vkDestroyPipeline = nullptr;
  PFN_vkCreateDescriptorPool vkCreateDescriptorPool = nullptr;
  PFN_vkDestroyDescriptorPool vkDestroyDescriptorPool = nullptr;
  PFN_vkAllocateDescriptorSets vkAllocateDescriptorSets = nullptr;
  PFN_vkUpdateDescriptorSets vkUpdateDescriptorSets = nullptr;
  PFN_vkCreateCommandPool vkCreateCommandPool = nullptr;
  PFN_vkDestroyCommandPool vkDestroyCommandPool = nullptr;
  PFN_vkAllocateCommandBuffers vkAllocateCommandBuffers = nullptr;
  PFN_vkBeginCommandBuffer vkBeginCommandBuffer = nullptr;
  PFN_vkEndCommandBuffer vkEndCommandBuffer = nullptr;
  PFN_vkCmdBindPipeline vkCmdBindPipeline = nullptr;
  PFN_vkCmdBindDescriptorSets vkCmdBindDescriptorSets = nullptr;
  PFN_vkCmdPushConstants vkCmdPushConstants = nullptr;
  PFN_vkCmdDispatch vkCmdDispatch = nullptr;
  PFN_vkCmdCopyBuffer vkCmdCopyBuffer = nullptr;
  PFN_vkCmdPipelineBarrier vkCmdPipelineBarrier = nullptr;
  PFN_vkQueueSubmit vkQueueSubmit = nullptr;
  PFN_vkQueueWaitIdle vkQueueWaitIdle = nullptr;
  PFN_vkCreateFence vkCreateFence = nullptr;
  PFN_vkDestroyFence vkDestroyFence = nullptr;
  PFN_vkWaitForFences vkWaitForFences = nullptr;
  PFN_vkGetSemaphoreCounterValue vkGetSemaphoreCounterValue = nullptr;
};

// The Vulkan functions the tests call, for one device.
struct Vk : VkFunctions {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice phys = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;  // the plugin's
  uint32_t family = 0;
  VkSemaphore timeline = VK_NULL_HANDLE;
  // What looks up the functions: for the device, else for the instance.
  PFN_vkGetInstanceProcAddr gipa = nullptr;
  PFN_vkGetDeviceProcAddr vkGetDeviceProcAddr = nullptr;

  // Resolves everything for `device` of the plugin (REQUIREs success).
  explicit Vk(int32_t ordinal);
  // Queue count of the plugin's queue family.
  uint32_t family_queue_count() const;
  // A memory type in `bits` with all of `flags`, or -1.
  int memory_type(uint32_t bits, VkMemoryPropertyFlags flags) const;
};

}  // namespace hvk
