// The Vulkan plugin's device 0 for the tests and benchmarks that call
// Vulkan themselves (through its native handles: nothing links the loader),
// and a gate on its queue: a submission that waits for a timeline semaphore
// only the host signals, so the device work queued after it waits until the
// caller opens the gate. No test framework here (the IPC peer and the
// benchmarks use it too): each step says whether it worked. Include after
// defining VK_NO_PROTOTYPES (the targets define it).
#pragma once

#include <hurray.h>
#include <hurray_backend.h>

#include <cstdint>
#include <cstring>

#include <vulkan/vulkan.h>

namespace hurray_test {

struct VkNative {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice phys = VK_NULL_HANDLE;
  VkDevice dev = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t family = 0;  // the queue's family (native slot 4)
  PFN_vkGetInstanceProcAddr gipa = nullptr;
  PFN_vkGetDeviceProcAddr gdpa = nullptr;
  PFN_vkQueueSubmit queue_submit = nullptr;

  // False when the plugin has no device 0 (err, when given, says why).
  bool load(hurray_error *err = nullptr) {
    hurray_backend_native n{};
    if (hurray_device_native(nullptr, HURRAY_DEVICE_VULKAN, 0, &n, err) != HURRAY_OK) return false;
    instance = static_cast<VkInstance>(n.handles[0]);
    phys = static_cast<VkPhysicalDevice>(n.handles[1]);
    dev = static_cast<VkDevice>(n.handles[2]);
    queue = static_cast<VkQueue>(n.handles[3]);
    family = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(n.handles[4]));
    std::memcpy(&gipa, &n.handles[5], sizeof gipa);
    gdpa = gipa ? reinterpret_cast<PFN_vkGetDeviceProcAddr>(gipa(instance, "vkGetDeviceProcAddr"))
                : nullptr;
    if (gdpa != nullptr) queue_submit = device_fn<PFN_vkQueueSubmit>("vkQueueSubmit");
    return queue_submit != nullptr;
  }
  template <class Pfn>
  Pfn device_fn(const char *name) const {
    return reinterpret_cast<Pfn>(gdpa(dev, name));
  }
  template <class Pfn>
  Pfn instance_fn(const char *name) const {
    return reinterpret_cast<Pfn>(gipa(instance, name));
  }
  // A new timeline semaphore at 0; VK_NULL_HANDLE when it cannot be made.
  VkSemaphore make_timeline() const {
    auto create = device_fn<PFN_vkCreateSemaphore>("vkCreateSemaphore");
    VkSemaphoreTypeCreateInfo type{};
    type.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkSemaphoreCreateInfo ci{};
    ci.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
    ci.pNext = &type;
    VkSemaphore s = VK_NULL_HANDLE;
    if (create == nullptr || create(dev, &ci, nullptr, &s) != VK_SUCCESS) return VK_NULL_HANDLE;
    return s;
  }
  // One submission on the plugin's queue: `cb` (may be VK_NULL_HANDLE) after
  // timeline `wait` reaches wait_value, then timeline `signal` set to
  // signal_value (either semaphore may be VK_NULL_HANDLE: none).
  bool submit_timeline(VkCommandBuffer cb, VkSemaphore wait, uint64_t wait_value,
                       VkSemaphore signal, uint64_t signal_value) const {
    const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    VkTimelineSemaphoreSubmitInfo tl{};
    tl.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
    tl.waitSemaphoreValueCount = wait ? 1 : 0;
    tl.pWaitSemaphoreValues = &wait_value;
    tl.signalSemaphoreValueCount = signal ? 1 : 0;
    tl.pSignalSemaphoreValues = &signal_value;
    VkSubmitInfo si{};
    si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    si.pNext = &tl;
    si.waitSemaphoreCount = wait ? 1 : 0;
    si.pWaitSemaphores = &wait;
    si.pWaitDstStageMask = &stage;
    si.commandBufferCount = cb ? 1 : 0;
    si.pCommandBuffers = &cb;
    si.signalSemaphoreCount = signal ? 1 : 0;
    si.pSignalSemaphores = &signal;
    return queue_submit(queue, 1, &si, VK_NULL_HANDLE) == VK_SUCCESS;
  }
};

// close() queues the gate; open() signals it (value 1). The destructor
// opens a gate still closed, waits for the queue to idle and destroys the
// semaphore.
class VkGateBase {
 public:
  VkNative vk;
  VkSemaphore gate = VK_NULL_HANDLE;

  VkGateBase() = default;
  VkGateBase(const VkGateBase &) = delete;
  VkGateBase &operator=(const VkGateBase &) = delete;
  ~VkGateBase() {
    if (gate == VK_NULL_HANDLE) return;
    (void)open();
    wait_idle_(vk.queue);
    destroy_(vk.dev, gate, nullptr);
  }

  // NULL when the gate is closed, else what failed.
  const char *close(hurray_error *err = nullptr) {
    if (!vk.load(err)) return "no Vulkan device";
    signal_ = vk.device_fn<PFN_vkSignalSemaphore>("vkSignalSemaphore");
    wait_idle_ = vk.device_fn<PFN_vkQueueWaitIdle>("vkQueueWaitIdle");
    destroy_ = vk.device_fn<PFN_vkDestroySemaphore>("vkDestroySemaphore");
    if (!signal_ || !wait_idle_ || !destroy_) return "Vulkan functions missing";
    if ((gate = vk.make_timeline()) == VK_NULL_HANDLE) return "vkCreateSemaphore";
    // The plugin's queue now waits for gate >= 1 before any later work.
    if (!vk.submit_timeline(VK_NULL_HANDLE, gate, 1, VK_NULL_HANDLE, 0)) {
      destroy_(vk.dev, gate, nullptr);
      gate = VK_NULL_HANDLE;
      return "vkQueueSubmit";
    }
    return nullptr;
  }
  // True once the gate is open (at once when it was already).
  bool open() {
    if (opened_) return true;
    VkSemaphoreSignalInfo s{};
    s.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO;
    s.semaphore = gate;
    s.value = 1;
    opened_ = signal_(vk.dev, &s) == VK_SUCCESS;
    return opened_;
  }

 private:
  PFN_vkSignalSemaphore signal_ = nullptr;
  PFN_vkQueueWaitIdle wait_idle_ = nullptr;
  PFN_vkDestroySemaphore destroy_ = nullptr;
  bool opened_ = false;
};

}  // namespace hurray_test
