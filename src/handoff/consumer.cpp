// The consumer side of a handoff: hurray_handoff_check (version, release,
// flags and reserved words, the handle's rules, BP-SYNC-PAYLOAD, the address)
// and hurray_handoff_acquire (waiting on an EVENT and releasing it, or making
// another stream wait for the declared one, BP-SYNC-WAIT, BP-SYNC-STREAM),
// each an inline fast path for the common case in front of its checked path.
#include "internal.h"

using namespace hurray::detail;
using namespace hurray::detail::handoff;

namespace hurray::detail::handoff {
namespace {

constexpr uint32_t kKnownHandoffFlags =
    HURRAY_HANDOFF_READ_ONLY | HURRAY_HANDOFF_OPAQUE_DATA | HURRAY_HANDOFF_QPARAM;
// A view's (view.cpp): checked on the checked path only.
constexpr uint32_t kViewFlags = kKnownHandoffFlags | HURRAY_HANDOFF_OPAQUE_OFFSET;

// hurray_handoff_check's checked path: the reference for every answer.
[[gnu::noinline]] hurray_status check_handoff(const hurray_handoff *h, const hurray_policy *policy,
                                              hurray_error *err) {
  if (!h) return null_argument(err, "hurray_handoff_check", "handoff");
  if (h->version != HURRAY_HANDOFF_VERSION)
    return fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_NONE,
                "hurray_handoff.version is %u; this library reads version %u", h->version,
                HURRAY_HANDOFF_VERSION);
  if (!h->release)
    return fail(err, HURRAY_E_ALREADY_RELEASED, HURRAY_RULE_REL_ONCE,
                "BP-REL-ONCE: the handoff is released (release is NULL)");
  // OPAQUE_OFFSET (a view of an opaque-handle buffer): its offset in reserved[0]
  const bool offset = h->flags & HURRAY_HANDOFF_OPAQUE_OFFSET;
  if (h->reserved0 != 0 || (h->flags & ~kViewFlags) ||
      ((offset ? 0 : h->reserved[0]) | h->reserved[1] | h->reserved[2] | h->reserved[3]) != 0)
    return fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_NONE,
                "hurray_handoff: unknown flags or non-zero reserved words (a newer producer?)");
  if (offset && (!(h->flags & HURRAY_HANDOFF_OPAQUE_DATA) || h->reserved[0] == 0))
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_handoff: OPAQUE_OFFSET needs OPAQUE_DATA and a non-zero offset in "
                "reserved[0] (BP-VIEW-BOUNDS)");
  if (const hurray_status st = hurray_table_validate(h->handle, sizeof h->handle, policy, err))
    return st;
  hurray_buffer_handle hd;
  decode16(h->handle, &hd);
  if (const char *bad =
          payload_problem(hd.sync_mode, h->sync_object, h->release_event, h->sync_value))
    return fail(err, HURRAY_E_SYNC, HURRAY_RULE_SYNC_PAYLOAD, "BP-SYNC-PAYLOAD: %s", bad);
  if (!(h->flags & HURRAY_HANDOFF_OPAQUE_DATA))
    if (const hurray_status st = hurray_handle_check_address(&hd, h->data, err)) return st;
  return HURRAY_OK;
}

}  // namespace
}  // namespace hurray::detail::handoff

