// The WebGPU plugin: waiting on futures and reading error scopes.
#include <chrono>
#include <thread>

#include "state.h"

namespace hurray::webgpu {

hurray_status wait_future(State *s, WGPUFuture f, const char *what, hurray_error *err,
                          std::unique_lock<std::mutex> *lock) {
  const hwgpu_api &w = s->wgpu;
  const auto poll = [&]() -> uint32_t {  // 0: completed, else WaitAny's status
    WGPUFutureWaitInfo info{f, 0};
    const uint32_t r = w.wgpuInstanceWaitAny(s->instance, 1, &info, 0);
    if (info.completed) return 0;
    if (r == HWGPU_WAIT_TIMED_OUT) w.wgpuInstanceProcessEvents(s->instance);
    return r;
  };
  for (uint64_t polls = 0;; ++polls) {
    const uint32_t r = lock != nullptr ? on_worker(s, poll) : poll();
    if (r == 0) return HURRAY_OK;
    if (r != HWGPU_WAIT_TIMED_OUT)
      return fail(err, HURRAY_E_INTERNAL,
                  "[wgpuInstanceWaitAny] WGPUWaitStatus %u: waiting for %s (future %llu)", r,
                  what, static_cast<unsigned long long>(f.id));
    // Spin a little (most waits end within microseconds), then sleep: no
    // timed wait is portable across Dawn revisions (see state.h).
    if (lock != nullptr) lock->unlock();
    if (polls < 64) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(polls < 1024 ? 20 : 200));
    }
    if (lock != nullptr) lock->lock();
  }
}

void push_errors(State *s, const Device &d) noexcept {
  s->wgpu.wgpuDevicePushErrorScope(d.device, HWGPU_ERROR_FILTER_VALIDATION);
  s->wgpu.wgpuDevicePushErrorScope(d.device, HWGPU_ERROR_FILTER_OUT_OF_MEMORY);
}

namespace {

struct ScopeResult {
  bool called = false;
  uint32_t status = 0;
  uint32_t type = 0;
  std::string message;
};

void on_pop(uint32_t status, uint32_t type, WGPUStringView message, void *userdata1, void *) {
  auto *r = static_cast<ScopeResult *>(userdata1);
  r->called = true;
  r->status = status;
  r->type = type;
  try {
    r->message = to_string(message);
  } catch (...) {  // out of memory: the type alone is reported
  }
}

const char *error_type_name(uint32_t type) noexcept {
  switch (type) {
    case HWGPU_ERROR_TYPE_VALIDATION: return "WGPUErrorType_Validation";
    case HWGPU_ERROR_TYPE_OUT_OF_MEMORY: return "WGPUErrorType_OutOfMemory";
    case HWGPU_ERROR_TYPE_INTERNAL: return "WGPUErrorType_Internal";
    default: return "WGPUErrorType_Unknown";
  }
}

}  // namespace

hurray_status pop_errors(State *s, const Device &d, const char *function, hurray_error *err,
                         hurray_status validation) {
  ScopeResult r[2];  // out of memory, then validation
  hurray_status st = HURRAY_OK;
  for (ScopeResult &one : r) {
    const WGPUPopErrorScopeCallbackInfo info{nullptr, HWGPU_CALLBACK_MODE_WAIT_ANY_ONLY, on_pop,
                                             &one, nullptr};
    const WGPUFuture f = s->wgpu.wgpuDevicePopErrorScope(d.device, info);
    if (const hurray_status w = wait_future(s, f, "wgpuDevicePopErrorScope", err)) st = w;
  }
  if (st != HURRAY_OK) return st;
  for (const ScopeResult &one : r) {
    if (!one.called || one.status != HWGPU_STATUS_SUCCESS)
      return fail(err, HURRAY_E_INTERNAL,
                  "[wgpuDevicePopErrorScope] WGPUPopErrorScopeStatus %u after %s", one.status,
                  function);
    if (one.type == HWGPU_ERROR_TYPE_NO_ERROR) continue;
    // Dawn's messages end with a newline and a " - While calling ..." trail.
    std::string msg = one.message;
    for (char &c : msg)
      if (c == '\n') c = ' ';
    return hurray::kit::vendor_fail(
        err, one.type == HWGPU_ERROR_TYPE_OUT_OF_MEMORY ? HURRAY_E_OUT_OF_MEMORY
        : one.type == HWGPU_ERROR_TYPE_VALIDATION  ? validation
                                                   : HURRAY_E_BACKEND,
        function, error_type_name(one.type), msg.c_str(), "on '%s'", d.name.c_str());
  }
  return HURRAY_OK;
}

}  // namespace hurray::webgpu
