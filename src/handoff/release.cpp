// Releasing handoff records: release and event release exactly once
// (BP-REL-ONCE, BP-EVREL-ONCE) through the token in private_data, one
// compare-and-swap deciding which release is the one, refused releases of a
// stale copy, the rarer duties of a release (an EVENT handoff whose event was
// never released, guard mode's checks), the record's return to its pool, and
// hurray_handoff_release, _release_event and _move.
#include "internal.h"

using namespace hurray::detail;
using namespace hurray::detail::handoff;

namespace hurray::detail::handoff {
namespace {

inline void retire(Slot *s) {
  if (s->guard_ctx.load(std::memory_order_relaxed)) [[unlikely]]
    quarantine(s);
  else
    slot_push(s);
}

void call_event_free(Slot *s) {
  if (s->event_free) s->event_free(s->event_user, s->event);
}

// A release that found no live record of its generation: nothing is
// forwarded. Out of line, so the common release stays short.
[[gnu::noinline, gnu::cold]] hurray_status release_refused(hurray_handoff *self, Slot *s,
                                                           uint32_t gen, hurray_error *err) {
  if (!s)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_handoff: private_data is not a libhurray handoff token");
  self->release = nullptr;
  self->release_event = nullptr;
  report_stale(s, gen, HURRAY_RULE_REL_ONCE,
               "BP-REL-ONCE: a handoff was released twice (a released copy of the "
               "struct was released again); the second release was not forwarded");
  return fail(err, HURRAY_E_ALREADY_RELEASED, HURRAY_RULE_REL_ONCE,
              "BP-REL-ONCE: this handoff was already released");
}

// The rarer duties of a release this thread owns: an EVENT handoff whose
// event was never released, and guard mode's checks.
[[gnu::noinline]] void release_extras(Slot *s, uint64_t st) {
  hurray_context *const gctx = s->guard_ctx.load(std::memory_order_relaxed);
  const void *const where = s->created_at.load(std::memory_order_relaxed);
  if (s->sync_mode == HURRAY_SYNC_EVENT && !(st & kEventDone)) {
    if (gctx)
      guard_report(gctx, HURRAY_RULE_EVREL_ONCE, where,
                   "BP-EVREL-ONCE: the buffer was released but its event never was; "
                   "libhurray released the event");
    call_event_free(s);
  }
  if (gctx) {
    guard_untrack(gctx, &s->node);
    if (s->checksummed && checksum(s->data, s->byte_size) != s->checksum) {
      const bool qparam = s->flags & HURRAY_HANDOFF_QPARAM;
      guard_report(gctx, qparam ? HURRAY_RULE_ZC_QPARAM : HURRAY_RULE_ZC_NOMUT, where,
                   qparam ? "BP-ZC-QPARAM: a quantization-parameter buffer changed while "
                            "handed off"
                          : "BP-ZC-NOMUT: a read-only buffer changed while handed off");
    }
  }
}

// Free what a record this thread owns refers to (the shared buffer's
// reference, or the wrapped memory), then put the record back.
[[gnu::always_inline]] inline void free_and_retire(Slot *s) {
  hurray_buffer *const b = s->buf;
  const hurray_free_fn free_fn = s->free_fn;
  s->buf = nullptr;
  s->free_fn = nullptr;
  if (b)
    buffer_unref(b);
  else if (free_fn)
    free_fn(s->free_user, s->data);
  retire(s);
}

// A release with more to do: an EVENT handoff whose event was never
// released, or guard mode. Out of line, so the common release stays short.
[[gnu::noinline]] void release_slow(Slot *s, uint64_t st) {
  release_extras(s, st);
  free_and_retire(s);
}

// Release a libhurray handoff. Returns OK, or E_ALREADY_RELEASED when the
// record is not live with this generation (nothing is forwarded then).
[[gnu::always_inline]] inline hurray_status release_record(hurray_handoff *self,
                                                         hurray_error *err) {
  uint32_t gen;
  Slot *s = from_token(self->private_data, &gen);
  if (!s) [[unlikely]]
    return release_refused(self, nullptr, gen, err);
  // BP-REL-ONCE: one compare-and-swap decides which release is the one.
  uint64_t st = s->state.load(std::memory_order_acquire);
  do {
    if (!(st & kLive) || gen_of(st) != gen) [[unlikely]]
      return release_refused(self, s, gen, err);
  } while (!s->state.compare_exchange_weak(st, static_cast<uint64_t>(gen + 1) << kGenShift,
                                           std::memory_order_acq_rel, std::memory_order_acquire));
  // From here on this thread owns the record.
  self->release = nullptr;
  self->release_event = nullptr;
  if ((s->sync_mode == HURRAY_SYNC_EVENT && !(st & kEventDone)) ||
      s->guard_ctx.load(std::memory_order_relaxed)) [[unlikely]]
    release_slow(s, st);
  else
    free_and_retire(s);  // (guard_ctx is null: retire() finds the same)
  return HURRAY_OK;
}

}  // namespace

void release_trampoline(hurray_handoff *self) { (void)release_record(self, nullptr); }

namespace {

hurray_status release_event_record(hurray_handoff *self, hurray_error *err) {
  uint32_t gen;
  Slot *s = from_token(self->private_data, &gen);
  if (!s)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_handoff: private_data is not a libhurray handoff token");
  uint64_t st = s->state.load(std::memory_order_acquire);
  for (;;) {
    if (!(st & kLive) || gen_of(st) != gen || (st & kEventDone)) {
      self->release_event = nullptr;
      report_stale(s, gen, HURRAY_RULE_EVREL_ONCE,
                   "BP-EVREL-ONCE: an event was released twice; the second release was "
                   "not forwarded");
      return fail(err, HURRAY_E_ALREADY_RELEASED, HURRAY_RULE_EVREL_ONCE,
                  "BP-EVREL-ONCE: this handoff's event was already released");
    }
    if (s->state.compare_exchange_weak(st, st | kEventDone, std::memory_order_acq_rel,
                                       std::memory_order_acquire))
      break;
  }
  self->release_event = nullptr;
  call_event_free(s);
  return HURRAY_OK;
}

}  // namespace

void release_event_trampoline(hurray_handoff *self) { (void)release_event_record(self, nullptr); }

namespace {

bool is_ours(const hurray_handoff *h) {
  return h->release == release_trampoline;
}

}  // namespace
}  // namespace hurray::detail::handoff

