// Backends, side by side with the same raw vendor calls in one run:
// allocate + free, and event record + wait, through libhurray and directly.
// Raw calls go through the backend's own loaded runtime (its native handles),
// so neither side links the vendor library. A device that is absent makes
// its benchmarks report an error row (SkipWithError), not a time.
#include <benchmark/benchmark.h>
#include <hurray.h>
#include <hurray_backend.h>

#include <dlfcn.h>

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

namespace {

constexpr uint64_t kSize = 1 << 20;

// ---------------------------------------------------------------- OpenCL --
struct OpenCL {
  bool ok = false;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  decltype(&clCreateBuffer) create_buffer = nullptr;
  decltype(&clReleaseMemObject) release_mem = nullptr;
  decltype(&clEnqueueMarkerWithWaitList) marker = nullptr;
  decltype(&clWaitForEvents) wait = nullptr;
  decltype(&clReleaseEvent) release_event = nullptr;

  OpenCL() {
    hurray_backend_native n;
    if (hurray_device_native(nullptr, HURRAY_DEVICE_OPENCL, 0, &n, nullptr) != HURRAY_OK) return;
    context = static_cast<cl_context>(n.handles[2]);
    queue = static_cast<cl_command_queue>(n.handles[3]);
    void *lib = n.handles[4];
    create_buffer = reinterpret_cast<decltype(create_buffer)>(dlsym(lib, "clCreateBuffer"));
    release_mem = reinterpret_cast<decltype(release_mem)>(dlsym(lib, "clReleaseMemObject"));
    marker = reinterpret_cast<decltype(marker)>(dlsym(lib, "clEnqueueMarkerWithWaitList"));
    wait = reinterpret_cast<decltype(wait)>(dlsym(lib, "clWaitForEvents"));
    release_event = reinterpret_cast<decltype(release_event)>(dlsym(lib, "clReleaseEvent"));
    ok = create_buffer && release_mem && marker && wait && release_event;
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

}  // namespace

BENCHMARK_MAIN();
