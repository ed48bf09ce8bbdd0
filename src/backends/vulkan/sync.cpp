// The Vulkan plugin: queue submission helpers and timeline-semaphore events.
#include "state.h"

namespace hurray::vulkan {

// ------------------------------------------------------ queue helpers ----

// One batch: optional command buffer, optional timeline wait and signal.
// The caller holds dev.mu.
VkResult submit_locked(Device &d, VkQueue queue, VkCommandBuffer cb,
                       VkSemaphore wait, uint64_t wait_value, VkSemaphore signal,
                       uint64_t signal_value, VkFence fence) noexcept {
  const VkPipelineStageFlags wait_stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
  VkTimelineSemaphoreSubmitInfo tl{};
  tl.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
  tl.waitSemaphoreValueCount = wait ? 1u : 0u;
  tl.pWaitSemaphoreValues = &wait_value;
  tl.signalSemaphoreValueCount = signal ? 1u : 0u;
  tl.pSignalSemaphoreValues = &signal_value;
  VkSubmitInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  si.pNext = &tl;
  si.waitSemaphoreCount = wait ? 1u : 0u;
  si.pWaitSemaphores = &wait;
  si.pWaitDstStageMask = &wait_stage;
  si.commandBufferCount = cb ? 1u : 0u;
  si.pCommandBuffers = &cb;
  si.signalSemaphoreCount = signal ? 1u : 0u;
  si.pSignalSemaphores = &signal;
  return d.fn.vkQueueSubmit(queue, 1, &si, fence);
}

VkResult create_timeline(Device &d, VkSemaphore *out) noexcept {
  VkExportSemaphoreCreateInfo exp{};
  exp.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO;
  exp.handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
  const VkSemaphoreTypeCreateInfo type = timeline_type(d.ipc_events ? &exp : nullptr);
  VkSemaphoreCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  ci.pNext = &type;
  return d.fn.vkCreateSemaphore(d.dev, &ci, nullptr, out);
}

// The timeline of `queue` (NULL: the plugin's). The caller holds d.mu.
hurray_status timeline_locked(Device &d, VkQueue queue, Timeline **out,
                              hurray_error *err) {
  if (!queue) queue = d.queue;
  for (Timeline &t : d.timelines)
    if (t.queue == queue) {
      *out = &t;
      return HURRAY_OK;
    }
  Timeline t;
  t.queue = queue;
  const VkResult r = create_timeline(d, &t.semaphore);
  if (r != VK_SUCCESS)
    return vk_fail(err, status_of(r), "vkCreateSemaphore", r,
                   "timeline semaphore for a stream of %s", d.label.c_str());
  d.timelines.push_back(t);
  *out = &d.timelines.back();
  return HURRAY_OK;
}

hurray_status wait_host(Device &d, VkSemaphore sem, uint64_t value,
                        hurray_error *err) {
  VkSemaphoreWaitInfo wi{};
  wi.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
  wi.semaphoreCount = 1;
  wi.pSemaphores = &sem;
  wi.pValues = &value;
  const VkResult r = d.fn.vkWaitSemaphores(d.dev, &wi, UINT64_MAX);
  if (r != VK_SUCCESS)
    return vk_fail(err, status_of(r), "vkWaitSemaphores", r,
                   "host wait for value %llu on %s",
                   static_cast<unsigned long long>(value), d.label.c_str());
  return HURRAY_OK;
}

// Wait on the host until everything submitted so far to the plugin's queue
// has completed, with its writes available to the host.
hurray_status drain_plugin_queue(Device &d, hurray_error *err) {
  VkSemaphore sem;
  uint64_t value;
  {
    std::lock_guard<std::mutex> lock(d.mu);
    Timeline &t = d.timelines.front();
    value = t.value + 1;
    const VkResult r =
        submit_locked(d, d.queue, d.host_barrier, VK_NULL_HANDLE, 0, t.semaphore, value,
                      VK_NULL_HANDLE);
    if (r != VK_SUCCESS)
      return vk_fail(err, status_of(r), "vkQueueSubmit", r,
                     "ordering a copy after the queue of %s", d.label.c_str());
    t.value = value;
    sem = t.semaphore;
  }
  return wait_host(d, sem, value, err);
}

// Flush (to device) or invalidate (from device) the mapped bytes
// [start, start + n) of a non-coherent allocation, widened to whole atoms.
hurray_status sync_mapping(Device &d, VkDeviceMemory memory, VkDeviceSize alloc_size,
                           uint64_t start, uint64_t n, bool flush,
                           hurray_error *err) {
  VkMappedMemoryRange range{};
  range.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE;
  range.memory = memory;
  range.offset = round_down(start, d.atom);
  const uint64_t end = round_up(start + n, d.atom);
  range.size = end >= alloc_size ? VK_WHOLE_SIZE : end - range.offset;
  const VkResult r = flush ? d.fn.vkFlushMappedMemoryRanges(d.dev, 1, &range)
                           : d.fn.vkInvalidateMappedMemoryRanges(d.dev, 1, &range);
  if (r != VK_SUCCESS)
    return vk_fail(err, status_of(r),
                   flush ? "vkFlushMappedMemoryRanges" : "vkInvalidateMappedMemoryRanges",
                   r, "%s", d.label.c_str());
  return HURRAY_OK;
}
// -------------------------------------------------------------- events ----

hurray_status event_record_impl(Device *d, void *stream, void **event, uint64_t *value,
                                hurray_error *err) {
  std::lock_guard<std::mutex> lock(d->mu);
  Timeline *t = nullptr;
  if (const hurray_status st = timeline_locked(*d, from_ptr<VkQueue>(stream), &t, err);
      st != HURRAY_OK)
    return st;
  const uint64_t v = t->value + 1;
  const VkCommandBuffer cb = t->queue == d->queue ? d->host_barrier : VK_NULL_HANDLE;
  const VkResult r =
      submit_locked(*d, t->queue, cb, VK_NULL_HANDLE, 0, t->semaphore, v, VK_NULL_HANDLE);
  if (r != VK_SUCCESS)
    return vk_fail(err, status_of(r), "vkQueueSubmit", r,
                   "signalling timeline value %llu on %s", static_cast<unsigned long long>(v),
                   d->label.c_str());
  t->value = v;
  *event = to_ptr(t->semaphore);
  *value = v;
  return HURRAY_OK;
}

hurray_status event_wait_impl(Device *d, void *event, uint64_t value, void *stream,
                              hurray_error *err) {
  const VkSemaphore sem = from_ptr<VkSemaphore>(event);
  if (!stream) return wait_host(*d, sem, value, err);
  std::lock_guard<std::mutex> lock(d->mu);
  const VkResult r = submit_locked(*d, from_ptr<VkQueue>(stream), VK_NULL_HANDLE, sem, value,
                                   VK_NULL_HANDLE, 0, VK_NULL_HANDLE);
  if (r != VK_SUCCESS)
    return vk_fail(err, status_of(r), "vkQueueSubmit", r,
                   "queue wait for timeline value %llu on %s",
                   static_cast<unsigned long long>(value), d->label.c_str());
  return HURRAY_OK;
}

void event_release_impl(State &s, int32_t device, void *event) noexcept {
  Device *d = nullptr;
  if (!event || hurray::kit::find_device(&s, device, &d, nullptr) != HURRAY_OK) return;
  const VkSemaphore sem = from_ptr<VkSemaphore>(event);
  std::lock_guard<std::mutex> lock(d->mu);
  auto it = std::find(d->imported.begin(), d->imported.end(), sem);
  if (it == d->imported.end()) return;  // a shared timeline: nothing to free
  d->fn.vkDestroySemaphore(d->dev, sem, nullptr);
  d->imported.erase(it);
}

}  // namespace hurray::vulkan
