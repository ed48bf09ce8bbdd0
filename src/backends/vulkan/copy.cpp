// The Vulkan plugin: copies between host memory and allocations.
#include "state.h"

namespace hurray::vulkan {

// -------------------------------------------------------------- copies ----

hurray_status check_range(const hurray_backend_allocation *a, uint64_t offset, const void *host,
                          uint64_t n, const char *what, hurray_error *err) {
  if (!a) return refuse(err, HURRAY_E_INVALID_ARGUMENT, "%s: allocation is NULL", what);
  if (offset > a->byte_size || n > a->byte_size - offset)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT,
                  "%s: bytes [%llu, %llu + %llu) lie outside the %llu-byte allocation", what,
                  static_cast<unsigned long long>(offset), static_cast<unsigned long long>(offset),
                  static_cast<unsigned long long>(n),
                  static_cast<unsigned long long>(a->byte_size));
  if (n && !host) return refuse(err, HURRAY_E_INVALID_ARGUMENT, "%s: host pointer is NULL", what);
  if (n && !a->plugin_data)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT, "%s: not an allocation of the vulkan backend",
                  what);
  return HURRAY_OK;
}

// Copy n bytes between `host` and the allocation through a staging buffer
// and vkCmdCopyBuffer on the plugin's queue.
hurray_status staged_copy(Device &d, Allocation &a, uint64_t offset, void *host, uint64_t n,
                          bool to_host, hurray_error *err) {
  const char *what = to_host ? "copy_to_host" : "copy_from_host";
  const uint64_t chunk = std::min<uint64_t>(n, uint64_t{16} << 20);
  VkBuffer staging = VK_NULL_HANDLE;
  VkDeviceMemory smem = VK_NULL_HANDLE;
  void *sptr = nullptr;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  struct Cleanup {
    Device &d;
    VkBuffer &b;
    VkDeviceMemory &m;
    void *&p;
    VkCommandPool &pool;
    VkFence &fence;
    ~Cleanup() {
      if (fence) d.fn.vkDestroyFence(d.dev, fence, nullptr);
      if (pool) d.fn.vkDestroyCommandPool(d.dev, pool, nullptr);
      if (p) d.fn.vkUnmapMemory(d.dev, m);
      if (b) d.fn.vkDestroyBuffer(d.dev, b, nullptr);
      if (m) d.fn.vkFreeMemory(d.dev, m, nullptr);
    }
  } cleanup{d, staging, smem, sptr, pool, fence};

  VkBufferCreateInfo bci{};
  bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bci.size = chunk;
  bci.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult r = d.fn.vkCreateBuffer(d.dev, &bci, nullptr, &staging);
  if (r != VK_SUCCESS) {
    staging = VK_NULL_HANDLE;
    return vk_fail(err, status_of(r), "vkCreateBuffer", r, "%s staging on %s", what,
                   d.label.c_str());
  }
  VkMemoryRequirements req{};
  d.fn.vkGetBufferMemoryRequirements(d.dev, staging, &req);
  const int type = d.pick_type(kStaging, req.memoryTypeBits);
  if (type < 0)
    return refuse(err, HURRAY_E_DEVICE_UNAVAILABLE,
                  "%s: %s has no host-visible memory type for a staging buffer", what,
                  d.label.c_str());
  const bool coherent = (d.mem.memoryTypes[type].propertyFlags & kHC) != 0;
  VkMemoryAllocateInfo mai{};
  mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  mai.allocationSize = round_up(req.size, d.atom);
  mai.memoryTypeIndex = static_cast<uint32_t>(type);
  r = d.fn.vkAllocateMemory(d.dev, &mai, nullptr, &smem);
  if (r != VK_SUCCESS) {
    smem = VK_NULL_HANDLE;
    return vk_fail(err, status_of(r), "vkAllocateMemory", r, "%llu-byte %s staging on %s",
                   static_cast<unsigned long long>(mai.allocationSize), what, d.label.c_str());
  }
  if ((r = d.fn.vkBindBufferMemory(d.dev, staging, smem, 0)) != VK_SUCCESS)
    return vk_fail(err, status_of(r), "vkBindBufferMemory", r, "%s staging", what);
  if ((r = d.fn.vkMapMemory(d.dev, smem, 0, VK_WHOLE_SIZE, 0, &sptr)) != VK_SUCCESS) {
    sptr = nullptr;
    return vk_fail(err, status_of(r), "vkMapMemory", r, "%s staging", what);
  }
  VkCommandPoolCreateInfo pci{};
  pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pci.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT |
              VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = d.family;
  if ((r = d.fn.vkCreateCommandPool(d.dev, &pci, nullptr, &pool)) != VK_SUCCESS) {
    pool = VK_NULL_HANDLE;
    return vk_fail(err, status_of(r), "vkCreateCommandPool", r, "%s", what);
  }
  VkCommandBufferAllocateInfo cai{};
  cai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  cai.commandPool = pool;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  if ((r = d.fn.vkAllocateCommandBuffers(d.dev, &cai, &cb)) != VK_SUCCESS)
    return vk_fail(err, status_of(r), "vkAllocateCommandBuffers", r, "%s", what);
  VkFenceCreateInfo fci{};
  fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  if ((r = d.fn.vkCreateFence(d.dev, &fci, nullptr, &fence)) != VK_SUCCESS) {
    fence = VK_NULL_HANDLE;
    return vk_fail(err, status_of(r), "vkCreateFence", r, "%s", what);
  }

  auto *bytes = static_cast<unsigned char *>(host);
  for (uint64_t done = 0; done < n;) {
    const uint64_t len = std::min(chunk, n - done);
    if (!to_host) {
      std::memcpy(sptr, bytes + done, len);
      if (!coherent)
        if (const hurray_status st = sync_mapping(d, smem, mai.allocationSize, 0, len, true, err);
            st != HURRAY_OK)
          return st;
    }
    VkCommandBufferBeginInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    if ((r = d.fn.vkBeginCommandBuffer(cb, &bi)) != VK_SUCCESS)
      return vk_fail(err, status_of(r), "vkBeginCommandBuffer", r, "%s", what);
    // Order after earlier work on the queue: its writes (to_host) or its
    // reads and writes (from_host) come before the copy.
    VkMemoryBarrier before{};
    before.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    before.srcAccessMask = to_host ? VK_ACCESS_MEMORY_WRITE_BIT
                                   : (VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
    before.dstAccessMask = to_host ? VK_ACCESS_TRANSFER_READ_BIT : VK_ACCESS_TRANSFER_WRITE_BIT;
    d.fn.vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                              VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &before, 0, nullptr, 0,
                              nullptr);
    VkBufferCopy region{};
    region.size = len;
    if (to_host) {
      region.srcOffset = a.offset + offset + done;
      d.fn.vkCmdCopyBuffer(cb, a.buffer, staging, 1, &region);
    } else {
      region.dstOffset = a.offset + offset + done;
      d.fn.vkCmdCopyBuffer(cb, staging, a.buffer, 1, &region);
    }
    VkMemoryBarrier after{};
    after.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    after.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    after.dstAccessMask = to_host ? VK_ACCESS_HOST_READ_BIT
                                  : (VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
    d.fn.vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
                              to_host ? VK_PIPELINE_STAGE_HOST_BIT
                                      : VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                              0, 1, &after, 0, nullptr, 0, nullptr);
    if ((r = d.fn.vkEndCommandBuffer(cb)) != VK_SUCCESS)
      return vk_fail(err, status_of(r), "vkEndCommandBuffer", r, "%s", what);
    {
      std::lock_guard<std::mutex> lock(d.mu);
      r = submit_locked(d, d.queue, cb, VK_NULL_HANDLE, 0, VK_NULL_HANDLE, 0, fence);
    }
    if (r != VK_SUCCESS)
      return vk_fail(err, status_of(r), "vkQueueSubmit", r, "%s on %s", what, d.label.c_str());
    if ((r = d.fn.vkWaitForFences(d.dev, 1, &fence, VK_TRUE, UINT64_MAX)) != VK_SUCCESS)
      return vk_fail(err, status_of(r), "vkWaitForFences", r, "%s on %s", what,
                     d.label.c_str());
    if ((r = d.fn.vkResetFences(d.dev, 1, &fence)) != VK_SUCCESS)
      return vk_fail(err, status_of(r), "vkResetFences", r, "%s", what);
    if (to_host) {
      if (!coherent)
        if (const hurray_status st =
                sync_mapping(d, smem, mai.allocationSize, 0, len, false, err);
            st != HURRAY_OK)
          return st;
      std::memcpy(bytes + done, sptr, len);
    }
    done += len;
  }
  return HURRAY_OK;
}

