// The WebGPU plugin: events. An event is the future of
// wgpuQueueOnSubmittedWorkDone (the completion of the work submitted to the
// device's one queue so far), carried in the event pointer itself: nothing
// is allocated, and releasing it is nothing (Dawn forgets the future once
// it completed and events were processed).
#include "state.h"

namespace hurray::webgpu {

namespace {

// The future's callback reads nothing: the waits ask WaitAny about the
// future itself. AllowProcessEvents lets wgpuInstanceProcessEvents reap
// futures nobody waits on.
void on_work_done(uint32_t, WGPUStringView, void *, void *) {}

}  // namespace

hurray_status check_stream(const Device &d, void *stream, const char *what,
                           hurray_error *err) noexcept {
  if (stream == nullptr || stream == d.queue) return HURRAY_OK;
  return refuse(err, HURRAY_E_INVALID_ARGUMENT,
                "%s: stream %p is not the device's WGPUQueue %p (WebGPU has one queue "
                "per device; pass NULL or native slot 3)",
                what, stream, static_cast<void *>(d.queue));
}

hurray_status event_record(void *state, int32_t device, void *stream, void **event,
                           uint64_t *value, hurray_error *err) {
  auto [refused, s, d] = kit::enter<State>(state, device, err, "event_record: event and value",
                                           event, value);
  if (refused != HURRAY_OK) return refused;
  if (const hurray_status st = check_stream(*d, stream, "event_record", err)) return st;
  std::lock_guard<std::mutex> lock(s->mu);
  const WGPUQueueWorkDoneCallbackInfo info{nullptr, HWGPU_CALLBACK_MODE_ALLOW_PROCESS_EVENTS,
                                           on_work_done, nullptr, nullptr};
  const WGPUFuture f = on_worker(s, [&, s = s, d = d] {
    const WGPUFuture got = s->wgpu.wgpuQueueOnSubmittedWorkDone(d->queue, info);
    s->wgpu.wgpuInstanceProcessEvents(s->instance);  // reap the completed ones
    return got;
  });
  if (f.id == 0)
    return fail(err, HURRAY_E_BACKEND, "[wgpuQueueOnSubmittedWorkDone] no future on '%s'",
                d->name.c_str());
  *event = reinterpret_cast<void *>(static_cast<uintptr_t>(f.id));
  *value = 0;
  return HURRAY_OK;
}

hurray_status event_wait(void *state, int32_t device, void *event, uint64_t value, void *stream,
                         hurray_error *err) {
  auto [refused, s, d] = kit::enter_binary_wait<State>(state, device, event, value, "WebGPU", err);
  if (refused != HURRAY_OK) return refused;
  if (const hurray_status st = check_stream(*d, stream, "event_wait", err)) return st;
  // On the queue: its work runs in submission order, after the work the
  // event stands for: nothing to wait for.
  if (stream != nullptr) return HURRAY_OK;
  std::unique_lock<std::mutex> lock(s->mu);
  const WGPUFuture f{static_cast<uint64_t>(reinterpret_cast<uintptr_t>(event))};
  return wait_future(s, f, "wgpuQueueOnSubmittedWorkDone", err, &lock);
}

void event_release(void *state, int32_t device, void *event) {
  (void)state;
  (void)device;
  (void)event;
}

}  // namespace hurray::webgpu
