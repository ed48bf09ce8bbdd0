// The GPU stream driver: events. Binary (value 0), created interprocess-
// capable wherever the device allows it: the plugin ABI records an event
// before anyone says whether it will cross a process.
#include "driver.h"

namespace hurray::gpu_stream {

using hurray::kit::kPlugin;

hurray_status event_record(void *state, int32_t device, void *stream, void **event,
                           uint64_t *value, hurray_error *err) {
  auto [refused, s, d] = kit::enter<const State>(state, device, err,
                                                 "event_record: event and value", event, value);
  if (refused != HURRAY_OK) return refused;
  const rt::Current current(s->api, d->ref);
  const Api &api = s->api;
  if (const hurray_status st = check_current(current, s->api, *d, err)) return st;
  rt::Event ev = nullptr;
  Result r = rt::event_create(api, d->ipc_events, &ev);
  if (r != rt::kSuccess)
    return rt_fail(err, api, HURRAY_OK, rt::kEventCreate, r, "'%s'", d->name.c_str());
  r = rt::event_record(api, ev, stream != nullptr ? static_cast<rt::Stream>(stream) : d->stream);
  if (r != rt::kSuccess) {
    rt::event_destroy(api, ev);
    return rt_fail(err, api, HURRAY_OK, rt::event_record_name, r, "%s stream of '%s'%s",
                   stream != nullptr ? "the given" : "the plugin's", d->name.c_str(),
                   rt::record_hint(r));
  }
  return hurray::kit::give_binary_event(ev, event, value);
}

hurray_status event_wait(void *state, int32_t device, void *event, uint64_t value, void *stream,
                         hurray_error *err) {
  auto [refused, s, d] = kit::enter_binary_wait<const State>(state, device, event, value,
                                                             rt::kVendor, err);
  if (refused != HURRAY_OK) return refused;
  const Api &api = s->api;
  const rt::Current current(s->api, d->ref);
  if (const hurray_status st = check_current(current, s->api, *d, err)) return st;
  auto *ev = static_cast<rt::Event>(event);
  // stream NULL: the host waits.
  const Result r = stream == nullptr
                       ? rt::event_sync(api, ev)
                       : rt::stream_wait_event(api, static_cast<rt::Stream>(stream), ev);
  if (r != rt::kSuccess)
    return rt_fail(err, api, HURRAY_OK, stream == nullptr ? rt::event_sync_name : rt::stream_wait_name, r,
                   "'%s'", d->name.c_str());
  return HURRAY_OK;
}

void event_release(void *state, int32_t device, void *event) {
  const auto *s = static_cast<const State *>(state);
  if (s == nullptr || event == nullptr || s->devices.empty()) return;
  // An event is destroyed on any device; its own keeps things tidy.
  const size_t i = device >= 0 && static_cast<size_t>(device) < s->devices.size()
                       ? static_cast<size_t>(device)
                       : 0;
  rt::Current cur(s->api, s->devices[i]->ref);
  rt::event_destroy(s->api, static_cast<rt::Event>(event));
}

}  // namespace hurray::gpu_stream
