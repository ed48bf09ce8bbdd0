// The Level Zero plugin: events.
#include "state.h"

namespace hurray::level_zero {

// ---- events ---------------------------------------------------------------

// An event of d's pools not lent to anyone (under d.mu); adds a pool when
// all are lent.
hurray_status take_event(const Api &ze, Device &d, ze_event_handle_t *out, Slot *slot,
                         hurray_error *err) {
  if (d.free_slots.empty()) {
    ze_event_pool_desc_t pd{};
    pd.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC;
    pd.flags = static_cast<ze_event_pool_flags_t>(ZE_EVENT_POOL_FLAG_HOST_VISIBLE) |
               (d.ipc_pools ? static_cast<ze_event_pool_flags_t>(ZE_EVENT_POOL_FLAG_IPC) : 0u);
    pd.count = kEventsPerPool;
    d.pools.reserve(d.pools.size() + 1);
    d.free_slots.reserve(d.free_slots.size() + kEventsPerPool);
    d.lent.reserve(d.lent.size() + kEventsPerPool);
    // numDevices 0: the events are visible to every device of the context.
    ze_event_pool_handle_t pool = nullptr;
    const ze_result_t r = ze.zeEventPoolCreate(d.driver->context, &pd, 0, nullptr, &pool);
    if (r != ZE_RESULT_SUCCESS || pool == nullptr)
      return code_fail(err, r != ZE_RESULT_SUCCESS ? HURRAY_OK : HURRAY_E_BACKEND,
                       "zeEventPoolCreate", ze_code(r), "%u events for device %d '%s'%s",
                       kEventsPerPool, static_cast<int>(d.ordinal), d.name.c_str(),
                       pool == nullptr && r == ZE_RESULT_SUCCESS ? " (no pool returned)" : "");
    Pool p;
    p.handle = pool;
    d.pools.push_back(p);
    for (uint32_t i = kEventsPerPool; i-- > 0;)
      d.free_slots.push_back(Slot{d.pools.size() - 1, i});
  }
  const Slot sl = d.free_slots.back();
  ze_event_handle_t &ev = d.pools[sl.pool].events[sl.index];
  if (ev == nullptr) {
    ze_event_desc_t ed{};
    ed.stype = ZE_STRUCTURE_TYPE_EVENT_DESC;
    ed.index = sl.index;
    ed.signal = ZE_EVENT_SCOPE_FLAG_HOST;
    ed.wait = ZE_EVENT_SCOPE_FLAG_HOST;
    const ze_result_t r = ze.zeEventCreate(d.pools[sl.pool].handle, &ed, &ev);
    if (r != ZE_RESULT_SUCCESS || ev == nullptr) {
      ev = nullptr;
      return code_fail(err, r != ZE_RESULT_SUCCESS ? HURRAY_OK : HURRAY_E_BACKEND, "zeEventCreate",
                       ze_code(r), "event %u of a pool of device %d '%s'%s", sl.index,
                       static_cast<int>(d.ordinal), d.name.c_str(),
                       r == ZE_RESULT_SUCCESS ? " (no event returned)" : "");
    }
  }
  d.free_slots.pop_back();
  *out = ev;
  *slot = sl;
  return HURRAY_OK;
}

hurray_status event_record(void *state, int32_t device, void *stream, void **event,
                           uint64_t *value, hurray_error *err) {
  auto [refused, s, d] = kit::enter<State>(state, device, err, "event_record: event and value",
                                           event, value);
  if (refused != HURRAY_OK) return refused;
  const Api &ze = s->ze;
  std::lock_guard<std::mutex> lock(d->mu);
  ze_event_handle_t ev = nullptr;
  Slot slot;
  if (const hurray_status st = take_event(ze, *d, &ev, &slot, err)) return st;
  auto *list = stream != nullptr ? static_cast<ze_command_list_handle_t>(stream) : d->list;
  try {
    d->lent.emplace(ev, slot);
  } catch (...) {
    d->free_slots.push_back(slot);  // capacity reserved when the pool was made
    throw;
  }
  const ze_result_t r = ze.zeCommandListAppendBarrier(list, ev, 0, nullptr);
  if (r != ZE_RESULT_SUCCESS) {
    d->lent.erase(ev);
    d->free_slots.push_back(slot);
    return code_fail(err, HURRAY_OK, "zeCommandListAppendBarrier", ze_code(r),
                     "signalling an event on %s command list of device %d '%s'",
                     stream != nullptr && list != d->list ? "the given" : "the plugin's",
                     static_cast<int>(device), d->name.c_str());
  }
  return hurray::kit::give_binary_event(ev, event, value);
}

hurray_status event_wait(void *state, int32_t device, void *event, uint64_t value, void *stream,
                         hurray_error *err) {
  auto [refused, s, d] = kit::enter_binary_wait<State>(state, device, event, value, "Level Zero",
                                                       err);
  if (refused != HURRAY_OK) return refused;
  const Api &ze = s->ze;
  auto *ev = static_cast<ze_event_handle_t>(event);
  if (stream == nullptr) {
    const ze_result_t r = ze.zeEventHostSynchronize(ev, UINT64_MAX);
    if (r != ZE_RESULT_SUCCESS)
      return code_fail(err, HURRAY_OK, "zeEventHostSynchronize", ze_code(r), "device %d '%s'",
                       static_cast<int>(device), d->name.c_str());
    return HURRAY_OK;
  }
  auto *list = static_cast<ze_command_list_handle_t>(stream);
  std::lock_guard<std::mutex> lock(d->mu);
  const ze_result_t r = ze.zeCommandListAppendWaitOnEvents(list, 1, &ev);
  if (r != ZE_RESULT_SUCCESS)
    return code_fail(err, HURRAY_OK, "zeCommandListAppendWaitOnEvents", ze_code(r),
                     "%s command list of device %d '%s'",
                     list == d->list ? "the plugin's" : "the given", static_cast<int>(device),
                     d->name.c_str());
  return HURRAY_OK;
}

void event_release(void *state, int32_t device, void *event) {
  auto *s = static_cast<State *>(state);
  Device *found = nullptr;
  if (event == nullptr || find_device(s, device, &found, nullptr) != HURRAY_OK) return;
  Device &d = *found;
  const Api &ze = s->ze;
  auto *ev = static_cast<ze_event_handle_t>(event);
  std::lock_guard<std::mutex> lock(d.mu);
  if (auto it = d.lent.find(ev); it != d.lent.end()) {
    ze.zeEventHostReset(ev);
    const Slot slot = it->second;
    d.lent.erase(it);
    d.free_slots.push_back(slot);  // capacity reserved when the pool was made
    return;
  }
  if (auto it = d.imported.find(ev); it != d.imported.end()) {
    ze.zeEventDestroy(ev);
    ze.zeEventPoolCloseIpcHandle(it->second.pool);
    if (it->second.fd >= 0) close(it->second.fd);
    d.imported.erase(it);
  }
}

}  // namespace hurray::level_zero
