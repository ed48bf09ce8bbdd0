// A two-stage pipeline, on Vulkan and OpenCL: the producer hands out a
// buffer, the consumer enqueues device work for it (a 1 MiB fill on its
// queue) and gives the buffer back. BM_Pipeline_WaitRelease_*: the consumer
// waits on the host for its work, then releases (what BP-REL-AFTER allowed
// before); BM_Pipeline_ReleaseAfter_*: hurray_handoff_release_after on the
// queue, returning at once. Each iteration is one buffer; the timed loop ends
// when every buffer released after its work is back, so both rows count the
// same completed work. A device that is absent reports an error row.
#include <benchmark/benchmark.h>
#include <hurray.h>
#include <hurray_backend.h>

#define VK_NO_PROTOTYPES
#include "bench_native.h"
#include "vulkan_gate.h"

#include <atomic>
#include <cstring>
#include <thread>

namespace {

constexpr uint64_t kFill = 1 << 20;

std::atomic<uint64_t> g_released{0};
void on_free(void *, void *) { g_released.fetch_add(1, std::memory_order_relaxed); }

// A handoff of an opaque buffer of `tag` (the producer's stage).
bool produce(uint8_t tag, hurray_handoff *h) {
  static int token;
  hurray_buffer_desc d = HURRAY_BUFFER_DESC_INIT;
  d.flags = HURRAY_HANDOFF_OPAQUE_DATA;
  d.handle = {kFill, 64, tag, HURRAY_SYNC_PRODUCER_SYNCED, HURRAY_MEMORY_STANDARD, 0};
  d.data = &token;
  d.free_fn = on_free;
  hurray_buffer *b = nullptr;
  if (hurray_buffer_wrap(nullptr, &d, &b, nullptr) != HURRAY_OK) return false;
  const bool ok = hurray_buffer_export(b, nullptr, h, nullptr) == HURRAY_OK;
  hurray_buffer_unref(b);
  return ok;
}

void wait_released(uint64_t target) {
  while (g_released.load(std::memory_order_acquire) < target) std::this_thread::yield();
}

// ---------------------------------------------------------------- OpenCL --
struct OpenCL : hurray_bench::ClNative {
  bool ok = false;
  cl_mem target = nullptr;
  decltype(&clEnqueueFillBuffer) fill = nullptr;
  decltype(&clFinish) finish = nullptr;
  decltype(&clFlush) flush = nullptr;

