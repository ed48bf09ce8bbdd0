// The entry shim of the plugin kit: what stands between the loader and a
// plugin's own functions, the same for every in-tree plugin.
//
//  - The exception barrier. kit::barrier<&fn, "field"> is a noexcept
//    function that calls fn and turns whatever escapes it into a status:
//    std::bad_alloc is HURRAY_E_OUT_OF_MEMORY, anything else
//    HURRAY_E_INTERNAL, with "<plugin>: <entry>: ..." in err. A void entry
//    (shutdown, free, event_release) swallows it, device_count returns 0. fn
//    must not be noexcept itself (a throw inside a noexcept function ends the
//    process before any barrier sees it): the barrier refuses one that is.
//    A table stores it as `t.field = kit::barrier<&fn, "field">;`
//    (kit_table in entries.h does so for every entry of a kit plugin).
//  - The checks every plugin made on its own: the state and the ordinal
//    (check_device), and a copy's range (check_copy), with one wording.
//  - make_table: the fixed head of hurray_backend_v1.
//
// HURRAY_KIT_PLUGIN is the plugin's short name ("cuda"), defined for every
// source of a plugin by hurray_add_backend_plugin (cmake/HurrayBackend.cmake).
#pragma once

#include <hurray_backend.h>

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>

#include "errors.h"

namespace hurray::kit {

// A string as a template argument: the entry's name in the barrier's message.
template <size_t N>
struct Name {
  char text[N];
  constexpr Name(const char (&s)[N]) noexcept {  // NOLINT: implicit on purpose
    for (size_t i = 0; i < N; ++i) text[i] = s[i];
  }
};

// What the barrier does with the exception being handled (call only inside a
// catch block): fills err, returns OUT_OF_MEMORY or INTERNAL.
hurray_status caught(hurray_error *err, const char *entry) noexcept;

template <auto Fn, Name N>
struct Entry;

template <class R, class... A, bool NX, R (*Fn)(A...) noexcept(NX), Name N>
struct Entry<Fn, N> {
  static_assert(!NX, "a plugin entry behind the kit's barrier must not be noexcept itself");
  static R call(A... a) noexcept {
    try {
      return Fn(a...);
    } catch (...) {
      if constexpr (std::is_same_v<R, hurray_status>) {
        auto *err = std::get<sizeof...(A) - 1>(std::tuple<A...>(a...));
        static_assert(std::is_same_v<decltype(err), hurray_error *>,
                      "a status entry takes hurray_error *err last");
        return caught(err, N.text);
      } else if constexpr (std::is_void_v<R>) {
        caught(nullptr, N.text);
        return;
      } else {
        caught(nullptr, N.text);
        return R{};
      }
    }
  }
};

// The barrier around Fn, the entry named N: what a table's field holds.
template <auto Fn, Name N>
inline constexpr auto barrier = &Entry<Fn, N>::call;

// The table with its head filled and every function NULL.
constexpr hurray_backend_v1 make_table(uint8_t device_tag) noexcept {
  hurray_backend_v1 t{};
  t.api_version = HURRAY_BACKEND_API_VERSION;
  t.size = sizeof(hurray_backend_v1);
  t.name = kPlugin;
  t.device_tag = device_tag;
  return t;
}

// The state was probed and `device` is below count: else INVALID_ARGUMENT
// ("<plugin>: the plugin state is NULL (probe first)") or DEVICE_UNAVAILABLE
// ("<plugin>: there is no device N: it does not exist (M found)").
hurray_status check_device(const void *state, int32_t device, size_t count,
                           hurray_error *err) noexcept;

// A copy of n bytes at offset between host memory and *alloc: alloc not NULL,
// [offset, offset + n) inside it, and, unless n is 0 (nothing to do, OK),
// host not NULL and plugin_data set. INVALID_ARGUMENT with
// "<plugin>: <what>: ..." otherwise.
hurray_status check_copy(const hurray_backend_allocation *alloc, uint64_t offset,
                         const void *host, uint64_t n, const char *what,
                         hurray_error *err) noexcept;

// alloc's alignment and flags, which the loader hands over normalised (a
// power of two >= HURRAY_MIN_ALIGNMENT, no flag but HURRAY_ALLOC_SHAREABLE):
// checked once more here, the one place, for other callers of the table.
// *align = the alignment (HURRAY_MIN_ALIGNMENT for 0) raised to at least
// `floor` (the device's own minimum). INVALID_ARGUMENT "<plugin>: alloc:
// alignment N is not a power of two" or "<plugin>: alloc: unknown flags
// 0x..".
hurray_status check_alloc(uint32_t alignment, uint32_t flags, uint32_t floor, uint32_t *align,
                          hurray_error *err) noexcept;

// alloc's common start: check_alloc, then *out's size, alignment, flags
// (`out_flags`: HURRAY_HANDOFF_OPAQUE_DATA when data is a handle), device
// and class. A size above max_bytes (what the plugin's allocator can serve)
// is OUT_OF_MEMORY "<plugin>: N bytes cannot be allocated". The caller
// returns at once for byte_size 0: an empty buffer has no memory.
struct AllocAsked {
  int32_t device;
  uint8_t memory_class;
  uint64_t byte_size;
  uint32_t alignment;
  uint32_t flags;
};
hurray_status begin_alloc(const AllocAsked &asked, uint32_t floor, uint32_t out_flags,
                          uint64_t max_bytes, hurray_backend_allocation *out,
                          hurray_error *err) noexcept;

// The plugin's events are binary (no values): value must be 0, else
// INVALID_ARGUMENT "<plugin>: <entry>: <vendor> events are binary, the
// value must be 0 (not N)", entry being the caller ("event_wait",
// "release_after").
hurray_status check_binary_value(const char *entry, uint64_t value, const char *vendor,
                                 hurray_error *err) noexcept;

// event_record's result for a binary event: *event = ev, *value = 0; OK.
inline hurray_status give_binary_event(void *ev, void **event, uint64_t *value) noexcept {
  *event = ev;
  *value = 0;
  return HURRAY_OK;
}

}  // namespace hurray::kit
