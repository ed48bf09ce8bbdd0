// A compute shader writes a STANDARD (device-local, opaque) allocation on
// the plugin's queue; event_record marks the end of that work, and
// event_wait - on a second queue, or on the host - must order the read
// after it. fill.comp is compiled to SPIR-V at build time (glslangValidator).
#include <catch2/catch.hpp>

#include "vk_test_util.h"
#include "fill_comp_spv.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

using hvk::state;
using hvk::table;

namespace {

constexpr uint32_t kWords = 1u << 18;  // 1 MiB
constexpr uint32_t kRounds = 512;      // work per invocation

struct Params {
  uint32_t count, seed, rounds;
};

uint32_t expected(uint32_t i, uint32_t seed) {
  uint32_t x = i ^ seed;
  for (uint32_t k = 0; k < kRounds; ++k) x = x * 1664525u + 1013904223u;
  return x;
}

#define VK_OK(expr) REQUIRE((expr) == VK_SUCCESS)

// The pipeline, a buffer of the test's own over the plugin's VkDeviceMemory,
// and a command pool on the plugin's queue family.
struct Compute {
  hvk::Vk &vk;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkShaderModule module = VK_NULL_HANDLE;
  VkDescriptorSetLayout dsl = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkDescriptorPool dpool = VK_NULL_HANDLE;
  VkDescriptorSet set = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;

  Compute(hvk::Vk &v, VkDeviceMemory memory, VkDeviceSize size) : vk(v) {
    VkBufferCreateInfo bci{};
    bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    bci.size = size;
    bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VK_OK(vk.vkCreateBuffer(vk.device, &bci, nullptr, &buffer));
    VkMemoryRequirements req{};
    vk.vkGetBufferMemoryRequirements(vk.device, buffer, &req);
    REQUIRE(req.size <= size + req.alignment);
    VK_OK(vk.vkBindBufferMemory(vk.device, buffer, memory, 0));

    VkShaderModuleCreateInfo smci{};
    smci.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
    smci.codeSize = sizeof hurray_vk_fill_spv;
    smci.pCode = hurray_vk_fill_spv;
    VK_OK(vk.vkCreateShaderModule(vk.device, &smci, nullptr, &module));
    VkDescriptorSetLayoutBinding b{};
    b.binding = 0;
    b.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    b.descriptorCount = 1;
    b.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    VkDescriptorSetLayoutCreateInfo dslci{};
    dslci.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
    dslci.bindingCount = 1;
    dslci.pBindings = &b;
    VK_OK(vk.vkCreateDescriptorSetLayout(vk.device, &dslci, nullptr, &dsl));
    VkPushConstantRange pcr{};
    pcr.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    pcr.size = sizeof(Params);
    VkPipelineLayoutCreateInfo plci{};
    plci.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    plci.setLayoutCount = 1;
    plci.pSetLayouts = &dsl;
    plci.pushConstantRangeCount = 1;
    plci.pPushConstantRanges = &pcr;
    VK_OK(vk.vkCreatePipelineLayout(vk.device, &plci, nullptr, &layout));
    VkComputePipelineCreateInfo cpci{};
    cpci.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    cpci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    cpci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cpci.stage.module = module;
    cpci.stage.pName = "main";
    cpci.layout = layout;
    VK_OK(vk.vkCreateComputePipelines(vk.device, VK_NULL_HANDLE, 1, &cpci, nullptr, &pipeline));
    VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1};
    VkDescriptorPoolCreateInfo dpci{};
    dpci.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
    dpci.maxSets = 1;
    dpci.poolSizeCount = 1;
    dpci.pPoolSizes = &ps;
    VK_OK(vk.vkCreateDescriptorPool(vk.device, &dpci, nullptr, &dpool));
    VkDescriptorSetAllocateInfo dsai{};
    dsai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
    dsai.descriptorPool = dpool;
    dsai.descriptorSetCount = 1;
    dsai.pSetLayouts = &dsl;
    VK_OK(vk.vkAllocateDescriptorSets(vk.device, &dsai, &set));
    VkDescriptorBufferInfo dbi{buffer, 0, VK_WHOLE_SIZE};
    VkWriteDescriptorSet w{};
    w.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    w.dstSet = set;
    w.descriptorCount = 1;
    w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    w.pBufferInfo = &dbi;
    vk.vkUpdateDescriptorSets(vk.device, 1, &w, 0, nullptr);
    VkCommandPoolCreateInfo cpi{};
    cpi.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    cpi.queueFamilyIndex = vk.family;
    VK_OK(vk.vkCreateCommandPool(vk.device, &cpi, nullptr, &pool));
  }
  Compute(const Compute &) = delete;
  Compute &operator=(const Compute &) = delete;
  ~Compute() {
    vk.vkDestroyCommandPool(vk.device, pool, nullptr);
    vk.vkDestroyDescriptorPool(vk.device, dpool, nullptr);
    vk.vkDestroyPipeline(vk.device, pipeline, nullptr);
    vk.vkDestroyPipelineLayout(vk.device, layout, nullptr);
    vk.vkDestroyDescriptorSetLayout(vk.device, dsl, nullptr);
    vk.vkDestroyShaderModule(vk.device, module, nullptr);
    vk.vkDestroyBuffer(vk.device, buffer, nullptr);
  }

