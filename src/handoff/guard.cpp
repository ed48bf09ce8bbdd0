// Guard mode's part of the handoff layer: the checksum of host memory that
// must not change while handed off (BP-ZC-NOMUT, BP-ZC-QPARAM), tracking a
// record when it is published, the quarantine that keeps released records out
// of circulation for a while, and the report of a refused (stale) release
// with where the handoff was created. Outside guard mode none of it runs.
#include "internal.h"

namespace hurray::detail::handoff {

// Guard-mode checksum of host memory (BP-ZC-NOMUT, BP-ZC-QPARAM).
uint64_t checksum(const void *data, uint64_t n) {
  const auto *p = static_cast<const unsigned char *>(data);
  uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
  uint64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 0x100000001B3ull;
    h ^= h >> 29;
  }
  for (; i < n; ++i) h = (h ^ p[i]) * 0x100000001B3ull;
  return h;
}

namespace {

// Never destroyed (released records may still arrive at exit), and built in
// static storage: nothing here can throw.
std::mutex &quarantine_mu() noexcept {
  alignas(std::mutex) static unsigned char storage[sizeof(std::mutex)];
  static std::mutex *const m = ::new (storage) std::mutex;
  return *m;
}

}  // namespace

// Guard mode keeps released records out of circulation for a while, so a
// double release through a stale copy is reported with where the handoff was
// created. Outside guard mode a record goes straight back to the pool.
[[gnu::noinline]] void quarantine(Slot *s) {
  constexpr size_t kDepth = 256;
  static Slot *ring[kDepth];
  static size_t next = 0;
  Slot *evicted;
  {
    std::lock_guard<std::mutex> lock(quarantine_mu());
    evicted = ring[next];
    ring[next] = s;
    next = (next + 1) % kDepth;
    s->in_quarantine = true;
    if (evicted) evicted->in_quarantine = false;
  }
  if (evicted) {
    context_unref(evicted->guard_ctx.load(std::memory_order_relaxed));
    evicted->guard_ctx.store(nullptr, std::memory_order_relaxed);
    slots().push(evicted);
  }
}

// A release or event release that was refused. Reported with the record's
// context and origin while the record is provably the same handoff: still
// live with this generation, or released once and held in quarantine.
void report_stale(Slot *s, uint32_t gen, hurray_rule rule, const char *what) {
  hurray_context *ctx = nullptr;
  const void *where = nullptr;
  {
    std::lock_guard<std::mutex> lock(quarantine_mu());
    const uint64_t st = s->state.load(std::memory_order_acquire);
    const bool same_live = (st & kLive) && gen_of(st) == gen;
    const bool same_released = s->in_quarantine && !(st & kLive) && gen_of(st) == gen + 1;
    if (same_live || same_released) {
      ctx = s->guard_ctx.load(std::memory_order_relaxed);
      where = s->created_at.load(std::memory_order_relaxed);
      if (ctx) context_ref(ctx);
    }
  }
  if (ctx) {
    guard_report(ctx, rule, where, "%s", what);
    context_unref(ctx);
  } else if (default_context()->guard.load(std::memory_order_relaxed)) {
    guard_report(default_context(), rule, nullptr, "%s", what);
  }
}

// Guard mode's part of publishing a record: track it, and checksum memory
// that must not change while handed off.
// (Origin by value: passing its address would put the caller's copy on the
// stack, on the fast path too.)
[[gnu::noinline]] void publish_guarded(Slot *s, Origin o) {
  s->byte_size = o.handle.byte_size;
  s->checksummed = false;
  context_ref(o.ctx);
  s->guard_ctx.store(o.ctx, std::memory_order_relaxed);
  s->created_at.store(o.caller, std::memory_order_relaxed);
  s->node.created_at = o.caller;
  const bool host = o.data && o.handle.byte_size &&
                    o.handle.device_tag == HURRAY_DEVICE_CPU &&
                    !(o.flags & HURRAY_HANDOFF_OPAQUE_DATA);
  if (host && (o.flags & (HURRAY_HANDOFF_READ_ONLY | HURRAY_HANDOFF_QPARAM))) {
    s->checksummed = true;
    s->checksum = checksum(o.data, o.handle.byte_size);
  }
  guard_track(o.ctx, &s->node);
}

}  // namespace hurray::detail::handoff
