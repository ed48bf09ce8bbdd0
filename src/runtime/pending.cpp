// Guard mode's list of pending deferred releases (pending.h); context.cpp
// reports them.
#include "pending.h"

#include <mutex>

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

size_t pending_take(hurray_context *ctx, const void **where, size_t cap) noexcept {
  size_t n = 0, total = 0;
  std::lock_guard<std::mutex> lock(g_mu);
  for (PendingNode *p = g_first; p;) {
    PendingNode *const next = p->next;
    if (p->ctx == ctx) {
      if (n < cap) where[n++] = p->created_at;
      ++total;
      p->ctx = nullptr;
      unlink_locked(p);
    }
    p = next;
  }
  return total;
}

}  // namespace hurray::detail
