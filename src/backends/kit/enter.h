// The prologue of a plugin entry, written once: the state cast, the device
// lookup and the NULL checks of the pointers the entry fills. Part of the
// plugin kit; for plugins whose State holds its devices in `devices` (a
// vector of Device or of std::unique_ptr<Device>).
//
// Every entry calls it in one shape, two lines that show the variables it
// declares and the one return:
//
//   auto [refused, s, d] = kit::enter_out<State>(state, device, out, err, "native: out");
//   if (refused != HURRAY_OK) return refused;
//
// s is the state (State *, const as the template argument is), d its device,
// refused HURRAY_OK or the status the entry returns at once (err filled).
// kit::enter checks, kit::enter_out also zeroes *out, kit::enter_binary_wait
// and kit::enter_release_after are those prologues of a plugin whose events
// are binary; copy_to_host and copy_from_host are each one visible call of
// kit::copy_entry. The kit has no macro that declares a variable or returns.
//
// The loader already guarantees a probed state, a valid ordinal and non-NULL
// out pointers (include/hurray_backend.h, "Loader:" of each entry); these
// are the plugin's one defensive check of them (kit::check_device), so that
// a direct caller of the table gets an error and not a crash.
#pragma once

#include <hurray_backend.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <type_traits>
#include <utility>

#include "entry.h"
#include "errors.h"

namespace hurray::kit {

// The device an element of State::devices is.
template <class T>
auto *element(T &device) noexcept {
  if constexpr (requires { device.get(); })
    return device.get();
  else
    return &device;
}

// *out = device `device` of s: s not NULL and the ordinal below
// s->devices.size(), else check_device's error.
template <class State, class Device>
hurray_status find_device(State *s, int32_t device, Device **out, hurray_error *err) noexcept {
  const size_t count = s != nullptr ? s->devices.size() : 0;
  if (const hurray_status st = check_device(s, device, count, err)) return st;
  *out = element(s->devices[static_cast<size_t>(device)]);
  return HURRAY_OK;
}

// "<plugin>: <what> must not be NULL" (INVALID_ARGUMENT) when one of ptrs
// is NULL, else OK. `what` names the entry and the pointers:
// "event_record: event and value".
template <class... Ptr>
hurray_status check_not_null(hurray_error *err, const char *what, const Ptr *...ptrs) noexcept {
  // Not folded inside the if: clang 14 warns of the parentheses left
  // around a single comparison (-Wparentheses-equality).
  const bool any_null = ((ptrs == nullptr) || ...);
  if (any_null) return refuse(err, HURRAY_E_INVALID_ARGUMENT, "%s must not be NULL", what);
  return HURRAY_OK;
}

// The device type of State::devices' elements (const with a const State
// over a vector of Device).
template <class State>
using DeviceOf = std::remove_pointer_t<decltype(element(std::declval<State &>().devices[0]))>;

// What a prologue gives, for `auto [refused, s, d] = ...`: refused is
// HURRAY_OK or the status to return (err filled), s the state, d its device
// (both set only when refused is OK).
template <class State>
struct Entered {
  hurray_status refused;
  State *s;
  DeviceOf<State> *d;
};

// The prologue: s = the state, d = its device `device` (find_device), and
// every one of ptrs not NULL (check_not_null(err, what, ptrs...)).
template <class State, class... Ptr>
Entered<State> enter(void *state, int32_t device, hurray_error *err, const char *what,
                     const Ptr *...ptrs) noexcept {
  Entered<State> e{HURRAY_OK, static_cast<State *>(state), nullptr};
  e.refused = find_device(e.s, device, &e.d, err);
  if (e.refused == HURRAY_OK) e.refused = check_not_null(err, what, ptrs...);
  return e;
}

// enter(...) for an entry that fills *out: out is among the pointers
// checked, and *out is zeroed once they are.
template <class State, class Out, class... Ptr>
Entered<State> enter_out(void *state, int32_t device, Out *out, hurray_error *err,
                         const char *what, const Ptr *...ptrs) noexcept {
  Entered<State> e = enter<State>(state, device, err, what, ptrs..., out);
  if (e.refused == HURRAY_OK) std::memset(out, 0, sizeof *out);
  return e;
}

// device_identity's prologue: enter_out(..., "device_identity: out"); *out
// zeroed is kind NONE, what a plugin leaves when its vendor cannot say.
template <class State>
Entered<State> enter_identity(void *state, int32_t device, hurray_backend_device_identity *out,
                              hurray_error *err) noexcept {
  return enter_out<State>(state, device, out, err, "device_identity: out");
}

// native's result: out->handles[0..] = the plugin's handles, in its
// documented order (docs/backends/<plugin>.md; at most 8, the rest stay as
// they are); OK.
inline hurray_status give_handles(hurray_backend_native *out,
                                  std::initializer_list<void *> handles) noexcept {
  size_t i = 0;
  for (void *h : handles)
    if (i < sizeof out->handles / sizeof out->handles[0]) out->handles[i++] = h;
  return HURRAY_OK;
}

// classify's result for memory found: *device and *memory_class (each when
// not NULL); OK.
inline hurray_status give_class(int32_t *device, uint8_t *memory_class, int32_t found_device,
                                uint8_t found_class) noexcept {
  if (device != nullptr) *device = found_device;
  if (memory_class != nullptr) *memory_class = found_class;
  return HURRAY_OK;
}

// The prologue of copy_to_host and copy_from_host: *s = the state (not
// NULL: INVALID_ARGUMENT "<plugin>: <what>: the plugin state is NULL (probe
// first)"), kit::check_copy, and for a non-empty range *a = the
// allocation's record (its plugin_data) and *d = the record's device
// (find_device). *a stays NULL when n is 0: nothing to copy.
template <class State, class Record, class Device>
hurray_status enter_copy(void *state, const hurray_backend_allocation *alloc, uint64_t offset,
                         const void *host, uint64_t n, const char *what, State **s,
                         const Record **a, Device **d, hurray_error *err) noexcept {
  *s = static_cast<State *>(state);
  *a = nullptr;
  if (*s == nullptr)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT, "%s: the plugin state is NULL (probe first)",
                  what);
  if (const hurray_status st = check_copy(alloc, offset, host, n, what, err)) return st;
  if (n == 0) return HURRAY_OK;
  const auto *rec = static_cast<const Record *>(alloc->plugin_data);  // check_copy: not NULL
  if (const hurray_status st = find_device(*s, rec->device, d, err)) return st;
  *a = rec;
  return HURRAY_OK;
}

