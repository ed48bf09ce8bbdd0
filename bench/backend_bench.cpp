// Backends, side by side with the same raw vendor calls in one run:
// allocate + free, and event record + wait, through libhurray and directly.
// Raw calls go through the backend's own loaded runtime (its native handles),
// so neither side links the vendor library. A device that is absent makes
// its benchmarks report an error row (SkipWithError), not a time.
#include <benchmark/benchmark.h>
#include <hurray.h>
#include <hurray_backend.h>

#define VK_NO_PROTOTYPES
#include "bench_native.h"
#include "vulkan_gate.h"

#include <cstring>

namespace {

constexpr uint64_t kSize = 1 << 20;

// ---------------------------------------------------------------- OpenCL --
struct OpenCL : hurray_bench::ClNative {
  bool ok = false;
  decltype(&clCreateBuffer) create_buffer = nullptr;
  decltype(&clReleaseMemObject) release_mem = nullptr;
  decltype(&clEnqueueMarkerWithWaitList) marker = nullptr;
  decltype(&clWaitForEvents) wait = nullptr;
  decltype(&clReleaseEvent) release_event = nullptr;

  OpenCL() {
    ok = load() && fn(&create_buffer, "clCreateBuffer") && fn(&release_mem, "clReleaseMemObject") &&
         fn(&marker, "clEnqueueMarkerWithWaitList") && fn(&wait, "clWaitForEvents") &&
         fn(&release_event, "clReleaseEvent");
  }
};

OpenCL &opencl() {
  static OpenCL cl;
  return cl;
}

void BM_AllocFree_Hurray_OpenCL(benchmark::State &state) {
  if (!opencl().ok) return state.SkipWithError("no OpenCL device");
  hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
  a.byte_size = kSize;
  a.alignment = 4096;
  a.device_tag = HURRAY_DEVICE_OPENCL;
  for (auto _ : state) {
    hurray_buffer *b;
    if (hurray_buffer_alloc(nullptr, &a, &b, nullptr) != HURRAY_OK) return state.SkipWithError("alloc");
    hurray_buffer_unref(b);
  }
}
BENCHMARK(BM_AllocFree_Hurray_OpenCL);

void BM_AllocFree_Raw_OpenCL(benchmark::State &state) {
  OpenCL &cl = opencl();
  if (!cl.ok) return state.SkipWithError("no OpenCL device");
  for (auto _ : state) {
    cl_int e;
    cl_mem m = cl.create_buffer(cl.context, CL_MEM_READ_WRITE, kSize, nullptr, &e);
    if (e != CL_SUCCESS) return state.SkipWithError("clCreateBuffer");
    cl.release_mem(m);
  }
}
BENCHMARK(BM_AllocFree_Raw_OpenCL);

void BM_EventWait_Hurray_OpenCL(benchmark::State &state) {
  if (!opencl().ok) return state.SkipWithError("no OpenCL device");
  hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
  a.byte_size = 4096;
  a.alignment = 4096;
  a.device_tag = HURRAY_DEVICE_OPENCL;
  hurray_buffer *b;
  if (hurray_buffer_alloc(nullptr, &a, &b, nullptr) != HURRAY_OK) return state.SkipWithError("alloc");
  for (auto _ : state) {  // record, hand off with the event, consumer waits and releases
    hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
    hurray_handoff h;
    if (hurray_event_record(nullptr, HURRAY_DEVICE_OPENCL, 0, nullptr, &e, nullptr) != HURRAY_OK ||
        hurray_buffer_export(b, &e, &h, nullptr) != HURRAY_OK ||
        hurray_handoff_acquire(nullptr, &h, nullptr, nullptr) != HURRAY_OK)
      return state.SkipWithError("event");
    h.release(&h);
  }
  hurray_buffer_unref(b);
}
BENCHMARK(BM_EventWait_Hurray_OpenCL);

void BM_EventWait_Raw_OpenCL(benchmark::State &state) {
  OpenCL &cl = opencl();
  if (!cl.ok) return state.SkipWithError("no OpenCL device");
  for (auto _ : state) {
    cl_event ev;
    if (cl.marker(cl.queue, 0, nullptr, &ev) != CL_SUCCESS || cl.wait(1, &ev) != CL_SUCCESS)
      return state.SkipWithError("marker");
    cl.release_event(ev);
  }
}
BENCHMARK(BM_EventWait_Raw_OpenCL);

// ---------------------------------------------------------------- Vulkan --
// The raw side does what the plugin does for STANDARD memory: a VkBuffer,
// its memory (type chosen by the requirements), the bind; and for events a
// submit of a host-visibility barrier that signals a timeline semaphore, then
// a host wait.
struct Vulkan : hurray_test::VkNative {
  bool ok = false;
  VkSemaphore timeline = VK_NULL_HANDLE;
  VkCommandBuffer host_barrier = VK_NULL_HANDLE;  // what the plugin submits with a signal
  uint64_t value = 0;
  uint32_t type = 0;
  PFN_vkCreateBuffer create_buffer = nullptr;
  PFN_vkDestroyBuffer destroy_buffer = nullptr;
  PFN_vkGetBufferMemoryRequirements requirements = nullptr;
  PFN_vkAllocateMemory allocate = nullptr;
  PFN_vkFreeMemory free_memory = nullptr;
  PFN_vkBindBufferMemory bind = nullptr;
  PFN_vkQueueSubmit submit = nullptr;
  PFN_vkWaitSemaphores wait = nullptr;

