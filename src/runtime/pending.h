// Guard mode's record of deferred releases (hurray_handoff_release_after)
// whose device work has not completed yet, so that context destruction and
// process exit can report the ones that never complete (BP-REL-DEFER,
// docs/spec/buffer-protocol.md). Only handoffs released after work in a
// guarded context are recorded; the list is process-wide, under one mutex.
#pragma once

#include <hurray.h>

#include <cstddef>

namespace hurray::detail {

struct PendingNode {
  PendingNode *prev = nullptr, *next = nullptr;
  hurray_context *ctx = nullptr;     // nullptr once reported (the context may be gone)
  const void *created_at = nullptr;  // return address of the release_after call
  bool linked = false;
};

void pending_track(hurray_context *ctx, PendingNode *node, const void *where) noexcept;
void pending_untrack(PendingNode *node) noexcept;
// Forget every pending release of ctx: the return addresses of the first
// `cap` into where, in list order; returns how many there were (context.cpp
// reports them, BP-REL-DEFER).
size_t pending_take(hurray_context *ctx, const void **where, size_t cap) noexcept;

}  // namespace hurray::detail
