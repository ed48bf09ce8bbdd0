// hurray_context: guard mode, its reports, and the default context.
#include "context.h"
#include "pending.h"

#include <dlfcn.h>

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "../core/internal.h"

namespace hurray::detail {
namespace {

void report_leaks(hurray_context *ctx, const char *when) noexcept {
  if (!ctx->guard.load(std::memory_order_relaxed)) return;
  // Collect first, report outside the lock (the callback may take time).
  const void *where[64];
  size_t n = 0, total = 0;
  {
    std::lock_guard<std::mutex> lock(ctx->mu);
    for (GuardNode *g = ctx->live.next; g != &ctx->live; g = g->next) {
      if (n < 64) where[n++] = g->created_at;
      ++total;
    }
  }
  for (size_t i = 0; i < n; ++i)
    guard_report(ctx, HURRAY_RULE_REL_ONCE, where[i],
                 "BP-REL-ONCE: a handoff was never released (leak found %s)", when);
  if (total > n)
    guard_report(ctx, HURRAY_RULE_REL_ONCE, nullptr,
                 "BP-REL-ONCE: %zu more handoffs were never released (leak found %s)",
                 total - n, when);
}

// Report (BP-REL-DEFER) and forget every pending release of ctx (pending.h).
void report_pending(hurray_context *ctx, const char *when) noexcept {
  if (!ctx->guard.load(std::memory_order_relaxed)) return;
  // Collect first, report outside the lock (the callback may call back in).
  const void *where[64];
  const size_t total = pending_take(ctx, where, 64);
  const size_t n = total < 64 ? total : 64;
  for (size_t i = 0; i < n; ++i)
    guard_report(ctx, HURRAY_RULE_REL_AFTER, where[i],
                 "BP-REL-DEFER: a release deferred to device work "
                 "(hurray_handoff_release_after) is still pending %s: the work never "
                 "completed",
                 when);
  if (total > n)
    guard_report(ctx, HURRAY_RULE_REL_AFTER, nullptr,
                 "BP-REL-DEFER: %zu more deferred releases are still pending %s", total - n,
                 when);
}

void at_exit() {
  report_pending(default_context(), "at process exit");
  report_leaks(default_context(), "at process exit");
}

}  // namespace

// The default context exists from library load on, so that NULL resolves to
// it without a lazy-initialisation check on every call.
hurray_context g_default_context;

namespace {

bool init_default_context() {
  g_default_context.immortal = true;
  const char *env = std::getenv("HURRAY_GUARD");
  if (env && std::strcmp(env, "1") == 0) {
    g_default_context.guard.store(true);
    std::atexit(at_exit);
  }
  return true;
}
// Initialised in order of definition within this file: after g_default_context.
[[maybe_unused]] const bool g_default_ready = init_default_context();

}  // namespace

void context_ref(hurray_context *ctx) noexcept {
  if (!ctx->immortal) ctx->refs.fetch_add(1, std::memory_order_relaxed);
}

void context_unref(hurray_context *ctx) noexcept {
  if (!ctx->immortal && ctx->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete ctx;
}

void guard_track(hurray_context *ctx, GuardNode *node) noexcept {
  std::lock_guard<std::mutex> lock(ctx->mu);
  node->prev = ctx->live.prev;
  node->next = &ctx->live;
  ctx->live.prev->next = node;
  ctx->live.prev = node;
}

void guard_untrack(hurray_context *ctx, GuardNode *node) noexcept {
  std::lock_guard<std::mutex> lock(ctx->mu);
  if (!node->next) return;
  node->prev->next = node->next;
  node->next->prev = node->prev;
  node->prev = node->next = nullptr;
}

void describe_address(const void *addr, char *out, size_t n) noexcept {
  Dl_info info;
  if (!addr || !dladdr(addr, &info) || !info.dli_fname) {
    std::snprintf(out, n, "unknown");
    return;
  }
  const char *file = std::strrchr(info.dli_fname, '/');
  file = file ? file + 1 : info.dli_fname;
  if (info.dli_sname)
    std::snprintf(out, n, "%s (%s+0x%" PRIxPTR ")", file, info.dli_sname,
                  reinterpret_cast<uintptr_t>(addr) - reinterpret_cast<uintptr_t>(info.dli_saddr));
  else
    std::snprintf(out, n, "%s+0x%" PRIxPTR, file,
                  reinterpret_cast<uintptr_t>(addr) - reinterpret_cast<uintptr_t>(info.dli_fbase));
}

void guard_report(hurray_context *ctx, hurray_rule rule, const void *created_at,
                  const char *fmt, ...) noexcept {
  char what[160], where[96];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  describe_address(created_at, where, sizeof where);
  hurray_error report;
  fill(&report, status_of_rule(rule), rule, HURRAY_SEVERITY_ERROR, -1, -1,
       "%s; handoff created at %s", what, where);
  ctx->reports.fetch_add(1, std::memory_order_relaxed);
  hurray_guard_fn fn;
  void *user;
  {
    std::lock_guard<std::mutex> lock(ctx->mu);
    fn = ctx->fn;
    user = ctx->user;
  }
  if (fn)
    fn(user, &report);
  else
    std::fprintf(stderr, "hurray guard: %s\n", report.message);
}

}  // namespace hurray::detail

using namespace hurray::detail;

extern "C" {

HURRAY_API hurray_status hurray_context_create(hurray_context **out, hurray_error *err) {
  return create_object(out, "hurray_context_create", err);
}

HURRAY_API void hurray_context_destroy(hurray_context *ctx) {
  if (!ctx || ctx->immortal) return;
  report_pending(ctx, "when the context was destroyed");
  report_leaks(ctx, "when the context was destroyed");
  context_unref(ctx);
}

HURRAY_API hurray_status hurray_context_set_guard(hurray_context *ctx, int enable,
                                                  hurray_error *err) {
  (void)err;
  resolve(ctx)->guard.store(enable != 0, std::memory_order_relaxed);
  return HURRAY_OK;
}

HURRAY_API hurray_status hurray_context_set_guard_callback(hurray_context *ctx,
                                                           hurray_guard_fn fn, void *user,
                                                           hurray_error *err) {
  (void)err;
  hurray_context *c = resolve(ctx);
  std::lock_guard<std::mutex> lock(c->mu);
  c->fn = fn;
  c->user = user;
  return HURRAY_OK;
}

HURRAY_API hurray_status hurray_context_set_policy(hurray_context *ctx,
                                                   const hurray_policy *policy,
                                                   hurray_error *err) {
  (void)err;
  hurray_context *c = resolve(ctx);
  static_cast<Policy &>(c->policy) = policy ? static_cast<const Policy &>(*policy) : Policy{};
  return HURRAY_OK;
}

HURRAY_API uint64_t hurray_context_guard_count(const hurray_context *ctx) {
  const hurray_context *c = ctx ? ctx : default_context();
  return c->reports.load(std::memory_order_relaxed);
}

}  // extern "C"
