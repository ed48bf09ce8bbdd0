// What src/core offers the rest of libhurray: the validity tables, the policy
// representation, error filling and the rule engine. Not installed.
#pragma once

#include <hurray.h>

#include <array>
#include <cstdarg>
#include <cstdint>

// Return early from a function returning hurray_status when expr fails.
#define HURRAY_RETURN_NOT_OK(expr)                      \
  do {                                                  \
    const hurray_status hurray_st_ = (expr);            \
    if (hurray_st_ != HURRAY_OK) return hurray_st_;     \
  } while (0)

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

TagKind tag_kind(uint8_t tag) noexcept;
ClassKind class_kind(uint8_t mc) noexcept;
// Info for a named or private tag; nullptr for reserved/invalid.
const DeviceInfo *device_info(uint8_t tag) noexcept;
bool pair_valid(uint8_t tag, uint8_t mc) noexcept;

constexpr bool is_pow2(uint64_t v) noexcept { return v != 0 && (v & (v - 1)) == 0; }

// Bit n set: memory class n is valid with named device tag t (TABLES.md §3).
// The same data as DeviceInfo::valid_classes, for the validation fast path.
extern const uint8_t kNamedValidClasses[HURRAY_DEVICE_OPENCL + 1];

// ---- policy (policy.cpp) ----
struct Policy {
  hurray_transport transport = HURRAY_TRANSPORT_IN_PROCESS;
  bool warnings_as_errors = false;
  uint16_t private_allowed = 0;  // bit (tag - 0xF0)
  std::array<uint8_t, 256> ipc_sync{};  // HURRAY_IPC_SYNC_* per tag

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
extern const Policy kDefaultPolicy;
inline const Policy &default_policy() noexcept { return kDefaultPolicy; }
inline const Policy &resolve(const hurray_policy *p) noexcept;

// ---- errors (errors.cpp) ----
// Fill *err (if not null). Returns status for `return fail(...)` chains.
hurray_status fail(hurray_error *err, hurray_status status, hurray_rule rule,
                   const char *fmt, ...) noexcept
    __attribute__((format(printf, 4, 5)));
void fill(hurray_error *err, hurray_status status, hurray_rule rule,
          hurray_severity severity, int64_t index, int64_t offset,
          const char *fmt, ...) noexcept __attribute__((format(printf, 7, 8)));
hurray_status status_of_rule(hurray_rule rule) noexcept;

// ---- rule engine (validate.cpp) ----
// One violation found while validating, before any message is formatted.
struct Finding {
  hurray_rule rule;
  hurray_severity severity;
  int64_t index;   // buffer index, -1 none
  int64_t offset;  // byte offset in the input, -1 none
};
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
