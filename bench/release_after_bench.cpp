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

#include <dlfcn.h>

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

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
struct OpenCL {
  bool ok = false;
  cl_command_queue queue = nullptr;
  cl_mem target = nullptr;
  decltype(&clEnqueueFillBuffer) fill = nullptr;
  decltype(&clFinish) finish = nullptr;
  decltype(&clFlush) flush = nullptr;

  OpenCL() {
    hurray_backend_native n;
    if (hurray_device_native(nullptr, HURRAY_DEVICE_OPENCL, 0, &n, nullptr) != HURRAY_OK) return;
    auto context = static_cast<cl_context>(n.handles[2]);
    queue = static_cast<cl_command_queue>(n.handles[3]);
    void *lib = n.handles[4];
    auto create = reinterpret_cast<decltype(&clCreateBuffer)>(dlsym(lib, "clCreateBuffer"));
    fill = reinterpret_cast<decltype(fill)>(dlsym(lib, "clEnqueueFillBuffer"));
    finish = reinterpret_cast<decltype(finish)>(dlsym(lib, "clFinish"));
    flush = reinterpret_cast<decltype(flush)>(dlsym(lib, "clFlush"));
    if (!create || !fill || !finish || !flush) return;
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
struct Vulkan {
  bool ok = false;
  VkDevice dev = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  VkSemaphore done = VK_NULL_HANDLE;
  // Kept for the process's life (the plugin's device outlives the benchmark;
  // held here, they are not leaks to LeakSanitizer).
  VkBuffer buf = VK_NULL_HANDLE;
  VkDeviceMemory mem = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;
  uint64_t value = 0;
  PFN_vkQueueSubmit submit = nullptr;
  PFN_vkWaitSemaphores wait = nullptr;

  Vulkan() {
    hurray_backend_native n;
    if (hurray_device_native(nullptr, HURRAY_DEVICE_VULKAN, 0, &n, nullptr) != HURRAY_OK) return;
    auto instance = static_cast<VkInstance>(n.handles[0]);
    auto phys = static_cast<VkPhysicalDevice>(n.handles[1]);
    dev = static_cast<VkDevice>(n.handles[2]);
    queue = static_cast<VkQueue>(n.handles[3]);
    const auto family = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(n.handles[4]));
    PFN_vkGetInstanceProcAddr gipa = nullptr;
    std::memcpy(&gipa, &n.handles[5], sizeof gipa);
    auto gdpa = reinterpret_cast<PFN_vkGetDeviceProcAddr>(gipa(instance, "vkGetDeviceProcAddr"));
    auto mem_props = reinterpret_cast<PFN_vkGetPhysicalDeviceMemoryProperties>(
        gipa(instance, "vkGetPhysicalDeviceMemoryProperties"));
#define HB_FN(name) auto name = reinterpret_cast<PFN_##name>(gdpa(dev, #name))
    HB_FN(vkCreateBuffer);
    HB_FN(vkGetBufferMemoryRequirements);
    HB_FN(vkAllocateMemory);
    HB_FN(vkBindBufferMemory);
    HB_FN(vkCreateCommandPool);
    HB_FN(vkAllocateCommandBuffers);
    HB_FN(vkBeginCommandBuffer);
    HB_FN(vkCmdFillBuffer);
    HB_FN(vkEndCommandBuffer);
    HB_FN(vkCreateSemaphore);
#undef HB_FN
    submit = reinterpret_cast<PFN_vkQueueSubmit>(gdpa(dev, "vkQueueSubmit"));
    wait = reinterpret_cast<PFN_vkWaitSemaphores>(gdpa(dev, "vkWaitSemaphores"));
    if (!mem_props || !vkCreateBuffer || !vkCmdFillBuffer || !submit || !wait) return;
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
    VkSemaphoreTypeCreateInfo tt{};
    tt.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
    tt.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkSemaphoreCreateInfo si{};
    si.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
    si.pNext = &tt;
    ok = vkCreateSemaphore(dev, &si, nullptr, &done) == VK_SUCCESS;
  }
  // The consumer's work: the fill, signalling its own timeline.
  bool work() {
    const uint64_t v = ++value;
    VkTimelineSemaphoreSubmitInfo tl{};
    tl.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
    tl.signalSemaphoreValueCount = 1;
    tl.pSignalSemaphoreValues = &v;
    VkSubmitInfo s{};
    s.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    s.pNext = &tl;
    s.commandBufferCount = 1;
    s.pCommandBuffers = &cb;
    s.signalSemaphoreCount = 1;
    s.pSignalSemaphores = &done;
    return submit(queue, 1, &s, VK_NULL_HANDLE) == VK_SUCCESS;
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
