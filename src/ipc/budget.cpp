// The process's descriptor budget across all IPC channels (BP-IPC-LIMIT):
// the descriptors that received handoffs hold while they wait in any
// channel's queue for hurray_ipc_receive, together. Each channel's own
// limit (max_queued_fds, 128) bounds one peer; the budget bounds all of them
// at once, so that several hostile peers cannot take the descriptors the
// rest of the process needs. Default: half of RLIMIT_NOFILE's soft limit
// when first needed (at least 64); hurray_ipc_set_fd_budget() sets it.
#include <hurray_ipc.h>

#include <sys/resource.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "../core/internal.h"
#include "internal.h"

using namespace hurray::detail;

namespace {

std::atomic<size_t> g_held{0};
std::atomic<uint32_t> g_budget{0};  // 0: the default, not yet worked out

uint32_t default_budget() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == RLIM_INFINITY ||
      r.rlim_cur > (rlim_t{1} << 20))
    return 1u << 19;
  const auto half = static_cast<uint32_t>(r.rlim_cur / 2);
  return half < 64 ? 64 : half;
}

}  // namespace

namespace hurray::ipc {

uint32_t fd_budget() {
  uint32_t b = g_budget.load(std::memory_order_relaxed);
  if (b == 0) {
    uint32_t expected = 0;
    const uint32_t d = default_budget();
    b = g_budget.compare_exchange_strong(expected, d) ? d : expected;
  }
  return b;
}

size_t fd_budget_held() { return g_held.load(std::memory_order_relaxed); }

bool fd_budget_take(size_t n) {
  const size_t budget = fd_budget();
  size_t held = g_held.load(std::memory_order_relaxed);
  do {
    if (held + n > budget) return false;
  } while (!g_held.compare_exchange_weak(held, held + n, std::memory_order_relaxed));
  return true;
}

void fd_budget_give(size_t n) { g_held.fetch_sub(n, std::memory_order_relaxed); }

}  // namespace hurray::ipc

extern "C" {

HURRAY_API hurray_status hurray_ipc_set_fd_budget(uint32_t max_fds, uint32_t *previous,
                                                  hurray_error *err) {
  if (previous) *previous = hurray::ipc::fd_budget();
  if (max_fds != 0 && max_fds < static_cast<unsigned>(hurray::ipc::kMaxFds))
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_ipc_set_fd_budget: %u descriptors (at least %u: one HANDOFF's)", max_fds,
                static_cast<unsigned>(hurray::ipc::kMaxFds));
  g_budget.store(max_fds ? max_fds : default_budget());
  return HURRAY_OK;
}

}  // extern "C"
