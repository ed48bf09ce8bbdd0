// A fake CUDA driver for the plugin's release_after and IPC tests without a GPU
// (libhurray_fake_cuda.so; built again with HURRAY_FAKE_CUDA_NO_HOST_FUNC
// as libhurray_fake_cuda_old.so, a driver without cuLaunchHostFunc). The
// plugin loads it through HURRAY_CUDA_LIBRARY. One device with unified
// addressing; each stream is a thread that runs its operations in order:
// event records, event waits, host functions, and gates (the test's own
// operation, hurray_fake_cuda_gate, which waits until the test opens the
// gates). Its memory (device memory as shared host memory, legacy IPC
// handles, VMM) is fake_cuda_memory.cpp. What the tests do not need is
// CUDA_ERROR_NOT_SUPPORTED. A destroyed stream runs what it still holds, as
// CUDA's do.
#include <cuda.h>

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#define FAKE_API extern "C" __attribute__((visibility("default")))

namespace {

struct Event {
  uint64_t recorded = 0;   // records queued
  uint64_t completed = 0;  // records run
  int refs = 1;            // the handle's, and one per queued op that names it
};

// Under mu: drop one reference; the last frees the event (a destroyed event
// lives on while a queued record or wait names it, as in CUDA).
void unref(Event *e) {
  if (--e->refs == 0) delete e;
}

struct Op {
  enum Kind { kGate, kRecord, kWait, kHost } kind;
  Event *event = nullptr;
  uint64_t generation = 0;
  CUhostFn fn = nullptr;
  void *user = nullptr;
};

struct Stream {
  std::deque<Op> ops;
  bool busy = false;
  bool destroyed = false;
};

// One lock for everything: a fake, not a fast one. Never destroyed: stream
// threads may still wait on them when the process exits.
std::mutex &mu = *new std::mutex;
std::condition_variable &cv = *new std::condition_variable;
std::vector<Stream *> &streams = *new std::vector<Stream *>;  // until they have run all
bool gates_open = false;
int context = 0;  // the primary context's address stands for it
thread_local std::vector<CUcontext> current;
// A host function must not call the driver: each call made from one counts.
thread_local bool in_host_func = false;
int calls_from_host_funcs = 0;  // under mu
void count_if_from_host_func() {
  if (!in_host_func) return;
  std::lock_guard<std::mutex> lock(mu);
  ++calls_from_host_funcs;
}

void run(Stream *s) {
  std::unique_lock<std::mutex> lock(mu);
  for (;;) {
    cv.wait(lock, [&] { return !s->ops.empty() || s->destroyed; });
    if (s->ops.empty()) break;  // destroyed and done
    const Op op = s->ops.front();
    s->busy = true;
    switch (op.kind) {
      case Op::kGate:
        cv.wait(lock, [] { return gates_open; });
        break;
      case Op::kRecord:
        op.event->completed = op.generation;
        break;
      case Op::kWait:
        cv.wait(lock, [&] { return op.event->completed >= op.generation; });
        break;
      case Op::kHost:
        lock.unlock();  // a host function runs without the driver's locks
        in_host_func = true;
        op.fn(op.user);
        in_host_func = false;
        lock.lock();
        break;
    }
    s->ops.pop_front();
    if (op.event != nullptr) unref(op.event);
    s->busy = false;
    cv.notify_all();
  }
  std::erase(streams, s);
  delete s;
  cv.notify_all();
}

CUresult push(CUstream hs, Op op) {
  count_if_from_host_func();
  if (hs == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard<std::mutex> lock(mu);
  auto *s = reinterpret_cast<Stream *>(hs);
  s->ops.push_back(op);
  if (op.event != nullptr) ++op.event->refs;
  cv.notify_all();
  return CUDA_SUCCESS;
}

bool idle(const Stream *s) { return s->ops.empty() && !s->busy; }

}  // namespace

// ---- the test's controls ------------------------------------------------------

// Queue a gate on stream s: what follows waits until the gates open.
FAKE_API CUresult hurray_fake_cuda_gate(CUstream s) { return push(s, {Op::kGate}); }
FAKE_API void hurray_fake_cuda_set_gates(int open) {
  std::lock_guard<std::mutex> lock(mu);
  gates_open = open != 0;
  cv.notify_all();
}
// Whether this thread is running a host function.
FAKE_API int hurray_fake_cuda_in_host_func() { return in_host_func ? 1 : 0; }
// How many driver calls host functions made (none is allowed).
FAKE_API int hurray_fake_cuda_calls_from_host_funcs() {
  std::lock_guard<std::mutex> lock(mu);
  return calls_from_host_funcs;
}
// Wait until every stream, destroyed ones included, has run all it holds.
FAKE_API void hurray_fake_cuda_drain() {
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [] {
    for (const Stream *s : streams)
      if (!idle(s)) return false;
    return true;
  });
}

// ---- the driver ---------------------------------------------------------------