// The free entry, written once: with state and allocation not NULL,
// release(s, record) for the allocation's record (plugin_data, when set),
// then the handle's plugin_data, data and host cleared.
template <class State, class Record, class Release>
void free_record(void *state, hurray_backend_allocation *allocation, Release &&release) noexcept {
  auto *s = static_cast<State *>(state);
  if (s == nullptr || allocation == nullptr) return;
  if (auto *a = static_cast<Record *>(allocation->plugin_data)) release(s, a);
  allocation->plugin_data = nullptr;
  allocation->data = nullptr;
  allocation->host = nullptr;
}

// event_wait's prologue in a plugin whose events are binary: enter(...,
// "event_wait: event", event), then value 0 (check_binary_value).
template <class State>
Entered<State> enter_binary_wait(void *state, int32_t device, const void *event, uint64_t value,
                                 const char *vendor, hurray_error *err) noexcept {
  Entered<State> e = enter<State>(state, device, err, "event_wait: event", event);
  if (e.refused == HURRAY_OK) e.refused = check_binary_value("event_wait", value, vendor, err);
  return e;
}

// release_after's prologue there: enter(..., "release_after: done", done),
// then, with an event, value 0 (check_binary_value).
template <class State>
Entered<State> enter_release_after(void *state, int32_t device, const void *event,
                                   uint64_t value, void (*done)(void *), const char *vendor,
                                   hurray_error *err) noexcept {
  Entered<State> e = enter<State>(state, device, err, "release_after: done",
                                  reinterpret_cast<const void *>(done));
  if (e.refused == HURRAY_OK && event != nullptr)
    e.refused = check_binary_value("release_after", value, vendor, err);
  return e;
}

// copy_to_host (to_host) and copy_from_host, written once: enter_copy (its
// `what` is the entry's name), OK with nothing done when n is 0, else
// copy(s, a, d, offset, host, n, to_host, err), the plugin's copy over the
// record `a` and its device `d`. Not noexcept: the entry's barrier
// (kit::barrier, entry.h) is the one that catches.
template <class State, class Record, class Copy>
hurray_status copy_entry(void *state, const hurray_backend_allocation *alloc, uint64_t offset,
                         void *host, uint64_t n, bool to_host, hurray_error *err, Copy &&copy) {
  State *s = nullptr;
  const Record *a = nullptr;
  decltype(element(s->devices[0])) d = nullptr;
  if (const hurray_status st = enter_copy(state, alloc, offset, host, n,
                                          to_host ? "copy_to_host" : "copy_from_host", &s, &a,
                                          &d, err))
    return st;
  if (n == 0) return HURRAY_OK;
  return copy(s, a, d, offset, host, n, to_host, err);
}

}  // namespace hurray::kit
