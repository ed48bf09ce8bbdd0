// Guard mode's record of deferred releases (hurray_handoff_release_after)
// whose device work has not completed yet, so that context destruction and
// process exit can report the ones that never complete (BP-REL-DEFER,
// docs/spec/buffer-protocol.md). Only handoffs released after work in a
// guarded context are recorded; the list is process-wide, under one mutex.
#pragma once

#include <hurray.h>

namespace hurray::detail {

struct PendingNode {
  PendingNode *prev = nullptr, *next = nullptr;
  hurray_context *ctx = nullptr;     // nullptr once reported (the context may be gone)
  const void *created_at = nullptr;  // return address of the release_after call
  bool linked = false;
};

void pending_track(hurray_context *ctx, PendingNode *node, const void *where) noexcept;
void pending_untrack(PendingNode *node) noexcept;
// Report (BP-REL-DEFER) and forget every pending release of ctx.
void report_pending(hurray_context *ctx, const char *when) noexcept;

}  // namespace hurray::detail