  VkCommandBuffer begin() {
    VkCommandBufferAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    ai.commandPool = pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    VkCommandBuffer cb = VK_NULL_HANDLE;
    VK_OK(vk.vkAllocateCommandBuffers(vk.device, &ai, &cb));
    VkCommandBufferBeginInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    VK_OK(vk.vkBeginCommandBuffer(cb, &bi));
    return cb;
  }
  void submit(VkQueue q, VkCommandBuffer cb, VkFence fence) {
    VK_OK(vk.vkEndCommandBuffer(cb));
    VkSubmitInfo si{};
    si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    VK_OK(vk.vkQueueSubmit(q, 1, &si, fence));
  }
  // The fill shader over the whole buffer, on the plugin's queue.
  void dispatch(uint32_t seed) {
    VkCommandBuffer cb = begin();
    vk.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    vk.vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0,
                               nullptr);
    const Params p{kWords, seed, kRounds};
    vk.vkCmdPushConstants(cb, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof p, &p);
    vk.vkCmdDispatch(cb, kWords / 64, 1, 1);
    submit(vk.queue, cb, VK_NULL_HANDLE);
  }
};

// Host-visible coherent memory of the test's own, to read back into.
struct Readback {
  hvk::Vk &vk;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void *ptr = nullptr;
  Readback(hvk::Vk &v, VkDeviceSize size) : vk(v) {
    VkBufferCreateInfo bci{};
    bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    bci.size = size;
    bci.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VK_OK(vk.vkCreateBuffer(vk.device, &bci, nullptr, &buffer));
    VkMemoryRequirements req{};
    vk.vkGetBufferMemoryRequirements(vk.device, buffer, &req);
    const int type = vk.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                            VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    REQUIRE(type >= 0);
    VkMemoryAllocateInfo mai{};
    mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = static_cast<uint32_t>(type);
    VK_OK(vk.vkAllocateMemory(vk.device, &mai, nullptr, &memory));
    VK_OK(vk.vkBindBufferMemory(vk.device, buffer, memory, 0));
    VK_OK(vk.vkMapMemory(vk.device, memory, 0, VK_WHOLE_SIZE, 0, &ptr));
    std::memset(ptr, 0, size);
  }
  Readback(const Readback &) = delete;
  Readback &operator=(const Readback &) = delete;
  ~Readback() {
    vk.vkUnmapMemory(vk.device, memory);
    vk.vkDestroyBuffer(vk.device, buffer, nullptr);
    vk.vkFreeMemory(vk.device, memory, nullptr);
  }
};

