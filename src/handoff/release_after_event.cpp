// hurray_handoff_release_after_event: hurray_handoff_release_after for an
// event the caller hands over with the handoff. The event has to live until
// the deferred release has run, which may be after the call returns (Level
// Zero, Vulkan, OpenCL, CUDA, HIP and WebGPU defer), so the caller cannot
// know when to free it: here the library takes it and frees it with the
// caller's function once the release has run, exactly once, on the thread
// the completion arrives on. On error nothing is taken (the caller frees the
// event), as with hurray_handoff_release_after. The deferral itself is
// release_after.cpp's.
#include "internal.h"

using namespace hurray::detail;

extern "C" {

HURRAY_API hurray_status hurray_handoff_release_after_event(
    hurray_context *ctx, hurray_handoff *h, void *event, uint64_t event_value,
    void (*event_free_fn)(void *user, void *event), void *event_user, hurray_error *err) {
  const void *const where = __builtin_return_address(0);
  constexpr const char *kFn = "hurray_handoff_release_after_event";
  if (!h) return null_argument(err, kFn, "handoff");
  if (!event) return null_argument(err, kFn, "event");
  if (!event_free_fn) return null_argument(err, kFn, "event_free_fn");
  return handoff::release_after(ctx, h, nullptr, event, event_value,
                                {event_free_fn, event_user, event}, where, err);
}

}  // extern "C"
