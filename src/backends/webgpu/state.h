// libhurray-webgpu.so, the WebGPU device plugin (device tag 0x05), plugin ABI
// hurray_backend_v1, on Dawn's C API (wgpu_abi.h declares the part it calls).
// This header holds its state and the helpers every file of
// src/backends/webgpu uses; one file a concern: api (resolving the
// functions), device (probe, device_info), wait (futures and error scopes),
// memory (allocation, classify), copy (host copies), sync (events), release
// (release_after), plugin (native handles and the table). It links no
// WebGPU library: probe() dlopens one. STANDARD is the only class: a WGPUBuffer (opaque data); events
// are futures of wgpuQueueOnSubmittedWorkDone; no IPC. One mutex serialises
// every call into Dawn (its devices are not thread-safe by default). The user
// reference is docs/backends/webgpu.md.
#pragma once

#include <hurray_backend.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "kit/enter.h"
#include "kit/entry.h"
#include "kit/errors.h"
#include "kit/table.h"
#include "wgpu_abi.h"
#include "worker.h"

namespace hurray::webgpu {

using hurray::kit::fail;
using hurray::kit::refuse;

// Buffer usages of a STANDARD allocation: a copy source and destination (the
// host copies), and a storage buffer for the consumer's shaders.
constexpr WGPUFlags kBufferUsage =
    HWGPU_BUFFER_USAGE_COPY_SRC | HWGPU_BUFFER_USAGE_COPY_DST | HWGPU_BUFFER_USAGE_STORAGE;
// The largest staging buffer of a host copy; longer copies go in pieces.
constexpr uint64_t kStagingChunk = 8u << 20;

struct Device {
  WGPUAdapter adapter = nullptr;
  WGPUDevice device = nullptr;
  WGPUQueue queue = nullptr;
  std::string name;         // WGPUAdapterInfo.device
  std::string description;  // WGPUAdapterInfo.description ("OpenGL ES 3.2 Mesa ...")
  uint32_t backend = 0;     // HWGPU_BACKEND_*
  uint32_t feature_level = 0;
};

// release_after's pending entries and the thread that pumps Dawn's events
// for them (release.cpp); stopped and joined first at shutdown.
struct Releaser;
struct ReleaserDelete {
  void operator()(Releaser *r) const noexcept;
};
void stop_releaser(Releaser *r) noexcept;  // joins its thread; what is pending stays

struct State {
  void *lib = nullptr;
  std::string lib_name;  // the file dlopen loaded
  hwgpu_api wgpu{};
  WGPUInstance instance = nullptr;
  std::vector<Device> devices;  // one at most; fixed after probe

  // Guards every call into Dawn and what follows; each series of Dawn calls
  // runs on `worker` (worker.h: Dawn's GL context lives on one thread).
  std::mutex mu;
  Worker worker;
  std::unordered_set<WGPUBuffer> live;  // the buffers alloc handed out
  std::unique_ptr<Releaser, ReleaserDelete> releaser;  // release_after, made under mu
};

// "OpenGLES" for HWGPU_BACKEND_OPENGLES; "backend N" for one not named here.
const char *backend_name(uint32_t backend) noexcept;

// A string view as a std::string (Dawn's may have length SIZE_MAX: NUL-ended).
std::string to_string(WGPUStringView v);

// ---- wait.cpp: futures and error scopes (the caller holds s->mu) ----------

// Wait on the host until `f` completes: wgpuInstanceWaitAny with a zero
// timeout (a timed wait needs an instance feature whose descriptor differs
// between Dawn revisions), processing events between polls. With `lock`
// given, it is released between polls (an event wait lets other threads
// use the device meanwhile) and each poll is run on the worker; without it
// the caller is on the worker already. INTERNAL when WaitAny reports an error.
hurray_status wait_future(State *s, WGPUFuture f, const char *what, hurray_error *err,
                          std::unique_lock<std::mutex> *lock = nullptr);

// Run f (a series of Dawn calls) on the plugin's thread, s->mu held.
template <class F>
auto on_worker(State *s, F &&f) -> decltype(f()) {
  return s->worker.run(static_cast<F &&>(f));
}

// Push a validation and an out-of-memory error scope (the order pop_errors
// pops them in).
void push_errors(State *s, const Device &d) noexcept;
// Pop both scopes and wait for them: HURRAY_OK when neither caught an
// error, else OUT_OF_MEMORY (or `validation` for a validation error, BACKEND
// for any other) with "[function] WGPUErrorType_X: Dawn's message".
hurray_status pop_errors(State *s, const Device &d, const char *function, hurray_error *err,
                         hurray_status validation = HURRAY_E_BACKEND);

// ---- sync.cpp -------------------------------------------------------------

// stream must be NULL or the device's queue (its native slot 3): WebGPU has
// one queue per device. `what` names the entry in the message.
hurray_status check_stream(const Device &d, void *stream, const char *what,
                           hurray_error *err) noexcept;

// ---- copy.cpp -------------------------------------------------------------

// Read [offset, offset + n) of `b` into dst (no alignment needed: the rounded
// range is staged). s->mu held.
hurray_status read_buffer(State *s, const Device &d, WGPUBuffer b, uint64_t offset, void *dst,
                          uint64_t n, hurray_error *err);

// ---- memory.cpp -----------------------------------------------------------

void release_buffer(State *s, WGPUBuffer b) noexcept;  // destroy + release; s->mu held

// The entry points and the table (src/backends/kit/entries.h).
#include "kit/entries.h"

}  // namespace hurray::webgpu
