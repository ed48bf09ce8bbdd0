// The OpenCL plugin: events.
#include "state.h"

namespace hurray::opencl {

// ---- events ---------------------------------------------------------------

hurray_status event_record(void *state, int32_t device, void *stream, void **event,
                           uint64_t *value, hurray_error *err) {
  HURRAY_KIT_ENTER(const State, "event_record: event and value", event, value);
  const Api &cl = s->cl;
  auto *queue = stream != nullptr ? static_cast<cl_command_queue>(stream) : d->queue;
  cl_event ev = nullptr;
  cl_int e = cl.clEnqueueMarkerWithWaitList(queue, 0, nullptr, &ev);
  if (e != CL_SUCCESS)
    return cl_fail(err, HURRAY_OK, "clEnqueueMarkerWithWaitList", e, "%s queue of '%s'",
                   stream != nullptr ? "the given" : "the default", d->name.c_str());
  // Submit it, so that a wait on another queue or on the host can complete.
  e = cl.clFlush(queue);
  if (e != CL_SUCCESS) {
    cl.clReleaseEvent(ev);
    return cl_fail(err, HURRAY_OK, "clFlush", e, "'%s'", d->name.c_str());
  }
  return hurray::kit::give_binary_event(ev, event, value);
}

hurray_status event_wait(void *state, int32_t device, void *event, uint64_t value, void *stream,
                         hurray_error *err) {
  HURRAY_KIT_ENTER_BINARY_WAIT(const State, "OpenCL");
  const Api &cl = s->cl;
  auto *ev = static_cast<cl_event>(event);
  if (stream == nullptr) {
    const cl_int e = cl.clWaitForEvents(1, &ev);
    if (e != CL_SUCCESS)
      return cl_fail(err, HURRAY_OK, "clWaitForEvents", e, "'%s'%s", d->name.c_str(),
                     e == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
                         ? " (the work before the event failed)"
                         : "");
    return HURRAY_OK;
  }
  const cl_int e = cl.clEnqueueBarrierWithWaitList(static_cast<cl_command_queue>(stream), 1, &ev,
                                                   nullptr);
  if (e != CL_SUCCESS)
    return cl_fail(err, HURRAY_OK, "clEnqueueBarrierWithWaitList", e, "'%s'%s", d->name.c_str(),
                   e == CL_INVALID_CONTEXT ? " (the event and the queue are of different contexts)"
                                           : "");
  return HURRAY_OK;
}

void event_release(void *state, int32_t device, void *event) {
  (void)device;
  const auto *s = static_cast<const State *>(state);
  if (s != nullptr && event != nullptr) s->cl.clReleaseEvent(static_cast<cl_event>(event));
}

}  // namespace hurray::opencl