  Vulkan() {
    if (!load()) return;
    auto props = instance_fn<PFN_vkGetPhysicalDeviceMemoryProperties>(
        "vkGetPhysicalDeviceMemoryProperties");
    create_buffer = device_fn<PFN_vkCreateBuffer>("vkCreateBuffer");
    destroy_buffer = device_fn<PFN_vkDestroyBuffer>("vkDestroyBuffer");
    requirements = device_fn<PFN_vkGetBufferMemoryRequirements>("vkGetBufferMemoryRequirements");
    allocate = device_fn<PFN_vkAllocateMemory>("vkAllocateMemory");
    free_memory = device_fn<PFN_vkFreeMemory>("vkFreeMemory");
    bind = device_fn<PFN_vkBindBufferMemory>("vkBindBufferMemory");
    submit = device_fn<PFN_vkQueueSubmit>("vkQueueSubmit");
    wait = device_fn<PFN_vkWaitSemaphores>("vkWaitSemaphores");
    if (!props || !create_buffer || !wait) return;
    if (!props || !create_buffer || !wait) return;
    VkPhysicalDeviceMemoryProperties mp;
    props(phys, &mp);
    for (uint32_t i = 0; i < mp.memoryTypeCount; ++i)
      if (mp.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) {
        type = i;
        break;
      }
    if ((timeline = make_timeline()) == VK_NULL_HANDLE) return;
    // the same host-visibility barrier the plugin records once and submits
    // with every signal of its timeline
    auto create_pool = reinterpret_cast<PFN_vkCreateCommandPool>(gdpa(dev, "vkCreateCommandPool"));
    auto alloc_cb = reinterpret_cast<PFN_vkAllocateCommandBuffers>(gdpa(dev, "vkAllocateCommandBuffers"));
    auto begin = reinterpret_cast<PFN_vkBeginCommandBuffer>(gdpa(dev, "vkBeginCommandBuffer"));
    auto barrier = reinterpret_cast<PFN_vkCmdPipelineBarrier>(gdpa(dev, "vkCmdPipelineBarrier"));
    auto end = reinterpret_cast<PFN_vkEndCommandBuffer>(gdpa(dev, "vkEndCommandBuffer"));
    VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, nullptr, 0, family};
    VkCommandPool pool;
    if (create_pool(dev, &pi, nullptr, &pool) != VK_SUCCESS) return;
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, nullptr, pool,
                                   VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
    if (alloc_cb(dev, &ai, &host_barrier) != VK_SUCCESS) return;
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, nullptr, 0, nullptr};
    begin(host_barrier, &bi);
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_MEMORY_WRITE_BIT,
                       VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT};
    barrier(host_barrier, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb,
            0, nullptr, 0, nullptr);
    ok = end(host_barrier) == VK_SUCCESS;
  }
};