  OpenCL() {
    decltype(&clCreateBuffer) create = nullptr;
    if (!load() || !fn(&create, "clCreateBuffer") || !fn(&fill, "clEnqueueFillBuffer") ||
        !fn(&finish, "clFinish") || !fn(&flush, "clFlush"))
      return;
    cl_int e = CL_SUCCESS;
    target = create(context, CL_MEM_READ_WRITE, kFill, nullptr, &e);
    ok = e == CL_SUCCESS;
  }
  bool work() {
    const cl_uint pattern = 0x5a5a5a5au;
    return fill(queue, target, &pattern, sizeof pattern, 0, kFill, 0, nullptr, nullptr) ==
               CL_SUCCESS &&
           flush(queue) == CL_SUCCESS;
  }
};

OpenCL &opencl() {
  static OpenCL cl;
  return cl;
}

void BM_Pipeline_WaitRelease_OpenCL(benchmark::State &state) {
  OpenCL &cl = opencl();
  if (!cl.ok) return state.SkipWithError("no OpenCL device");
  for (auto _ : state) {
    hurray_handoff h;
    if (!produce(HURRAY_DEVICE_OPENCL, &h) || !cl.work()) return state.SkipWithError("failed");
    cl.finish(cl.queue);  // the host waits for the work
    hurray_handoff_release(&h, nullptr);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Pipeline_WaitRelease_OpenCL)->UseRealTime();

void BM_Pipeline_ReleaseAfter_OpenCL(benchmark::State &state) {
  OpenCL &cl = opencl();
  if (!cl.ok) return state.SkipWithError("no OpenCL device");
  const uint64_t start = g_released.load();
  uint64_t n = 0;
  for (auto _ : state) {
    hurray_handoff h;
    if (!produce(HURRAY_DEVICE_OPENCL, &h) || !cl.work()) return state.SkipWithError("failed");
    if (hurray_handoff_release_after(nullptr, &h, cl.queue, nullptr, 0, nullptr) != HURRAY_OK)
      return state.SkipWithError("release_after failed");
    ++n;
  }
  wait_released(start + n);  // inside the timing: every buffer is back
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Pipeline_ReleaseAfter_OpenCL)->UseRealTime();

// ---------------------------------------------------------------- Vulkan --
struct Vulkan : hurray_test::VkNative {
  bool ok = false;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  VkSemaphore done = VK_NULL_HANDLE;
  // Kept for the process's life (the plugin's device outlives the benchmark;
  // held here, they are not leaks to LeakSanitizer).
  VkBuffer buf = VK_NULL_HANDLE;
  VkDeviceMemory mem = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;
  uint64_t value = 0;
  PFN_vkWaitSemaphores wait = nullptr;

  Vulkan() {
    if (!load()) return;
    auto mem_props = instance_fn<PFN_vkGetPhysicalDeviceMemoryProperties>(
        "vkGetPhysicalDeviceMemoryProperties");
    const auto vkCreateBuffer = device_fn<PFN_vkCreateBuffer>("vkCreateBuffer");
    const auto vkGetBufferMemoryRequirements =
        device_fn<PFN_vkGetBufferMemoryRequirements>("vkGetBufferMemoryRequirements");
    const auto vkAllocateMemory = device_fn<PFN_vkAllocateMemory>("vkAllocateMemory");
    const auto vkBindBufferMemory = device_fn<PFN_vkBindBufferMemory>("vkBindBufferMemory");
    const auto vkCreateCommandPool = device_fn<PFN_vkCreateCommandPool>("vkCreateCommandPool");
    const auto vkAllocateCommandBuffers =
        device_fn<PFN_vkAllocateCommandBuffers>("vkAllocateCommandBuffers");
    const auto vkBeginCommandBuffer = device_fn<PFN_vkBeginCommandBuffer>("vkBeginCommandBuffer");
    const auto vkCmdFillBuffer = device_fn<PFN_vkCmdFillBuffer>("vkCmdFillBuffer");
    const auto vkEndCommandBuffer = device_fn<PFN_vkEndCommandBuffer>("vkEndCommandBuffer");
    wait = device_fn<PFN_vkWaitSemaphores>("vkWaitSemaphores");
    if (!mem_props || !vkCreateBuffer || !vkCmdFillBuffer || !wait) return;
    VkBufferCreateInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    bi.size = kFill;
    bi.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    if (vkCreateBuffer(dev, &bi, nullptr, &buf) != VK_SUCCESS) return;
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev, buf, &req);
    VkPhysicalDeviceMemoryProperties mp;
    mem_props(phys, &mp);
    uint32_t type = 0;
    while (type < mp.memoryTypeCount && !(req.memoryTypeBits & (1u << type))) ++type;
    VkMemoryAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = type;
    if (vkAllocateMemory(dev, &ai, nullptr, &mem) != VK_SUCCESS) return;
    if (vkBindBufferMemory(dev, buf, mem, 0) != VK_SUCCESS) return;
    VkCommandPoolCreateInfo pi{};
    pi.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pi.queueFamilyIndex = family;
    if (vkCreateCommandPool(dev, &pi, nullptr, &pool) != VK_SUCCESS) return;
    VkCommandBufferAllocateInfo ca{};
    ca.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    ca.commandPool = pool;
    ca.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ca.commandBufferCount = 1;
    if (vkAllocateCommandBuffers(dev, &ca, &cb) != VK_SUCCESS) return;
    VkCommandBufferBeginInfo cbi{};
    cbi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    cbi.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
    if (vkBeginCommandBuffer(cb, &cbi) != VK_SUCCESS) return;
    vkCmdFillBuffer(cb, buf, 0, kFill, 0x5a5a5a5au);
    if (vkEndCommandBuffer(cb) != VK_SUCCESS) return;
    ok = (done = make_timeline()) != VK_NULL_HANDLE;
  }
  // The consumer's work: the fill, signalling its own timeline.
  bool work() {
    return submit_timeline(cb, VK_NULL_HANDLE, 0, done, ++value);
  }
  void host_wait() {
    VkSemaphoreWaitInfo wi{};
    wi.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
    wi.semaphoreCount = 1;
    wi.pSemaphores = &done;
    wi.pValues = &value;
    wait(dev, &wi, UINT64_MAX);
  }
};

Vulkan &vulkan() {
  static Vulkan vk;
  return vk;
}

void BM_Pipeline_WaitRelease_Vulkan(benchmark::State &state) {
  Vulkan &vk = vulkan();
  if (!vk.ok) return state.SkipWithError("no Vulkan device");
  for (auto _ : state) {
    hurray_handoff h;
    if (!produce(HURRAY_DEVICE_VULKAN, &h) || !vk.work()) return state.SkipWithError("failed");
    vk.host_wait();  // the host waits for the work
    hurray_handoff_release(&h, nullptr);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Pipeline_WaitRelease_Vulkan)->UseRealTime();

void BM_Pipeline_ReleaseAfter_Vulkan(benchmark::State &state) {
  Vulkan &vk = vulkan();
  if (!vk.ok) return state.SkipWithError("no Vulkan device");
  const uint64_t start = g_released.load();
  uint64_t n = 0;
  for (auto _ : state) {
    hurray_handoff h;
    if (!produce(HURRAY_DEVICE_VULKAN, &h) || !vk.work()) return state.SkipWithError("failed");
    // After the work's own timeline value: the event form.
    if (hurray_handoff_release_after(nullptr, &h, nullptr, vk.done, vk.value, nullptr) !=
        HURRAY_OK)
      return state.SkipWithError("release_after failed");
    ++n;
  }
  wait_released(start + n);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Pipeline_ReleaseAfter_Vulkan)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
