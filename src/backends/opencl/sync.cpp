// The OpenCL plugin: events.
#include "state.h"

namespace hurray::opencl {

// ---- events ---------------------------------------------------------------

hurray_status event_record(void *state, int32_t device, void *stream, void **event,
                           uint64_t *value, hurray_error *err) {
  auto [refused, s, d] = kit::enter<const State>(state, device, err,
                                                 "event_record: event and value", event, value);
  if (refused != HURRAY_OK) return refused;
  const Api &cl = s->cl;
  auto *queue = stream != nullptr ? static_cast<cl_command_queue>(stream) : d->queue;
  cl_event ev = nullptr;
  cl_int e = cl.clEnqueueMarkerWithWaitList(queue, 0, nullptr, &ev);
  if (e != CL_SUCCESS)
    return code_fail(err, HURRAY_OK, "clEnqueueMarkerWithWaitList", cl_code(e), "%s queue of '%s'",
                     stream != nullptr ? "the given" : "the default", d->name.c_str());
  // Submit it, so that a wait on another queue or on the host can complete.
  e = cl.clFlush(queue);
  if (e != CL_SUCCESS) {
    cl.clReleaseEvent(ev);
    return code_fail(err, HURRAY_OK, "clFlush", cl_code(e), "'%s'", d->name.c_str());
  }
  return hurray::kit::give_binary_event(ev, event, value);
}

hurray_status event_wait(void *state, int32_t device, void *event, uint64_t value, void *stream,
                         hurray_error *err) {
  auto [refused, s, d] = kit::enter_binary_wait<const State>(state, device, event, value, "OpenCL",
                                                             err);
  if (refused != HURRAY_OK) return refused;
  const Api &cl = s->cl;
  auto *ev = static_cast<cl_event>(event);
  if (stream == nullptr) {
    const cl_int e = cl.clWaitForEvents(1, &ev);
    if (e != CL_SUCCESS)
      return code_fail(err, HURRAY_OK, "clWaitForEvents", cl_code(e), "'%s'%s", d->name.c_str(),
                       e == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
                           ? " (the work before the event failed)"
                           : "");
    return HURRAY_OK;
  }
  const cl_int e = cl.clEnqueueBarrierWithWaitList(static_cast<cl_command_queue>(stream), 1, &ev,
                                                   nullptr);
  if (e != CL_SUCCESS)
    return code_fail(
        err, HURRAY_OK, "clEnqueueBarrierWithWaitList", cl_code(e), "'%s'%s", d->name.c_str(),
        e == CL_INVALID_CONTEXT ? " (the event and the queue are of different contexts)" : "");
  return HURRAY_OK;
}

void event_release(void *state, int32_t device, void *event) {
  (void)device;
  const auto *s = static_cast<const State *>(state);
  if (s != nullptr && event != nullptr) s->cl.clReleaseEvent(static_cast<cl_event>(event));
}

// ---- release_after ----------------------------------------------------------

namespace {

// One pending release: freed by the callback (on the ICD's callback thread).
struct Pending {
  const Api *cl;
  void (*done)(void *);
  void *user;
};

void CL_CALLBACK on_marker_complete(cl_event marker, cl_int status, void *p) {
  (void)status;  // complete or failed: either way the work no longer runs
  auto *r = static_cast<Pending *>(p);
  r->done(r->user);
  r->cl->clReleaseEvent(marker);
  delete r;
}

}  // namespace

// A marker after the work queued on `stream` (or after `event`, on the
// default queue), flushed, with a CL_COMPLETE callback that calls done. An
// ICD without clSetEventCallback waits for the marker on the host instead.
hurray_status release_after(void *state, int32_t device, void *stream, void *event,
                            uint64_t value, void (*done)(void *), void *user,
                            hurray_error *err) {
  auto [refused, s, d] = kit::enter_release_after<const State>(state, device, event, value, done,
                                                               "OpenCL", err);
  if (refused != HURRAY_OK) return refused;
  const Api &cl = s->cl;
  auto *queue = stream != nullptr ? static_cast<cl_command_queue>(stream) : d->queue;
  auto *after = static_cast<cl_event>(event);
  cl_event marker = nullptr;
  cl_int e = cl.clEnqueueMarkerWithWaitList(queue, after ? 1u : 0u, after ? &after : nullptr,
                                            &marker);
  if (e != CL_SUCCESS)
    return code_fail(err, HURRAY_OK, "clEnqueueMarkerWithWaitList", cl_code(e),
                     "release_after on '%s'", d->name.c_str());
  e = cl.clFlush(queue);
  if (e == CL_SUCCESS && cl.clSetEventCallback == nullptr) e = cl.clWaitForEvents(1, &marker);
  if (e != CL_SUCCESS) {
    cl.clReleaseEvent(marker);
    return code_fail(err, HURRAY_OK, "clFlush", cl_code(e), "release_after on '%s'",
                     d->name.c_str());
  }
  if (cl.clSetEventCallback == nullptr) {
    cl.clReleaseEvent(marker);
    done(user);
    return HURRAY_OK;
  }
  auto *r = new Pending{&cl, done, user};
  e = cl.clSetEventCallback(marker, CL_COMPLETE, on_marker_complete, r);
  if (e != CL_SUCCESS) {
    delete r;
    cl.clReleaseEvent(marker);
    return code_fail(err, HURRAY_OK, "clSetEventCallback", cl_code(e), "release_after on '%s'",
                     d->name.c_str());
  }
  return HURRAY_OK;
}

}  // namespace hurray::opencl
