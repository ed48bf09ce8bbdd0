// hurray_handoff_release_after: the consumer hands a handoff back together
// with the device work that still uses it, and the release runs exactly once
// when that work completes, on whichever thread the backend's completion
// arrives (BP-REL-AFTER without a host stall; BP-REL-DEFER in guard mode).
// The handoff is moved into a heap record; the backend's release_after entry
// (through the dispatch layer: a NULL entry waits on the host first) calls
// back with the record, which releases its copy of the struct through
// hurray_handoff_release (for a handoff received over IPC that sends
// RELEASE, from the completion thread), then frees the event it was given
// when the caller handed that over too (hurray_handoff_release_after_event,
// release_after_event.cpp), and is freed. Also
// hurray_device_release_after_deferred.
#include <new>

#include "../runtime/pending.h"
#include "internal.h"

using namespace hurray::detail;

namespace {

struct Deferred {
  hurray_handoff h;
  handoff::EventOwner event;  // free is nullptr: the event stays the caller's
  PendingNode node;  // guard mode only
};

void release_done(void *user) {
  auto *d = static_cast<Deferred *>(user);
  pending_untrack(&d->node);
  (void)hurray_handoff_release(&d->h, nullptr);
  // After the release: the event was what the release waited for.
  // (A caller's callback, not a plugin table: the layering check looks for the latter.)
  if (auto *free_event = d->event.free) free_event(d->event.user, d->event.object);
  delete d;
}

}  // namespace

namespace hurray::detail::handoff {

hurray_status release_after(hurray_context *ctx, hurray_handoff *h, void *stream, void *event,
                            uint64_t event_value, EventOwner owner, const void *where,
                            hurray_error *err) noexcept {
  if (!h->release)
    return fail(err, HURRAY_E_ALREADY_RELEASED, HURRAY_RULE_REL_ONCE,
                "BP-REL-ONCE: the handoff is already released (release is NULL)");
  hurray_buffer_handle handle;
  if (const hurray_status st = hurray_handle_decode(h->handle, HURRAY_HANDLE_SIZE, &handle, err))
    return st;
  Backend b;
  if (const hurray_status st = backend_device(handle.device_tag, h->device_ordinal, &b, err))
    return st;
  auto *d = new (std::nothrow) Deferred;
  if (!d) return out_of_memory(err, "hurray_handoff_release_after");
  d->h = *h;
  d->event = owner;
  hurray_context *const c = resolve(ctx);
  if (c->guard.load(std::memory_order_relaxed)) pending_track(c, &d->node, where);
  // Moved in before the call: the completion may run before it returns.
  h->release = nullptr;
  h->release_event = nullptr;
  const hurray_status st = dispatch::release_after(b, h->device_ordinal, stream, event,
                                                   event_value, release_done, d, err);
  if (st != HURRAY_OK) {  // done was not called: the caller keeps the handoff
    pending_untrack(&d->node);
    *h = d->h;
    delete d;
  }
  return st;
}

}  // namespace hurray::detail::handoff

extern "C" {

HURRAY_API hurray_status hurray_handoff_release_after(hurray_context *ctx, hurray_handoff *h,
                                                      void *stream, void *event,
                                                      uint64_t event_value,
                                                      hurray_error *err) {
  const void *const where = __builtin_return_address(0);
  if (!h) return null_argument(err, "hurray_handoff_release_after", "handoff");
  return handoff::release_after(ctx, h, stream, event, event_value, {}, where, err);
}

HURRAY_API hurray_status hurray_device_release_after_deferred(hurray_context *ctx, uint8_t tag,
                                                              int32_t ordinal, int *deferred,
                                                              hurray_error *err) {
  (void)ctx;
  if (!deferred) return null_argument(err, "hurray_device_release_after_deferred", "deferred");
  *deferred = 0;
  Backend b;
  if (const hurray_status st = backend_device(tag, ordinal, &b, err)) return st;
  *deferred = dispatch::has_release_after(b) ? 1 : 0;
  return HURRAY_OK;
}

}  // extern "C"