size_t mismatches(const uint32_t *words, uint32_t seed) {
  size_t bad = 0;
  for (uint32_t i = 0; i < kWords; ++i) bad += words[i] != expected(i, seed);
  return bad;
}

// True when every DEVICE_LOCAL memory type is HOST_VISIBLE + HOST_COHERENT,
// so that whichever the plugin chose for STANDARD can be mapped.
bool device_local_is_host_coherent(const hvk::Vk &vk) {
  VkPhysicalDeviceMemoryProperties mp{};
  vk.vkGetPhysicalDeviceMemoryProperties(vk.phys, &mp);
  const VkMemoryPropertyFlags want =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  for (uint32_t i = 0; i < mp.memoryTypeCount; ++i) {
    const VkMemoryPropertyFlags f = mp.memoryTypes[i].propertyFlags;
    if ((f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) && (f & want) != want) return false;
  }
  return true;
}

// Allocate STANDARD memory on device d, zero it, and return it (or skip the
// device when it has no STANDARD class).
bool standard_allocation(int32_t d, hurray_backend_allocation *a) {
  const hurray_backend_v1 &t = table();
  const hurray_backend_device_info info = hvk::info_of(d);
  hurray_error err{};
  if (!(info.memory_classes & 1u)) {
    WARN("device " << d << " has no STANDARD memory");
    return false;
  }
  REQUIRE(t.alloc(state(), d, HURRAY_MEMORY_STANDARD, kWords * 4ull, 256, 0, a, &err) ==
          HURRAY_OK);
  REQUIRE(a->flags == HURRAY_HANDOFF_OPAQUE_DATA);
  const std::vector<uint32_t> zeros(kWords, 0);
  REQUIRE(t.copy_from_host(state(), a, 0, zeros.data(), kWords * 4ull, &err) == HURRAY_OK);
  return true;
}

// For each device with STANDARD memory: body with a zeroed allocation a of
// kWords words (freed after) and the device's Vulkan functions.
void on_each_device(
    const std::function<void(int32_t d, hurray_backend_allocation &a, hvk::Vk &vk)> &body) {
  const hurray_backend_v1 &t = table();
  void *s = state();
  for (int32_t d = 0; d < t.device_count(s); ++d) {
    hurray_backend_allocation a{};
    if (!standard_allocation(d, &a)) continue;
    {
      hvk::Vk vk(d);
      body(d, a, vk);
    }
    t.free(s, &a);
  }
}

}  // namespace

TEST_CASE("vulkan: compute shader output is visible after event_wait on a second queue") {
  const hurray_backend_v1 &t = table();
  void *s = state();
  on_each_device([&](int32_t d, hurray_backend_allocation &a, hvk::Vk &vk) {
    // The plugin creates queue 1 of its family when the family has two.
    VkQueue second = vk.queue;
    if (vk.family_queue_count() >= 2) vk.vkGetDeviceQueue(vk.device, vk.family, 1, &second);
    std::printf("device %d: waiting on %s\n", static_cast<int>(d),
                second == vk.queue ? "the plugin's queue (the family has one queue)"
                                   : "queue 1 of the plugin's family");
    Compute comp(vk, static_cast<VkDeviceMemory>(a.data), kWords * 4ull);
    Readback rb(vk, kWords * 4ull);
    const uint32_t seed = 0x5EED0000u + static_cast<uint32_t>(d);
    comp.dispatch(seed);
    void *event = nullptr;
    uint64_t value = 0;
    hurray_error err{};
    REQUIRE(t.event_record(s, d, vk.queue, &event, &value, &err) == HURRAY_OK);
    REQUIRE(t.event_wait(s, d, event, value, second, &err) == HURRAY_OK);
    // On the waiting queue: copy the shader's output into host memory.
    VkCommandBuffer cb = comp.begin();
    VkBufferCopy region{0, 0, kWords * 4ull};
    vk.vkCmdCopyBuffer(cb, comp.buffer, rb.buffer, 1, &region);
    VkMemoryBarrier mb{};
    mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vk.vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0,
                            1, &mb, 0, nullptr, 0, nullptr);
    VkFenceCreateInfo fci{};
    fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    VkFence fence = VK_NULL_HANDLE;
    VK_OK(vk.vkCreateFence(vk.device, &fci, nullptr, &fence));
    comp.submit(second, cb, fence);
    VK_OK(vk.vkWaitForFences(vk.device, 1, &fence, VK_TRUE, UINT64_MAX));
    vk.vkDestroyFence(vk.device, fence, nullptr);
    CHECK(mismatches(static_cast<const uint32_t *>(rb.ptr), seed) == 0);
    t.event_release(s, d, event);
    VK_OK(vk.vkQueueWaitIdle(vk.queue));
    VK_OK(vk.vkQueueWaitIdle(second));
  });
}

