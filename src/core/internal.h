// What src/core offers the rest of libhurray: the validity tables, the policy
// representation, error filling and the rule engine. Not installed.
#pragma once

#include <hurray.h>

#include <array>
#include <cstdarg>
#include <cstdint>
#include <new>

#include "barrier.h"

// A failed call returns visibly: `if (const hurray_status st = f(...)) return st;`
// (HURRAY_OK is 0; no macro hides the return, issue 36).

namespace hurray::detail {

// ---- tables (tables.cpp): every validity table of the protocol, as data ----

// Category of a device_tag byte.
enum class TagKind : uint8_t { Named, Reserved, Private, Invalid };
// Category of a memory_class byte.
enum class ClassKind : uint8_t { Named, Reserved, Private, Invalid };

struct DeviceInfo {
  const char *name;
  // Bit n set: memory class n (0..3) is valid with this tag (TABLES.md §3).
  uint8_t valid_classes;
  bool private_classes_ok;  // private memory classes 0xF0-0xFE allowed
  bool gpu_memory;          // TABLES.md §5 "GPU memory" (BP-ALIGN-GPU-PAGE)
  uint32_t should_alignment;  // device-specific SHOULD (BP-ALIGN-HEXAGON), 0 none
  unsigned default_ipc_sync;  // HURRAY_IPC_SYNC_* by default (TABLES.md §5)
};

// TABLES.md §2, §3 and §5 for the named device tags, as data in one place.
namespace table {
constexpr uint8_t S = 1u << HURRAY_MEMORY_STANDARD, H = 1u << HURRAY_MEMORY_HOST_PINNED,
                  U = 1u << HURRAY_MEMORY_UNIFIED, P = 1u << HURRAY_MEMORY_PEER;
constexpr unsigned EV = HURRAY_IPC_SYNC_EVENTS;
}  // namespace table
//                                         name          classes         priv   gpu    should ipc
inline constexpr DeviceInfo kNamedDevices[] = {
    /* 0x00 */ {"CPU",        table::S,                                 false, false, 0,   0},
    /* 0x01 */ {"CUDA",       table::S | table::H | table::U | table::P, false, true,  0,   table::EV},
    /* 0x02 */ {"ROCM",       table::S | table::H | table::U | table::P, false, true,  0,   table::EV},
    /* 0x03 */ {"METAL",      table::S | table::H | table::U,            false, true,  0,   0},
    /* 0x04 */ {"VULKAN",     table::S | table::H | table::U,            false, true,  0,   table::EV},
    /* 0x05 */ {"WEBGPU",     table::S,                                 false, true,  0,   0},
    /* 0x06 */ {"HEXAGON",    table::S | table::U,                      false, false, 128, 0},
    /* 0x07 */ {"LEVEL_ZERO", table::S | table::H | table::U | table::P, false, true,  0,   table::EV},
    /* 0x08 */ {"OPENCL",     table::S | table::H | table::U,            false, true,  0,   0},
};
static_assert(sizeof(kNamedDevices) / sizeof(kNamedDevices[0]) == HURRAY_DEVICE_OPENCL + 1);
// Private tags: STANDARD or a private class; nothing exported over IPC.
inline constexpr DeviceInfo kPrivateDevice = {"private", table::S, true, false, 0, 0};

TagKind tag_kind(uint8_t tag) noexcept;
ClassKind class_kind(uint8_t mc) noexcept;
// Info for a named or private tag; nullptr for reserved/invalid.
const DeviceInfo *device_info(uint8_t tag) noexcept;
bool pair_valid(uint8_t tag, uint8_t mc) noexcept;

constexpr bool is_pow2(uint64_t v) noexcept { return v != 0 && (v & (v - 1)) == 0; }

constexpr std::array<uint8_t, 256> default_ipc_sync() {
  std::array<uint8_t, 256> a{};
  for (unsigned t = 0; t <= HURRAY_DEVICE_OPENCL; ++t)
    a[t] = static_cast<uint8_t>(kNamedDevices[t].default_ipc_sync);
  return a;
}

// ---- policy (policy.cpp) ----
// Default-constructed, a Policy is the default policy (constant-initialised).
struct Policy {
  hurray_transport transport = HURRAY_TRANSPORT_IN_PROCESS;
  bool warnings_as_errors = false;
  uint16_t private_allowed = 0;  // bit (tag - 0xF0)
  std::array<uint8_t, 256> ipc_sync = default_ipc_sync();  // HURRAY_IPC_SYNC_* per tag

