// Guard mode's list of pending deferred releases and its report (pending.h).
#include "pending.h"

#include <mutex>

#include "context.h"

namespace hurray::detail {
namespace {

constinit std::mutex g_mu;
constinit PendingNode *g_first = nullptr;

void unlink_locked(PendingNode *n) noexcept {
  if (n->prev) n->prev->next = n->next; else g_first = n->next;
  if (n->next) n->next->prev = n->prev;
  n->prev = n->next = nullptr;
  n->linked = false;
}

}  // namespace

void pending_track(hurray_context *ctx, PendingNode *node, const void *where) noexcept {
  std::lock_guard<std::mutex> lock(g_mu);
  node->ctx = ctx;
  node->created_at = where;
  node->prev = nullptr;
  node->next = g_first;
  if (g_first) g_first->prev = node;
  g_first = node;
  node->linked = true;
}

void pending_untrack(PendingNode *node) noexcept {
  std::lock_guard<std::mutex> lock(g_mu);
  if (node->linked) unlink_locked(node);
}

void report_pending(hurray_context *ctx, const char *when) noexcept {
  if (!ctx->guard.load(std::memory_order_relaxed)) return;
  // Collect first, report outside the lock (the callback may call back in).
  const void *where[64];
  size_t n = 0, total = 0;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    for (PendingNode *p = g_first; p;) {
      PendingNode *const next = p->next;
      if (p->ctx == ctx) {
        if (n < 64) where[n++] = p->created_at;
        ++total;
        p->ctx = nullptr;
        unlink_locked(p);
      }
      p = next;
    }
  }
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

}  // namespace hurray::detail