extern "C" {

HURRAY_API hurray_status hurray_handoff_release_event(hurray_handoff *h, hurray_error *err) {
  if (!h) return null_argument(err, "hurray_handoff_release_event", "handoff");
  if (is_ours(h)) return release_event_record(h, err);
  if (!h->release_event)
    return fail(err, HURRAY_E_ALREADY_RELEASED, HURRAY_RULE_EVREL_ONCE,
                "BP-EVREL-ONCE: the event is released (release_event is NULL) or there "
                "is none");
  h->release_event(h);
  h->release_event = nullptr;
  return HURRAY_OK;
}

HURRAY_API hurray_status hurray_handoff_release(hurray_handoff *h, hurray_error *err) {
  if (!h) return null_argument(err, "hurray_handoff_release", "handoff");
  if (is_ours(h)) return release_record(h, err);
  if (!h->release) {
    if (default_context()->guard.load(std::memory_order_relaxed))
      guard_report(default_context(), HURRAY_RULE_REL_ONCE, nullptr,
                   "BP-REL-ONCE: hurray_handoff_release on a released handoff (release is "
                   "NULL)");
    return fail(err, HURRAY_E_ALREADY_RELEASED, HURRAY_RULE_REL_ONCE,
                "BP-REL-ONCE: the handoff is already released (release is NULL)");
  }
  h->release(h);  // a foreign producer's callback
  h->release = nullptr;
  h->release_event = nullptr;
  return HURRAY_OK;
}

HURRAY_API hurray_status hurray_handoff_move(hurray_handoff *src, hurray_handoff *dst,
                                             hurray_error *err) {
  if (!src || !dst) return null_argument(err, "hurray_handoff_move", src ? "dst" : "src");
  if (!src->release)
    return fail(err, HURRAY_E_ALREADY_RELEASED, HURRAY_RULE_REL_ONCE,
                "BP-REL-ONCE: cannot move a released handoff");
  if (src == dst) return HURRAY_OK;
  std::memcpy(dst, src, sizeof *dst);
  src->release = nullptr;
  src->release_event = nullptr;
  return HURRAY_OK;
}

}  // extern "C"