extern "C" {

HURRAY_API hurray_status hurray_handoff_check(const hurray_handoff *h, const hurray_policy *policy,
                                              hurray_error *err) {
  // Fast path: everything in order. Any doubt takes the checked path.
  if (h && h->version == HURRAY_HANDOFF_VERSION && h->release &&
      !(h->flags & ~kKnownHandoffFlags)) {
    hurray_buffer_handle hd;
    decode16(h->handle, &hd);
    const uint64_t reserved = h->reserved0 | h->reserved[0] | h->reserved[1] | h->reserved[2] |
                              h->reserved[3];
    // PRODUCER_SYNCED (every CPU handoff): no payload, so the payload words
    // join the reserved ones in one test.
    const bool ok =
        hd.sync_mode == HURRAY_SYNC_PRODUCER_SYNCED
            ? (reserved | reinterpret_cast<uintptr_t>(h->sync_object) |
               reinterpret_cast<uintptr_t>(h->release_event) | h->sync_value) == 0
            : reserved == 0 &&
                  !payload_problem(hd.sync_mode, h->sync_object, h->release_event, h->sync_value);
    if (ok && fast_valid(hd, resolve(policy)) &&
        ((h->flags & HURRAY_HANDOFF_OPAQUE_DATA) || address_ok(hd, h->data)))
      return HURRAY_OK;
  }
  return check_handoff(h, policy, err);
}

// hurray_handoff_acquire beyond its common case: waits, and every error.
[[gnu::noinline]] static hurray_status acquire_handoff(hurray_handoff *h, void *consumer_stream,
                                                       hurray_error *err) {
  if (!h) return null_argument(err, "hurray_handoff_acquire", "handoff");
  if (!h->release)
    return fail(err, HURRAY_E_ALREADY_RELEASED, HURRAY_RULE_REL_AFTER,
                "BP-REL-AFTER: the handoff is released (release is NULL)");
  const uint8_t tag = h->handle[12], mode = h->handle[13];
  switch (mode) {
    case HURRAY_SYNC_PRODUCER_SYNCED:
      return HURRAY_OK;
    case HURRAY_SYNC_EVENT: {
      if (!h->release_event) return HURRAY_OK;  // already waited on and released
      Backend b;
      hurray_error why;
      if (backend_device(tag, h->device_ordinal, &b, &why) != HURRAY_OK)
        return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, HURRAY_RULE_SYNC_WAIT,
                    "BP-SYNC-WAIT: cannot wait on the event: %s", why.message);
      // BP-SYNC-WAIT, then BP-EVREL-ONCE
      if (const hurray_status st = dispatch::event_wait(b, h->device_ordinal, h->sync_object,
                                                        h->sync_value, consumer_stream, err))
        return st;
      return hurray_handoff_release_event(h, err);
    }
    case HURRAY_SYNC_CONSUMER_STREAM: {
      if (consumer_stream == h->sync_object) return HURRAY_OK;
      // BP-SYNC-STREAM: another stream first waits for the declared one
      Backend b;
      hurray_error why;
      if (backend_device(tag, h->device_ordinal, &b, &why) != HURRAY_OK)
        return fail(err, HURRAY_E_SYNC, HURRAY_RULE_SYNC_STREAM,
                    "BP-SYNC-STREAM: the buffer was handed off for stream %p; %p cannot wait "
                    "for it: %s",
                    h->sync_object, consumer_stream, why.message);
      void *event = nullptr;
      uint64_t value = 0;
      if (const hurray_status st =
              dispatch::event_record(b, h->device_ordinal, h->sync_object, &event, &value, err))
        return st;
      const hurray_status st =
          dispatch::event_wait(b, h->device_ordinal, event, value, consumer_stream, err);
      dispatch::event_release(b, h->device_ordinal, event);
      return st;
    }
    default:
      return fail(err, HURRAY_E_SYNC, HURRAY_RULE_SYNC_VALUE,
                  "BP-SYNC-VALUE: sync_mode 0x%02X is not defined", mode);
  }
}

HURRAY_API hurray_status hurray_handoff_acquire(hurray_context *ctx, hurray_handoff *h,
                                                void *consumer_stream, hurray_error *err) {
  (void)ctx;  // backends are process-wide
  // PRODUCER_SYNCED: nothing to wait for, the common case.
  if (h && h->release && h->handle[13] == HURRAY_SYNC_PRODUCER_SYNCED) return HURRAY_OK;
  return acquire_handoff(h, consumer_stream, err);
}

}  // extern "C"
