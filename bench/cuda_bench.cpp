// The CUDA backend, side by side with the same raw driver calls in one run:
// allocate + free of 1 MiB of device memory, and event record + host wait.
// The raw calls go through the libcuda the plugin loaded (its native handle
// [4]), so this program links no CUDA library and builds without a GPU. An
// absent device makes every benchmark report an error row (SkipWithError),
// never a time. tests/gpu/cuda-bench.sh runs it on a GPU and prints ratios.
//
// Both sides run on a thread where the device's primary context is current,
// as a CUDA program's thread is (the runtime API makes it current). The
// *_HurrayNoContext_* rows run libhurray on a thread with no current
// context, where the plugin pushes and pops the primary context around each
// driver call. What each raw side does is what such a program does for the
// same result:
//   AllocFree  cuMemAlloc + cuMemFree. The alignment asked, 256, is what
//              cuMemAlloc guarantees, so the plugin never over-allocates.
//   EventWait  cuEventCreate (DISABLE_TIMING | INTERPROCESS, the flags the
//              plugin uses where interprocess events work) + cuEventRecord on
//              the plugin's stream + cuEventSynchronize + cuEventDestroy.
//              libhurray: hurray_event_record, hurray_buffer_export as an
//              EVENT handoff, hurray_handoff_acquire with no stream (the host
//              waits), release (the event is destroyed).
#include <benchmark/benchmark.h>
#include <cuda.h>
#include <hurray.h>
#include <hurray_backend.h>

#include <dlfcn.h>

namespace {

constexpr uint64_t kSize = 1 << 20;

// Prototypes spelled out: cuda.h maps some names to their _v2 symbols with
// macros, and dlsym needs the real symbol names.
using MemAlloc = CUresult (*)(CUdeviceptr *, size_t);
using MemFree = CUresult (*)(CUdeviceptr);
using CtxPush = CUresult (*)(CUcontext);
using CtxPop = CUresult (*)(CUcontext *);
using EventCreate = CUresult (*)(CUevent *, unsigned);
using EventRecord = CUresult (*)(CUevent, CUstream);
using EventSync = CUresult (*)(CUevent);
using EventDestroy = CUresult (*)(CUevent);
using IpcGetEventHandle = CUresult (*)(CUipcEventHandle *, CUevent);

struct Cuda {
  bool ok = false;
  CUcontext ctx = nullptr;
  CUstream stream = nullptr;
  unsigned event_flags = CU_EVENT_DISABLE_TIMING;
  MemAlloc mem_alloc = nullptr;
  MemFree mem_free = nullptr;
  CtxPush push = nullptr;
  CtxPop pop = nullptr;
  EventCreate event_create = nullptr;
  EventRecord event_record = nullptr;
  EventSync event_sync = nullptr;
  EventDestroy event_destroy = nullptr;

  template <class F>
  static F sym(void *lib, const char *name) {
    return reinterpret_cast<F>(dlsym(lib, name));
  }

  Cuda() {
    hurray_backend_native n;
    if (hurray_device_native(nullptr, HURRAY_DEVICE_CUDA, 0, &n, nullptr) != HURRAY_OK) return;
    ctx = static_cast<CUcontext>(n.handles[1]);
    stream = static_cast<CUstream>(n.handles[2]);
    void *lib = n.handles[4];
    mem_alloc = sym<MemAlloc>(lib, "cuMemAlloc_v2");
    mem_free = sym<MemFree>(lib, "cuMemFree_v2");
    push = sym<CtxPush>(lib, "cuCtxPushCurrent_v2");
    pop = sym<CtxPop>(lib, "cuCtxPopCurrent_v2");
    event_create = sym<EventCreate>(lib, "cuEventCreate");
    event_record = sym<EventRecord>(lib, "cuEventRecord");
    event_sync = sym<EventSync>(lib, "cuEventSynchronize");
    event_destroy = sym<EventDestroy>(lib, "cuEventDestroy_v2");
    auto ipc_handle = sym<IpcGetEventHandle>(lib, "cuIpcGetEventHandle");
    ok = mem_alloc && mem_free && push && pop && event_create && event_record && event_sync &&
         event_destroy && ipc_handle;
    if (!ok || push(ctx) != CUDA_SUCCESS) {
      ok = false;
      return;
    }
    // The plugin's flags: interprocess where such an event can be made.
    CUevent ev = nullptr;
    CUipcEventHandle h;
    if (event_create(&ev, CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS) == CUDA_SUCCESS) {
      if (ipc_handle(&h, ev) == CUDA_SUCCESS) event_flags |= CU_EVENT_INTERPROCESS;
      event_destroy(ev);
    }
    CUcontext popped;
    pop(&popped);
  }
};

Cuda &cuda() {
  static Cuda c;
  return c;
}

// What every benchmark starts with: the device, and for its life the primary
// context current on this thread (with `make` false: no current context).
// False, with the benchmark's error row written, where either is missing.
class Current {
 public:
  Current(benchmark::State &state, bool make) : c_(cuda()) {
    if (!c_.ok) {
      state.SkipWithError("no CUDA device");
    } else if (make && c_.push(c_.ctx) != CUDA_SUCCESS) {
      state.SkipWithError("cuCtxPushCurrent");
    } else {
      pushed_ = make;
      ok_ = true;
    }
  }
  ~Current() {
    CUcontext popped;
    if (pushed_) c_.pop(&popped);
  }
  Current(const Current &) = delete;
  Current &operator=(const Current &) = delete;
  explicit operator bool() const { return ok_; }