hurray_status copy_impl(const hurray_backend_allocation *alloc, uint64_t offset, void *host,
                        uint64_t n, bool to_host, hurray_error *err) {
  const char *what = to_host ? "copy_to_host" : "copy_from_host";
  if (const hurray_status st = check_range(alloc, offset, host, n, what, err); st != HURRAY_OK)
    return st;
  if (n == 0) return HURRAY_OK;
  Allocation &a = *static_cast<Allocation *>(alloc->plugin_data);
  Device &d = *a.dev;
  if (!a.base) return staged_copy(d, a, offset, host, n, to_host, err);
  // Mapped: after the plugin's queue is drained, memcpy (+ flush/invalidate).
  if (const hurray_status st = drain_plugin_queue(d, err); st != HURRAY_OK) return st;
  const uint64_t start = a.offset + offset;
  unsigned char *mapped = static_cast<unsigned char *>(a.base) + start;
  if (to_host) {
    if (!a.coherent)
      if (const hurray_status st = sync_mapping(d, a.memory, a.size, start, n, false, err);
          st != HURRAY_OK)
        return st;
    std::memcpy(host, mapped, n);
  } else {
    std::memcpy(mapped, host, n);
    if (!a.coherent)
      if (const hurray_status st = sync_mapping(d, a.memory, a.size, start, n, true, err);
          st != HURRAY_OK)
        return st;
  }
  return HURRAY_OK;
}

}  // namespace hurray::vulkan