  bool private_agreed(uint8_t tag) const noexcept {
    return tag >= 0xF0 && tag <= 0xFE && (private_allowed >> (tag - 0xF0)) & 1u;
  }
  bool needs_ipc_alignment() const noexcept {
    return transport == HURRAY_TRANSPORT_IPC || transport == HURRAY_TRANSPORT_RDMA;
  }
  bool is_network() const noexcept {
    return transport == HURRAY_TRANSPORT_RDMA ||
           transport == HURRAY_TRANSPORT_CROSS_MACHINE;
  }
};
inline constexpr Policy kDefaultPolicy{};
inline const Policy &default_policy() noexcept { return kDefaultPolicy; }
inline const Policy &resolve(const hurray_policy *p) noexcept;

// ---- errors (errors.cpp): the format of docs/errors.md ----
// Every function fills *err when it is not NULL and returns status, for
// `return fail(...)`. The message is "[RULE-ID: ][who: ]text": the ID of
// `rule` first (unless the text starts with it already), cut to
// HURRAY_ERROR_MESSAGE_SIZE (core/message.h).
// fail: the text names who refuses itself ("hurray_x: ...", "hurray_ipc: ...").
hurray_status fail(hurray_error *err, hurray_status status, hurray_rule rule,
                   const char *fmt, ...) noexcept
    __attribute__((format(printf, 4, 5)));
// refuse: "[RULE-ID: ]<who>: <text>", who being the public function or layer.
hurray_status refuse(hurray_error *err, hurray_status status, hurray_rule rule, const char *who,
                     const char *fmt, ...) noexcept __attribute__((format(printf, 5, 6)));
// fill: any severity, buffer index and byte offset (the rule engine, reports).
void fill(hurray_error *err, hurray_status status, hurray_rule rule,
          hurray_severity severity, int64_t index, int64_t offset,
          const char *fmt, ...) noexcept __attribute__((format(printf, 7, 8)));
hurray_status status_of_rule(hurray_rule rule) noexcept;
// INVALID_ARGUMENT "<fn>: <what> is NULL", for `if (!p) return null_argument(...)`.
[[gnu::cold]] hurray_status null_argument(hurray_error *err, const char *fn,
                                          const char *what) noexcept;
// OUT_OF_MEMORY "<who>: out of memory".
[[gnu::cold]] hurray_status out_of_memory(hurray_error *err, const char *who) noexcept;

// ---- the exception barrier of libhurray (core, handoff, runtime, IPC) ----
// The one place where an exception thrown inside the library stops: a
// public entry point whose body can throw (a std::vector or std::string
// growing, a std::thread starting) runs it through guarded(), and the code
// below may let exceptions fly. Every exception the code here throws is a
// shortage (std::bad_alloc, std::length_error, a std::system_error for a
// thread), so each becomes OUT_OF_MEMORY "<who>: out of memory".
// barrier() (core/barrier.h) is the general form, for a body that returns
// something else: on an exception it returns on_throw() instead.
template <class Body>
hurray_status guarded(hurray_error *err, const char *who, Body &&body) noexcept {
  return barrier(body, [&] { return out_of_memory(err, who); });
}

// The body of a hurray_*_create(T **out, err): *out = a new T, else
// INVALID_ARGUMENT "<fn>: out is NULL" or OUT_OF_MEMORY "<fn>: out of memory".
template <class T>
hurray_status create_object(T **out, const char *fn, hurray_error *err) noexcept {
  if (!out) return null_argument(err, fn, "out");
  auto *p = new (std::nothrow) T;
  if (!p) return out_of_memory(err, fn);
  *out = p;
  return HURRAY_OK;
}

// ---- rule engine (validate.cpp) ----
// One violation found while validating, before any message is formatted.
struct Finding {
  hurray_rule rule;
  hurray_severity severity;
  int64_t index;   // buffer index, -1 none
  int64_t offset;  // byte offset in the input, -1 none
};
// fill() for a finding: its rule, severity, buffer index and byte offset.
// (status is the caller's: errors.cpp is compiled into test programs that
// link only the public symbols of libhurray, status_of_rule is not one.)
void fill(hurray_error *err, hurray_status status, const Finding &f, const char *fmt, ...) noexcept
    __attribute__((format(printf, 4, 5)));
// Format the message for a finding about handle h (may be null for BP-SIZE).
void describe(const Finding &f, const hurray_buffer_handle *h,
              const hurray_buffer_handle *first, const Policy &p, size_t size,
              hurray_error *out) noexcept;

}  // namespace hurray::detail

// The opaque public type is the policy itself.
struct hurray_policy : hurray::detail::Policy {};

namespace hurray::detail {
inline const Policy &resolve(const hurray_policy *p) noexcept {
  return p ? static_cast<const Policy &>(*p) : default_policy();
}
}  // namespace hurray::detail
