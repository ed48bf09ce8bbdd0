// WebGPU (Dawn), side by side with raw Dawn calls in one run: allocate +
// free, and event record + wait, through libhurray (its WebGPU plugin) and
// directly. The raw side opens its own Dawn device (same library, found
// through the plugin's native slot 4, same backend), used from this thread
// only: Dawn's OpenGL ES backend keeps a device's GL context on one thread,
// and the plugin's device lives on the plugin's own thread. A device that
// is absent makes the benchmarks report an error row, not a time. Run with
// EGL_PLATFORM=surfaceless on a machine without a display (bench/run.py
// sets it).
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <hurray.h>
#include <hurray_backend.h>

#include "kit/library.h"
#include "webgpu/api.h"

namespace {

constexpr uint64_t kSize = 1 << 20;

void on_adapter(uint32_t, WGPUAdapter a, WGPUStringView, void *u, void *) {
  *static_cast<WGPUAdapter *>(u) = a;
}
void on_device(uint32_t, WGPUDevice d, WGPUStringView, void *u, void *) {
  *static_cast<WGPUDevice *>(u) = d;
}
void on_done(uint32_t, WGPUStringView, void *, void *) {}

struct Dawn {
  bool ok = false;
  hwgpu_api w{};
  WGPUInstance instance = nullptr;
  WGPUDevice device = nullptr;
  WGPUQueue queue = nullptr;

  bool wait(WGPUFuture f) const {
    for (;;) {
      WGPUFutureWaitInfo info{f, 0};
      const uint32_t r = w.wgpuInstanceWaitAny(instance, 1, &info, 0);
      if (info.completed) return true;
      if (r != HWGPU_WAIT_TIMED_OUT) return false;
      w.wgpuInstanceProcessEvents(instance);
    }
  }

  Dawn() {
    hurray_backend_native n;
    if (hurray_device_native(nullptr, HURRAY_DEVICE_WEBGPU, 0, &n, nullptr) != HURRAY_OK) return;
    void *lib = n.handles[4];
    const hurray::kit::Lookup in_dawn{
        [](void *dawn, const char *name) noexcept {
          return reinterpret_cast<hurray::kit::AnyFunction>(dlsym(dawn, name));
        },
        lib};
    hurray::kit::resolve_symbols<hwgpu_api>(in_dawn, hurray::webgpu::kFunctions, &w);
    instance = w.wgpuCreateInstance(nullptr);
    if (instance == nullptr) return;
    WGPURequestAdapterOptions o{};
    o.featureLevel = HWGPU_FEATURE_LEVEL_COMPATIBILITY;
    o.backendType = HWGPU_BACKEND_OPENGLES;
    WGPUAdapter adapter = nullptr;
    if (!wait(w.wgpuInstanceRequestAdapter(
            instance, &o, {nullptr, HWGPU_CALLBACK_MODE_WAIT_ANY_ONLY, on_adapter, &adapter, nullptr})) ||
        adapter == nullptr)
      return;
    if (!wait(w.wgpuAdapterRequestDevice(
            adapter, nullptr, {nullptr, HWGPU_CALLBACK_MODE_WAIT_ANY_ONLY, on_device, &device, nullptr})) ||
        device == nullptr)
      return;
    queue = w.wgpuDeviceGetQueue(device);
    ok = true;
  }
};

Dawn &dawn() {
  static Dawn d;
  return d;
}

void BM_AllocFree_Hurray_WebGPU(benchmark::State &state) {
  if (!dawn().ok) return state.SkipWithError("no WebGPU device");
  hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
  a.byte_size = kSize;
  a.alignment = 4096;
  a.device_tag = HURRAY_DEVICE_WEBGPU;
  for (auto _ : state) {
    hurray_buffer *b;
    if (hurray_buffer_alloc(nullptr, &a, &b, nullptr) != HURRAY_OK) return state.SkipWithError("alloc");
    hurray_buffer_unref(b);
  }
}
BENCHMARK(BM_AllocFree_Hurray_WebGPU);

// What the plugin asks Dawn for, without its error scopes and its thread.
void BM_AllocFree_Raw_WebGPU(benchmark::State &state) {
  Dawn &d = dawn();
  if (!d.ok) return state.SkipWithError("no WebGPU device");
  WGPUBufferDescriptor desc{};
  desc.usage = HWGPU_BUFFER_USAGE_COPY_SRC | HWGPU_BUFFER_USAGE_COPY_DST | HWGPU_BUFFER_USAGE_STORAGE;
  desc.size = kSize;
  for (auto _ : state) {
    WGPUBuffer b = d.w.wgpuDeviceCreateBuffer(d.device, &desc);
    if (b == nullptr) return state.SkipWithError("wgpuDeviceCreateBuffer");
    d.w.wgpuBufferDestroy(b);
    d.w.wgpuBufferRelease(b);
  }
}
BENCHMARK(BM_AllocFree_Raw_WebGPU);

void BM_EventWait_Hurray_WebGPU(benchmark::State &state) {
  if (!dawn().ok) return state.SkipWithError("no WebGPU device");
  hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
  a.byte_size = 4096;
  a.alignment = 4096;
  a.device_tag = HURRAY_DEVICE_WEBGPU;
  hurray_buffer *b;
  if (hurray_buffer_alloc(nullptr, &a, &b, nullptr) != HURRAY_OK) return state.SkipWithError("alloc");
  for (auto _ : state) {  // record, hand off with the event, consumer waits and releases
    hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
    hurray_handoff h;
    if (hurray_event_record(nullptr, HURRAY_DEVICE_WEBGPU, 0, nullptr, &e, nullptr) != HURRAY_OK ||
        hurray_buffer_export(b, &e, &h, nullptr) != HURRAY_OK ||
        hurray_handoff_acquire(nullptr, &h, nullptr, nullptr) != HURRAY_OK)
      return state.SkipWithError("event");
    h.release(&h);
  }
  hurray_buffer_unref(b);
}
BENCHMARK(BM_EventWait_Hurray_WebGPU);

void BM_EventWait_Raw_WebGPU(benchmark::State &state) {
  Dawn &d = dawn();
  if (!d.ok) return state.SkipWithError("no WebGPU device");
  for (auto _ : state) {
    const WGPUFuture f = d.w.wgpuQueueOnSubmittedWorkDone(
        d.queue, {nullptr, HWGPU_CALLBACK_MODE_ALLOW_PROCESS_EVENTS, on_done, nullptr, nullptr});
    if (!d.wait(f)) return state.SkipWithError("wgpuInstanceWaitAny");
  }
}
BENCHMARK(BM_EventWait_Raw_WebGPU);

}  // namespace

BENCHMARK_MAIN();
