// The public device functions (hurray.h): hurray_device_count, _info,
// _native and hurray_event_record, each finding the backend through the
// registry (backends.cpp) and calling it through the dispatch layer.
#include <hurray.h>
#include <hurray_backend.h>

#include <cstring>

#include "../core/internal.h"
#include "backends.h"
#include "dispatch.h"

using namespace hurray::detail;

namespace {

// hurray_device_info's detail says when release_after waits on the host.
void note_release_wait(hurray_backend_device_info *out) {
  constexpr char kNote[] = "; release_after: host wait (no backend entry)";
  out->detail[sizeof out->detail - 1] = '\0';
  const size_t n = std::strlen(out->detail);
  if (n + sizeof kNote <= sizeof out->detail) std::memcpy(out->detail + n, kNote, sizeof kNote);
}

void event_free_trampoline(void *user, void *event) {
  const auto *r = static_cast<const DeviceRef *>(user);
  dispatch::event_release(r->backend, r->device, event);
}

// What the device functions of one device share: `p` (what `what` names)
// not NULL, then the backend of (tag, ordinal), for `body(b)` to answer.
template <class Body>
hurray_status on_device(uint8_t tag, int32_t ordinal, const void *p, const char *fn,
                        const char *what, hurray_error *err, Body &&body) noexcept {
  if (!p) return null_argument(err, fn, what);
  Backend b;
  if (const hurray_status st = backend_device(tag, ordinal, &b, err)) return st;
  return body(b);
}

}  // namespace

extern "C" {

HURRAY_API hurray_status hurray_device_count(hurray_context *ctx, uint8_t tag, int32_t *count,
                                             hurray_error *err) {
  (void)ctx;
  if (!count) return null_argument(err, "hurray_device_count", "count");
  Backend b;
  *count = 0;
  if (const hurray_status st = backend_for(tag, &b, err)) return st;
  *count = dispatch::device_count(b);
  return HURRAY_OK;
}

HURRAY_API hurray_status hurray_device_info(hurray_context *ctx, uint8_t tag, int32_t ordinal,
                                            hurray_backend_device_info *out, hurray_error *err) {
  (void)ctx;
  return on_device(tag, ordinal, out, "hurray_device_info", "out", err, [&](const Backend &b) {
    if (const hurray_status st = dispatch::device_info(b, ordinal, out, err)) return st;
    if (!dispatch::has_release_after(b)) note_release_wait(out);
    return HURRAY_OK;
  });
}

HURRAY_API hurray_status hurray_device_native(hurray_context *ctx, uint8_t tag, int32_t ordinal,
                                              hurray_backend_native *out, hurray_error *err) {
  (void)ctx;
  return on_device(tag, ordinal, out, "hurray_device_native", "out", err,
                   [&](const Backend &b) { return dispatch::native(b, ordinal, out, err); });
}

HURRAY_API hurray_status hurray_event_record(hurray_context *ctx, uint8_t tag, int32_t ordinal,
                                             void *stream, hurray_export_desc *desc,
                                             hurray_error *err) {
  (void)ctx;
  return on_device(tag, ordinal, desc, "hurray_event_record", "desc", err, [&](const Backend &b) {
    const DeviceRef *ref = device_ref(b, ordinal);
    if (!ref) return out_of_memory(err, "hurray_event_record");
    void *event = nullptr;
    uint64_t value = 0;
    if (const hurray_status st = dispatch::event_record(b, ordinal, stream, &event, &value, err))
      return st;
    desc->sync_mode = HURRAY_SYNC_EVENT;
    desc->sync_object = event;
    desc->sync_value = value;
    desc->event_free_fn = event_free_trampoline;
    desc->event_user = const_cast<DeviceRef *>(ref);
    return HURRAY_OK;
  });
}

}  // extern "C"