 private:
  Cuda &c_;
  bool pushed_ = false;
  bool ok_ = false;
};

template <bool kWithContext>
void BM_AllocFree_Hurray(benchmark::State &state) {
  Current cur(state, kWithContext);
  if (!cur) return;
  hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
  a.byte_size = kSize;
  a.alignment = 256;
  a.device_tag = HURRAY_DEVICE_CUDA;
  for (auto _ : state) {
    hurray_buffer *b;
    if (hurray_buffer_alloc(nullptr, &a, &b, nullptr) != HURRAY_OK)
      return state.SkipWithError("hurray_buffer_alloc");
    hurray_buffer_unref(b);
  }
}
BENCHMARK(BM_AllocFree_Hurray<true>)->Name("BM_AllocFree_Hurray_CUDA");
BENCHMARK(BM_AllocFree_Hurray<false>)->Name("BM_AllocFree_HurrayNoContext_CUDA");

void BM_AllocFree_Raw_CUDA(benchmark::State &state) {
  Current cur(state, true);
  if (!cur) return;
  Cuda &c = cuda();
  for (auto _ : state) {
    CUdeviceptr p = 0;
    if (c.mem_alloc(&p, kSize) != CUDA_SUCCESS) return state.SkipWithError("cuMemAlloc");
    c.mem_free(p);
  }
}
BENCHMARK(BM_AllocFree_Raw_CUDA);

template <bool kWithContext>
void BM_EventWait_Hurray(benchmark::State &state) {
  Current cur(state, kWithContext);
  if (!cur) return;
  hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
  a.byte_size = 4096;
  a.alignment = 256;
  a.device_tag = HURRAY_DEVICE_CUDA;
  hurray_buffer *b;
  if (hurray_buffer_alloc(nullptr, &a, &b, nullptr) != HURRAY_OK)
    return state.SkipWithError("hurray_buffer_alloc");
  for (auto _ : state) {  // record, hand off with the event, consumer waits and releases
    hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
    hurray_handoff h;
    if (hurray_event_record(nullptr, HURRAY_DEVICE_CUDA, 0, nullptr, &e, nullptr) != HURRAY_OK ||
        hurray_buffer_export(b, &e, &h, nullptr) != HURRAY_OK ||
        hurray_handoff_acquire(nullptr, &h, nullptr, nullptr) != HURRAY_OK) {
      hurray_buffer_unref(b);
      return state.SkipWithError("event");
    }
    h.release(&h);
  }
  hurray_buffer_unref(b);
}
BENCHMARK(BM_EventWait_Hurray<true>)->Name("BM_EventWait_Hurray_CUDA");
BENCHMARK(BM_EventWait_Hurray<false>)->Name("BM_EventWait_HurrayNoContext_CUDA");

void BM_EventWait_Raw_CUDA(benchmark::State &state) {
  Current cur(state, true);
  if (!cur) return;
  Cuda &c = cuda();
  for (auto _ : state) {
    CUevent ev = nullptr;
    if (c.event_create(&ev, c.event_flags) != CUDA_SUCCESS)
      return state.SkipWithError("cuEventCreate");
    if (c.event_record(ev, c.stream) != CUDA_SUCCESS || c.event_sync(ev) != CUDA_SUCCESS) {
      c.event_destroy(ev);
      return state.SkipWithError("cuEventRecord");
    }
    c.event_destroy(ev);
  }
}
BENCHMARK(BM_EventWait_Raw_CUDA);

}  // namespace

BENCHMARK_MAIN();
