// What src/runtime offers the rest of libhurray: hurray_context (reference
// counted, guard mode and its reports, the live-handoff list for leak
// reports) and the default context used for NULL.
#pragma once

#include <hurray.h>

#include <atomic>
#include <cstdint>
#include <mutex>

#include "../core/internal.h"

namespace hurray::detail {

// A live handoff as the guard sees it (intrusive list node; see src/handoff/guard.cpp).
struct GuardNode {
  GuardNode *prev = nullptr, *next = nullptr;
  const void *created_at = nullptr;  // return address of the exporting call
};

// "libfoo.so (producer_make+0x1c)" for a code address; "unknown" if none.
void describe_address(const void *addr, char *out, size_t n) noexcept;

}  // namespace hurray::detail

struct hurray_context {
  std::atomic<int64_t> refs{1};
  std::atomic<bool> guard{false};
  std::atomic<uint64_t> reports{0};
  bool immortal = false;  // the default context
  std::mutex mu;          // callback and live list
  hurray_guard_fn fn = nullptr;
  void *user = nullptr;
  hurray::detail::GuardNode live;  // sentinel of a circular list
  // What this context's producers may hand out (wrap, alloc, export).
  // Written only by hurray_context_set_policy, before use.
  hurray_policy policy;

  hurray_context() { live.prev = live.next = &live; }
};

namespace hurray::detail {

// The default context, used for NULL: lives from library load to exit, and
// is a plain object so that resolving NULL costs no call.
extern hurray_context g_default_context;
inline hurray_context *default_context() noexcept { return &g_default_context; }
inline hurray_context *resolve(hurray_context *ctx) noexcept {
  return ctx ? ctx : default_context();
}
void context_ref(hurray_context *ctx) noexcept;
void context_unref(hurray_context *ctx) noexcept;

// Guard mode: record a live handoff, forget it, and report a violation.
void guard_track(hurray_context *ctx, GuardNode *node) noexcept;
void guard_untrack(hurray_context *ctx, GuardNode *node) noexcept;
void guard_report(hurray_context *ctx, hurray_rule rule, const void *created_at,
                  const char *fmt, ...) noexcept __attribute__((format(printf, 4, 5)));

}  // namespace hurray::detail
