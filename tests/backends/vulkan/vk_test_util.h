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

// The Vulkan functions the tests call, for one device.
struct Vk {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice phys = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;  // the plugin's
  uint32_t family = 0;
  VkSemaphore timeline = VK_NULL_HANDLE;
  PFN_vkGetInstanceProcAddr gipa = nullptr;

#define HVK_TEST_FNS(X)                       \
  X(vkGetDeviceProcAddr)                      \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkGetPhysicalDeviceMemoryProperties)      \
  X(vkGetDeviceQueue)                         \
  X(vkCreateBuffer)                           \
  X(vkDestroyBuffer)                          \
  X(vkGetBufferMemoryRequirements)            \
  X(vkBindBufferMemory)                       \
  X(vkAllocateMemory)                         \
  X(vkFreeMemory)                             \
  X(vkMapMemory)                              \
  X(vkUnmapMemory)                            \
  X(vkCreateShaderModule)                     \
  X(vkDestroyShaderModule)                    \
  X(vkCreateDescriptorSetLayout)              \
  X(vkDestroyDescriptorSetLayout)             \
  X(vkCreatePipelineLayout)                   \
  X(vkDestroyPipelineLayout)                  \
  X(vkCreateComputePipelines)                 \
  X(vkDestroyPipeline)                        \
  X(vkCreateDescriptorPool)                   \
  X(vkDestroyDescriptorPool)                  \
  X(vkAllocateDescriptorSets)                 \
  X(vkUpdateDescriptorSets)                   \
  X(vkCreateCommandPool)                      \
  X(vkDestroyCommandPool)                     \
  X(vkAllocateCommandBuffers)                 \
  X(vkBeginCommandBuffer)                     \
  X(vkEndCommandBuffer)                       \
  X(vkCmdBindPipeline)                        \
  X(vkCmdBindDescriptorSets)                  \
  X(vkCmdPushConstants)                       \
  X(vkCmdDispatch)                            \
  X(vkCmdCopyBuffer)                          \
  X(vkCmdPipelineBarrier)                     \
  X(vkQueueSubmit)                            \
  X(vkQueueWaitIdle)                          \
  X(vkCreateFence)                            \
  X(vkDestroyFence)                           \
  X(vkWaitForFences)                          \
  X(vkGetSemaphoreCounterValue)
#define HVK_TEST_MEMBER(name) PFN_##name name = nullptr;
  HVK_TEST_FNS(HVK_TEST_MEMBER)
#undef HVK_TEST_MEMBER

  // Resolves everything for `device` of the plugin (REQUIREs success).
  explicit Vk(int32_t ordinal);
  // Queue count of the plugin's queue family.
  uint32_t family_queue_count() const;
  // A memory type in `bits` with all of `flags`, or -1.
  int memory_type(uint32_t bits, VkMemoryPropertyFlags flags) const;
};

}  // namespace hvk