TEST_CASE("vulkan: compute shader output is visible after a host event_wait and copy_to_host") {
  const hurray_backend_v1 &t = table();
  void *s = state();
  on_each_device([&](int32_t d, hurray_backend_allocation &a, hvk::Vk &vk) {
    Compute comp(vk, static_cast<VkDeviceMemory>(a.data), kWords * 4ull);
    const uint32_t seed = 0xC0FFEE00u + static_cast<uint32_t>(d);
    comp.dispatch(seed);
    void *event = nullptr;
    uint64_t value = 0;
    hurray_error err{};
    // stream NULL: the plugin's queue, where the shader was submitted.
    REQUIRE(t.event_record(s, d, nullptr, &event, &value, &err) == HURRAY_OK);
    CHECK(event == static_cast<void *>(vk.timeline));
    uint64_t before = 0;
    VK_OK(vk.vkGetSemaphoreCounterValue(vk.device, vk.timeline, &before));
    std::printf("device %d: right after event_record the timeline is at %llu of %llu (%s)\n",
                static_cast<int>(d), static_cast<unsigned long long>(before),
                static_cast<unsigned long long>(value),
                before < value ? "the shader is still running" : "already done");
    const auto t0 = std::chrono::steady_clock::now();
    REQUIRE(t.event_wait(s, d, event, value, nullptr, &err) == HURRAY_OK);
    const auto waited = std::chrono::duration_cast<std::chrono::microseconds>(
                            std::chrono::steady_clock::now() - t0)
                            .count();
    std::printf("device %d: the host waited %lld us for the shader\n", static_cast<int>(d),
                static_cast<long long>(waited));
    // The host wait returned only once the value was reached.
    uint64_t now = 0;
    VK_OK(vk.vkGetSemaphoreCounterValue(vk.device, vk.timeline, &now));
    CHECK(now >= value);
    // Where the device's memory is host-visible and coherent (lavapipe),
    // read it directly: nothing but the host wait orders this read after
    // the shader, and event_record made the shader's writes available to
    // the host.
    if (device_local_is_host_coherent(vk)) {
      void *p = nullptr;
      VK_OK(vk.vkMapMemory(vk.device, static_cast<VkDeviceMemory>(a.data), 0, VK_WHOLE_SIZE, 0,
                           &p));
      CHECK(mismatches(static_cast<const uint32_t *>(p), seed) == 0);
      vk.vkUnmapMemory(vk.device, static_cast<VkDeviceMemory>(a.data));
    }
    std::vector<uint32_t> out(kWords, 0);
    REQUIRE(t.copy_to_host(s, &a, 0, out.data(), kWords * 4ull, &err) == HURRAY_OK);
    CHECK(mismatches(out.data(), seed) == 0);
    t.event_release(s, d, event);
    VK_OK(vk.vkQueueWaitIdle(vk.queue));
  });
}