Vulkan &vulkan() {
  static Vulkan vk;
  return vk;
}

void BM_AllocFree_Hurray_Vulkan(benchmark::State &state) {
  if (!vulkan().ok) return state.SkipWithError("no Vulkan device");
  hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
  a.byte_size = kSize;
  a.alignment = 4096;
  a.device_tag = HURRAY_DEVICE_VULKAN;
  for (auto _ : state) {
    hurray_buffer *b;
    if (hurray_buffer_alloc(nullptr, &a, &b, nullptr) != HURRAY_OK) return state.SkipWithError("alloc");
    hurray_buffer_unref(b);
  }
}
BENCHMARK(BM_AllocFree_Hurray_Vulkan);

void BM_AllocFree_Raw_Vulkan(benchmark::State &state) {
  Vulkan &vk = vulkan();
  if (!vk.ok) return state.SkipWithError("no Vulkan device");
  for (auto _ : state) {
    VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = kSize;
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    VkBuffer buf;
    if (vk.create_buffer(vk.dev, &bi, nullptr, &buf) != VK_SUCCESS) return state.SkipWithError("buffer");
    VkMemoryRequirements req;
    vk.requirements(vk.dev, buf, &req);
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, nullptr, req.size, vk.type};
    VkDeviceMemory mem;
    if (vk.allocate(vk.dev, &ai, nullptr, &mem) != VK_SUCCESS) return state.SkipWithError("memory");
    vk.bind(vk.dev, buf, mem, 0);
    vk.destroy_buffer(vk.dev, buf, nullptr);
    vk.free_memory(vk.dev, mem, nullptr);
  }
}
BENCHMARK(BM_AllocFree_Raw_Vulkan);

void BM_EventWait_Hurray_Vulkan(benchmark::State &state) {
  if (!vulkan().ok) return state.SkipWithError("no Vulkan device");
  hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
  a.byte_size = 4096;
  a.alignment = 4096;
  a.device_tag = HURRAY_DEVICE_VULKAN;
  hurray_buffer *b;
  if (hurray_buffer_alloc(nullptr, &a, &b, nullptr) != HURRAY_OK) return state.SkipWithError("alloc");
  for (auto _ : state) {
    hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
    hurray_handoff h;
    if (hurray_event_record(nullptr, HURRAY_DEVICE_VULKAN, 0, nullptr, &e, nullptr) != HURRAY_OK ||
        hurray_buffer_export(b, &e, &h, nullptr) != HURRAY_OK ||
        hurray_handoff_acquire(nullptr, &h, nullptr, nullptr) != HURRAY_OK)
      return state.SkipWithError("event");
    h.release(&h);
  }
  hurray_buffer_unref(b);
}
BENCHMARK(BM_EventWait_Hurray_Vulkan);

void BM_EventWait_Raw_Vulkan(benchmark::State &state) {
  Vulkan &vk = vulkan();
  if (!vk.ok) return state.SkipWithError("no Vulkan device");
  for (auto _ : state) {
    const uint64_t value = ++vk.value;
    VkTimelineSemaphoreSubmitInfo ti{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    ti.signalSemaphoreValueCount = 1;
    ti.pSignalSemaphoreValues = &value;
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO, &ti};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &vk.host_barrier;
    si.signalSemaphoreCount = 1;
    si.pSignalSemaphores = &vk.timeline;
    if (vk.submit(vk.queue, 1, &si, VK_NULL_HANDLE) != VK_SUCCESS) return state.SkipWithError("submit");
    VkSemaphoreWaitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, nullptr, 0, 1, &vk.timeline, &value};
    if (vk.wait(vk.dev, &wi, UINT64_MAX) != VK_SUCCESS) return state.SkipWithError("wait");
  }
}
BENCHMARK(BM_EventWait_Raw_Vulkan);

}  // namespace

BENCHMARK_MAIN();