FAKE_API CUresult cuInit(unsigned) { return CUDA_SUCCESS; }
FAKE_API CUresult cuDriverGetVersion(int *v) {
  *v = 12000;
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuDeviceGetCount(int *n) {
  *n = 1;
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuDeviceGet(CUdevice *d, int ordinal) {
  if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
  *d = 0;
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuDeviceGetName(char *name, int len, CUdevice) {
  std::snprintf(name, static_cast<size_t>(len), "fake CUDA device");
  return CUDA_SUCCESS;
}
// Unified addressing; VMM with POSIX file descriptors unless
// HURRAY_FAKE_CUDA_NO_VMM is set (fake_cuda_memory.cpp).
FAKE_API CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice) {
  if (a == CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED ||
      a == CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED) {
    *v = std::getenv("HURRAY_FAKE_CUDA_NO_VMM") == nullptr ? 1 : 0;
    return CUDA_SUCCESS;
  }
  if (a != CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING) return CUDA_ERROR_INVALID_VALUE;
  *v = 1;
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuDeviceTotalMem(size_t *bytes, CUdevice) {
  *bytes = size_t{1} << 30;
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuDeviceCanAccessPeer(int *can, CUdevice, CUdevice) {
  *can = 0;
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice) {
  *ctx = reinterpret_cast<CUcontext>(&context);
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuDevicePrimaryCtxRelease(CUdevice) { return CUDA_SUCCESS; }
FAKE_API CUresult cuCtxPushCurrent(CUcontext ctx) {
  count_if_from_host_func();
  current.push_back(ctx);
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuCtxPopCurrent(CUcontext *ctx) {
  if (current.empty()) return CUDA_ERROR_INVALID_CONTEXT;
  *ctx = current.back();
  current.pop_back();
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuCtxGetCurrent(CUcontext *ctx) {
  count_if_from_host_func();
  *ctx = current.empty() ? nullptr : current.back();
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuCtxSynchronize() {
  hurray_fake_cuda_drain();
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuStreamCreate(CUstream *hs, unsigned) {
  count_if_from_host_func();
  auto *s = new Stream;
  {
    std::lock_guard<std::mutex> lock(mu);
    streams.push_back(s);
  }
  std::thread(run, s).detach();
  *hs = reinterpret_cast<CUstream>(s);
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuStreamDestroy(CUstream hs) {
  count_if_from_host_func();
  std::lock_guard<std::mutex> lock(mu);
  reinterpret_cast<Stream *>(hs)->destroyed = true;
  cv.notify_all();
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuStreamSynchronize(CUstream hs) {
  count_if_from_host_func();
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return idle(reinterpret_cast<Stream *>(hs)); });
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuStreamWaitEvent(CUstream hs, CUevent he, unsigned) {
  auto *e = reinterpret_cast<Event *>(he);
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(mu);
    generation = e->recorded;
  }
  return push(hs, {Op::kWait, e, generation});
}
#ifndef HURRAY_FAKE_CUDA_NO_HOST_FUNC
FAKE_API CUresult cuLaunchHostFunc(CUstream hs, CUhostFn fn, void *user) {
  return push(hs, {Op::kHost, nullptr, 0, fn, user});
}
#endif
FAKE_API CUresult cuEventCreate(CUevent *he, unsigned) {
  count_if_from_host_func();
  *he = reinterpret_cast<CUevent>(new Event);
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuEventRecord(CUevent he, CUstream hs) {
  auto *e = reinterpret_cast<Event *>(he);
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(mu);
    generation = ++e->recorded;
  }
  return push(hs, {Op::kRecord, e, generation});
}
FAKE_API CUresult cuEventSynchronize(CUevent he) {
  count_if_from_host_func();
  auto *e = reinterpret_cast<Event *>(he);
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return e->completed >= e->recorded; });
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuEventDestroy(CUevent he) {
  count_if_from_host_func();
  std::lock_guard<std::mutex> lock(mu);
  unref(reinterpret_cast<Event *>(he));
  return CUDA_SUCCESS;
}

// What the release tests do not use.
FAKE_API CUresult cuCtxEnablePeerAccess(CUcontext, unsigned) { return CUDA_ERROR_NOT_SUPPORTED; }
FAKE_API CUresult cuMemHostAlloc(void **, size_t, unsigned) { return CUDA_ERROR_NOT_SUPPORTED; }
FAKE_API CUresult cuMemFreeHost(void *) { return CUDA_ERROR_NOT_SUPPORTED; }
FAKE_API CUresult cuMemHostGetDevicePointer(CUdeviceptr *, void *, unsigned) {
  return CUDA_ERROR_NOT_SUPPORTED;
}
FAKE_API CUresult cuMemAllocManaged(CUdeviceptr *, size_t, unsigned) {
  return CUDA_ERROR_NOT_SUPPORTED;
}
FAKE_API CUresult cuIpcGetEventHandle(CUipcEventHandle *, CUevent) {
  return CUDA_ERROR_NOT_SUPPORTED;
}
FAKE_API CUresult cuIpcOpenEventHandle(CUevent *, CUipcEventHandle) {
  return CUDA_ERROR_NOT_SUPPORTED;
}
