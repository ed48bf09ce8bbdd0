// The handoff layer: reference-counted producer buffers, one handoff record
// per consumer, release and event release exactly once, the consumer-side
// checks, and guard mode.
//
// A handoff made here carries, in private_data, a token (record index and
// generation) instead of a pointer. Records live in a process-lifetime pool
// and are never freed, so a release through a stale copy of the struct reads
// a record that is still mapped, sees that the generation moved on, and is
// refused without reaching the producer (BP-REL-ONCE). One atomic word per
// record (generation | event released | live) makes every transition a
// single compare-and-swap, so releases may race from any thread.
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <mutex>

#include <pthread.h>

#include "../runtime/backends.h"
#include "../core/inline.h"
#include "../runtime/context.h"
#include "pool.h"

using namespace hurray::detail;

struct hurray_buffer {
  std::atomic<uint32_t> pool_next{0};
  uint32_t pool_index = 0;
  std::atomic<int64_t> refs{0};
  hurray_context *ctx = nullptr;
  hurray_buffer_handle handle{};
  void *data = nullptr;
  int32_t ordinal = 0;
  uint32_t flags = 0;  // HURRAY_HANDOFF_OPAQUE_DATA | HURRAY_HANDOFF_QPARAM
  hurray_free_fn free_fn = nullptr;
  void *free_user = nullptr;
  // memory allocated through a backend (else wrapped: free_fn)
  bool backend_owned = false;
  hurray::detail::Backend backend{};
  hurray_backend_allocation alloc{};
  // guard: BP-ZC-QPARAM checksum taken at wrap
  bool qparam_guarded = false;
  uint64_t qparam_sum = 0;
  const void *created_at = nullptr;
};

namespace hurray::detail {
namespace {

constexpr uint64_t kLive = 1, kEventDone = 2;
constexpr int kGenShift = 2;

struct Slot {
  std::atomic<uint32_t> pool_next{0};
  uint32_t pool_index = 0;
  std::atomic<uint64_t> state{0};
  // Where the memory comes from: a shared buffer, or (hurray_handoff_wrap)
  // memory this handoff alone owns, freed with free_fn at release.
  hurray_buffer *buf = nullptr;
  void *data = nullptr;
  uint64_t byte_size = 0;
  hurray_free_fn free_fn = nullptr;
  void *free_user = nullptr;
  uint32_t flags = 0;
  uint8_t sync_mode = 0;
  void (*event_free)(void *, void *) = nullptr;
  void *event_user = nullptr;
  void *event = nullptr;
  // guard mode only (atomics: a refused release on another thread may peek)
  std::atomic<hurray_context *> guard_ctx{nullptr};  // a reference while live or quarantined
  std::atomic<const void *> created_at{nullptr};
  bool in_quarantine = false;            // under quarantine_mu()
  bool checksummed = false;
  uint64_t checksum = 0;
  GuardNode node;
};

// Constant-initialised, never destroyed (trivial destructors): usable from
// any thread at any time, exit included.
constinit Pool<hurray_buffer> g_buffers;
constinit Pool<Slot> g_slots;
Pool<hurray_buffer> &buffers() { return g_buffers; }
Pool<Slot> &slots() { return g_slots; }

// Per-thread stacks of free records in front of the shared pools, so the
// common wrap/release and alloc/free cycles touch no shared cache line but
// the record's and take no locked instruction for it. Plain data in
// initial-exec TLS (no TLS wrapper call); a pthread key flushes them back to
// the pools when their thread exits.
struct ThreadCache {
  // Small: initial-exec TLS comes from the static TLS reserve that a
  // dlopen()ed libhurray (Python ctypes, say) shares with other libraries.
  static constexpr int kSlots = 12, kBuffers = 4;
  Slot *slots[kSlots];
  hurray_buffer *buffers[kBuffers];
  int nslots, nbuffers;
  bool registered;
};
thread_local ThreadCache t_cache __attribute__((tls_model("initial-exec")));

void flush_cache(void *p) {
  auto *c = static_cast<ThreadCache *>(p);
  while (c->nslots) slots().push(c->slots[--c->nslots]);
  while (c->nbuffers) buffers().push(c->buffers[--c->nbuffers]);
}
pthread_key_t g_cache_key;
[[maybe_unused]] const bool g_cache_key_ok = pthread_key_create(&g_cache_key, flush_cache) == 0;

// This thread's cache, registered for the flush at thread exit; nullptr if
// it cannot be (then records go straight back to the pool).
inline ThreadCache *thread_cache() {
  ThreadCache &c = t_cache;
  if (!c.registered) [[unlikely]] {
    if (!g_cache_key_ok || pthread_setspecific(g_cache_key, &c) != 0) return nullptr;
    c.registered = true;
  }
  return &c;
}

Slot *slot_pop() { return t_cache.nslots ? t_cache.slots[--t_cache.nslots] : slots().pop(); }
[[gnu::always_inline]] inline void slot_push(Slot *s) {
  ThreadCache *c = thread_cache();
  if (c && c->nslots < ThreadCache::kSlots)
    c->slots[c->nslots++] = s;
  else
    slots().push(s);
}

hurray_buffer *buffer_pop() {
  return t_cache.nbuffers ? t_cache.buffers[--t_cache.nbuffers] : buffers().pop();
}
void buffer_push(hurray_buffer *b) {
  ThreadCache *c = thread_cache();
  if (c && c->nbuffers < ThreadCache::kBuffers)
    c->buffers[c->nbuffers++] = b;
  else
    buffers().push(b);
}

uint32_t gen_of(uint64_t state) { return static_cast<uint32_t>(state >> kGenShift); }

void *token(const Slot *s, uint64_t state) {
  return reinterpret_cast<void *>(static_cast<uintptr_t>(
      static_cast<uint64_t>(gen_of(state)) << 32 | s->pool_index));
}

[[gnu::always_inline]] inline Slot *from_token(const void *tok, uint32_t *gen) {
  const auto v = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(tok));
  *gen = static_cast<uint32_t>(v >> 32);
  return slots().find(v & 0xFFFFFFFFu);
}

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

bool host_readable(const hurray_buffer *b) {
  return b->data && b->handle.byte_size && b->handle.device_tag == HURRAY_DEVICE_CPU &&
         !(b->flags & HURRAY_HANDOFF_OPAQUE_DATA);
}

// ---- buffers ----

void buffer_destroy(hurray_buffer *b) {
  if (b->qparam_guarded && checksum(b->data, b->handle.byte_size) != b->qparam_sum)
    guard_report(b->ctx, HURRAY_RULE_ZC_QPARAM, b->created_at,
                 "BP-ZC-QPARAM: a quantization-parameter buffer was modified after it was "
                 "described (found when it was freed)");
  if (b->backend_owned)
    b->backend.table->free(b->backend.state, &b->alloc);
  else if (b->free_fn)
    b->free_fn(b->free_user, b->data);
  context_unref(b->ctx);
  b->ctx = nullptr;
  b->free_fn = nullptr;
  b->backend_owned = false;
  b->refs.store(0, std::memory_order_relaxed);  // a stray unref then destroys nothing
  buffer_push(b);
}

void buffer_unref(hurray_buffer *b) {
  // The last reference needs no read-modify-write: while this thread holds
  // the only one, no other thread can take another (that needs a reference
  // to copy), so a count of 1 cannot change under us. The acquire load
  // orders the other owners' earlier releases before the destruction.
  if (b->refs.load(std::memory_order_acquire) == 1 ||
      b->refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
    buffer_destroy(b);
}

hurray_status new_buffer(hurray_context *ctx, hurray_buffer **out, hurray_error *err) {
  hurray_buffer *b = buffer_pop();
  if (!b) return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "out of buffer records");
  b->refs.store(1, std::memory_order_relaxed);
  b->ctx = resolve(ctx);
  context_ref(b->ctx);
  b->free_fn = nullptr;
  b->free_user = nullptr;
  b->backend_owned = false;
  b->qparam_guarded = false;
  b->flags = 0;
  *out = b;
  return HURRAY_OK;
}

// Read a caller's option struct that starts with `uint32_t size`: fields
// beyond what the caller knows read as zero, bytes beyond what we know must
// be zero (libbpf's OPTS_VALID). Returns the struct to read: the caller's own
// when its size is ours (the common case, no copy), else *copy.
template <class T>
const T *read_desc(const T *in, T *copy, const char *what, hurray_error *err) {
  if (in->size == sizeof(T)) return in;
  if (in->size < sizeof(uint32_t)) {
    fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
         "%s.size is %u; start from its _INIT macro", what, in->size);
    return nullptr;
  }
  const auto *bytes = reinterpret_cast<const unsigned char *>(in);
  for (size_t i = sizeof(T); i < in->size; ++i)
    if (bytes[i]) {
      fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
           "%s has non-zero bytes beyond the %zu this library knows", what, sizeof(T));
      return nullptr;
    }
  std::memset(static_cast<void *>(copy), 0, sizeof(T));
  std::memcpy(static_cast<void *>(copy), in, in->size < sizeof(T) ? in->size : sizeof(T));
  return copy;
}

hurray_status check_desc_address(const hurray_buffer_desc &d, hurray_error *err) {
  if (d.flags & HURRAY_HANDOFF_OPAQUE_DATA) return HURRAY_OK;
  return hurray_handle_check_address(&d.handle, d.data, err);
}

// Read and check a buffer descriptor: flags, PRODUCER_SYNCED and, when
// `full`, the handle (in-process rules) and, unless opaque, the address
// (BP-ALIGN-ADDR). *d points at the caller's struct or at *copy.
hurray_status read_buffer_desc(const hurray_buffer_desc *in, hurray_buffer_desc *copy,
                               const hurray_buffer_desc **d, const hurray_policy *policy,
                               hurray_error *err) {
  const hurray_buffer_desc *r = *d = read_desc(in, copy, "hurray_buffer_desc", err);
  if (!r) return HURRAY_E_INVALID_ARGUMENT;
  constexpr uint32_t known = HURRAY_HANDOFF_OPAQUE_DATA | HURRAY_HANDOFF_QPARAM;
  if (r->flags & ~known)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_buffer_desc.flags: unknown bits 0x%X", r->flags & ~known);
  if (r->handle.sync_mode != HURRAY_SYNC_PRODUCER_SYNCED)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_SYNC_PAYLOAD,
                "BP-SYNC-PAYLOAD: a buffer is described PRODUCER_SYNCED; each export "
                "chooses its sync mode and payload");
  if (!policy) return HURRAY_OK;
  HURRAY_RETURN_NOT_OK(hurray_handle_validate(&r->handle, policy, err));
  return check_desc_address(*r, err);
}

hurray_status wrap_buffer(hurray_context *ctx, const hurray_buffer_desc *in,
                          const void *caller, hurray_buffer **out, hurray_error *err) {
  if (!in || !out)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_buffer_wrap: %s is NULL", in ? "out" : "desc");
  hurray_buffer_desc copy;
  const hurray_buffer_desc *dp;
  HURRAY_RETURN_NOT_OK(read_buffer_desc(in, &copy, &dp, &resolve(ctx)->policy, err));
  const hurray_buffer_desc &d = *dp;
  hurray_buffer *b;
  HURRAY_RETURN_NOT_OK(new_buffer(ctx, &b, err));
  b->handle = d.handle;
  b->data = d.data;
  b->ordinal = d.device_ordinal;
  b->flags = d.flags;
  b->free_fn = d.free_fn;
  b->free_user = d.free_user;
  b->created_at = caller;
  if ((d.flags & HURRAY_HANDOFF_QPARAM) && b->ctx->guard.load(std::memory_order_relaxed) &&
      host_readable(b)) {
    b->qparam_guarded = true;
    b->qparam_sum = checksum(b->data, b->handle.byte_size);
  }
  *out = b;
  return HURRAY_OK;
}

// ---- handoff records ----

std::mutex &quarantine_mu() {
  static auto *m = new std::mutex;
  return *m;
}

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

inline void retire(Slot *s) {
  if (s->guard_ctx.load(std::memory_order_relaxed)) [[unlikely]]
    quarantine(s);
  else
    slot_push(s);
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

void release_trampoline(hurray_handoff *self) { (void)release_record(self, nullptr); }

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

void release_event_trampoline(hurray_handoff *self) { (void)release_event_record(self, nullptr); }

constexpr hurray_export_desc kDefaultExport = HURRAY_EXPORT_DESC_INIT;

// BP-SYNC-PAYLOAD, on either side: what is wrong with a payload, or nullptr.
// `release` is the event's release (event_free_fn / release_event).
inline const char *payload_problem(uint32_t mode, bool object, bool release, uint64_t value) {
  switch (mode) {
    case HURRAY_SYNC_PRODUCER_SYNCED:
      return object || release || value ? "PRODUCER_SYNCED carries no event, stream or value"
                                        : nullptr;
    case HURRAY_SYNC_EVENT:
      return object && release ? nullptr : "EVENT needs an event (sync_object) and its release";
    case HURRAY_SYNC_CONSUMER_STREAM:
      return object && !release ? nullptr
                                : "CONSUMER_STREAM needs the declared stream (sync_object) and "
                                  "no event release";
    default:
      return "sync_mode is not defined";
  }
}

// Read and check an export descriptor (NULL: the default) against the handle
// it will carry (sync_mode set from the descriptor): BP-SYNC-VALUE, every
// rule of the handle, and BP-SYNC-PAYLOAD. *d points at the descriptor read.
hurray_status read_export(const hurray_export_desc *in, hurray_buffer_handle *h,
                          hurray_export_desc *copy, const hurray_export_desc **d,
                          const hurray_policy *policy, hurray_error *err) {
  const hurray_export_desc *r = *d =
      in ? read_desc(in, copy, "hurray_export_desc", err) : &kDefaultExport;
  if (!r) return HURRAY_E_INVALID_ARGUMENT;
  if (r->flags & ~HURRAY_HANDOFF_READ_ONLY)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_export_desc.flags: unknown bits 0x%X",
                r->flags & ~HURRAY_HANDOFF_READ_ONLY);
  if (r->sync_mode > 0xFF)
    return fail(err, HURRAY_E_SYNC, HURRAY_RULE_SYNC_VALUE,
                "BP-SYNC-VALUE: sync_mode %u is not defined", r->sync_mode);
  h->sync_mode = static_cast<uint8_t>(r->sync_mode);
  HURRAY_RETURN_NOT_OK(hurray_handle_validate(h, policy, err));
  if (const char *bad = payload_problem(r->sync_mode, r->sync_object, r->event_free_fn,
                                        r->sync_value)) return fail(err, HURRAY_E_SYNC, HURRAY_RULE_SYNC_PAYLOAD, "BP-SYNC-PAYLOAD: %s", bad);
  return HURRAY_OK;
}

// What a new handoff hands out, whichever way its memory is owned.
struct Origin {
  hurray_context *ctx;  // for guard mode
  hurray_buffer_handle handle;  // with the export's sync_mode
  void *data;
  int32_t ordinal;
  uint32_t flags;  // buffer flags | export flags
  const void *caller;
};

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

// Fill a popped record and the consumer's struct. Cannot fail.
[[gnu::always_inline]] inline void publish(Slot *s, const Origin &o, const hurray_export_desc &d,
                                           hurray_handoff *out) {
  // Only what release reads: the event fields for EVENT, the guard fields
  // in guard mode (a record out of the pool has guard_ctx == nullptr).
  s->flags = o.flags;
  s->sync_mode = o.handle.sync_mode;
  s->data = o.data;
  if (d.sync_mode == HURRAY_SYNC_EVENT) {
    s->event_free = d.event_free_fn;
    s->event_user = d.event_user;
    s->event = d.sync_object;
  }
  if (o.ctx->guard.load(std::memory_order_relaxed)) [[unlikely]]
    publish_guarded(s, o);
  const uint64_t st = s->state.load(std::memory_order_relaxed) | kLive;
  s->state.store(st, std::memory_order_release);

  out->version = HURRAY_HANDOFF_VERSION;
  out->flags = o.flags;
  encode16(o.handle, out->handle);
  out->device_ordinal = o.ordinal;
  out->reserved0 = 0;
  out->data = o.data;
  out->sync_object = d.sync_object;
  out->sync_value = d.sync_value;
  out->release_event = d.sync_mode == HURRAY_SYNC_EVENT ? release_event_trampoline : nullptr;
  out->release = release_trampoline;
  out->private_data = token(s, st);
  std::memset(out->reserved, 0, sizeof out->reserved);
}

hurray_status export_buffer(hurray_buffer *b, const hurray_export_desc *in, const void *caller,
                            hurray_handoff *out, hurray_error *err) {
  if (!b || !out)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_buffer_export: %s is NULL", b ? "out" : "buffer");
  hurray_export_desc copy;
  const hurray_export_desc *dp;
  hurray_buffer_handle h = b->handle;
  HURRAY_RETURN_NOT_OK(read_export(in, &h, &copy, &dp, &b->ctx->policy, err));
  const hurray_export_desc &d = *dp;
  hurray_context *ctx = b->ctx;
  if (b->qparam_guarded && ctx->guard.load(std::memory_order_relaxed) &&
      checksum(b->data, b->handle.byte_size) != b->qparam_sum)
    guard_report(ctx, HURRAY_RULE_ZC_QPARAM, b->created_at,
                 "BP-ZC-QPARAM: a quantization-parameter buffer was modified after it was "
                 "described (found at export)");
  Slot *s = slot_pop();
  if (!s) return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "out of handoff records");
  b->refs.fetch_add(1, std::memory_order_relaxed);
  s->buf = b;
  s->free_fn = nullptr;
  publish(s, Origin{ctx, h, b->data, b->ordinal, d.flags | b->flags, caller}, d, out);
  return HURRAY_OK;
}

// hurray_handoff_wrap's common case: a PRODUCER_SYNCED export (what every
// CPU handoff is) of a descriptor of this library's size, outside guard
// mode, whose handle and address pass the quick checks, with a record in
// this thread's cache. It keeps nothing alive across a call, so it compiles
// to straight-line code with no stack frame. False: take the checked path
// (wrap_handoff), which decides and explains everything, EVENT and
// CONSUMER_STREAM exports and guard mode included.
[[gnu::always_inline]] inline bool wrap_fast(hurray_context *ctx, const hurray_buffer_desc *in,
                                             const hurray_export_desc *exp, hurray_handoff *out) {
  if (!in || !out || in->size != sizeof *in) return false;
  uint32_t flags = in->flags;
  if (exp) {
    if (exp->size != sizeof *exp || exp->sync_mode != HURRAY_SYNC_PRODUCER_SYNCED ||
        exp->sync_object || exp->sync_value || exp->event_free_fn ||
        (exp->flags & ~HURRAY_HANDOFF_READ_ONLY))
      return false;
    flags |= exp->flags;
  }
  const hurray_context *const c = resolve(ctx);
  if ((in->flags & ~HURRAY_HANDOFF_OPAQUE_DATA) || in->handle.sync_mode ||
      c->guard.load(std::memory_order_relaxed) || !fast_valid(in->handle, c->policy) ||
      !((flags & HURRAY_HANDOFF_OPAQUE_DATA) || address_ok(in->handle, in->data)))
    return false;
  ThreadCache &tc = t_cache;
  if (!tc.nslots) return false;
  Slot *const s = tc.slots[--tc.nslots];
  // The record: what release reads (no event, no guard fields here).
  s->buf = nullptr;
  s->free_fn = in->free_fn;
  s->free_user = in->free_user;
  s->data = in->data;
  s->flags = flags;
  s->sync_mode = HURRAY_SYNC_PRODUCER_SYNCED;
  const uint64_t st = s->state.load(std::memory_order_relaxed) | kLive;
  s->state.store(st, std::memory_order_release);
  // The consumer's struct.
  out->version = HURRAY_HANDOFF_VERSION;
  out->flags = flags;
  encode16(in->handle, out->handle);  // sync_mode is PRODUCER_SYNCED (0)
  out->device_ordinal = in->device_ordinal;
  out->reserved0 = 0;
  out->data = in->data;
  out->sync_object = nullptr;
  out->sync_value = 0;
  out->release_event = nullptr;
  out->release = release_trampoline;
  out->private_data = token(s, st);
  std::memset(out->reserved, 0, sizeof out->reserved);
  return true;
}

// hurray_handoff_wrap: one record, no shared buffer, no reference count.
[[gnu::noinline]] hurray_status wrap_handoff(hurray_context *ctx, const hurray_buffer_desc *in,
                                             const hurray_export_desc *exp, const void *caller,
                                             hurray_handoff *out, hurray_error *err) {
  if (!in || !out)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_handoff_wrap: %s is NULL", in ? "out" : "buffer");
  hurray_buffer_desc bcopy;
  const hurray_buffer_desc *bp;
  HURRAY_RETURN_NOT_OK(read_buffer_desc(in, &bcopy, &bp, nullptr, err));
  const hurray_buffer_desc &bd = *bp;
  if (bd.flags & HURRAY_HANDOFF_QPARAM) {
    // QPARAM buffers are checked at wrap time too: take the general path
    hurray_buffer *b;
    HURRAY_RETURN_NOT_OK(wrap_buffer(ctx, in, caller, &b, err));
    const hurray_status st = export_buffer(b, exp, caller, out, err);
    if (st != HURRAY_OK) b->free_fn = nullptr;  // not ours to free on failure
    buffer_unref(b);
    return st;
  }
  // The handle is validated once, with the export's sync mode.
  hurray_export_desc ecopy;
  const hurray_export_desc *dp;
  hurray_buffer_handle h = bd.handle;
  HURRAY_RETURN_NOT_OK(read_export(exp, &h, &ecopy, &dp, &resolve(ctx)->policy, err));
  HURRAY_RETURN_NOT_OK(check_desc_address(bd, err));
  Slot *s = slot_pop();
  if (!s) return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "out of handoff records");
  s->buf = nullptr;
  s->free_fn = bd.free_fn;
  s->free_user = bd.free_user;
  publish(s, Origin{resolve(ctx), h, bd.data, bd.device_ordinal, dp->flags | bd.flags, caller},
          *dp, out);
  return HURRAY_OK;
}

// Allocate through the backend for exactly h's device and class
// (BP-PUT-DEVICE: that device and class, or an error) into a new record;
// h is valid.
hurray_status alloc_buffer(hurray_context *c, const hurray_buffer_handle &h, int32_t ordinal,
                           uint32_t flags, const void *caller, hurray_buffer **out,
                           hurray_error *err) {
  Backend be;
  HURRAY_RETURN_NOT_OK(backend_device(h.device_tag, ordinal, &be, err));
  hurray_buffer *b;
  HURRAY_RETURN_NOT_OK(new_buffer(c, &b, err));
  b->alloc = hurray_backend_allocation{};
  if (const hurray_status st = be.table->alloc(be.state, ordinal, h.memory_class, h.byte_size,
                                               h.alignment, flags, &b->alloc, err)) {
    buffer_unref(b);  // nothing to free yet: not backend_owned, no free_fn
    return st;
  }
  b->handle = h;
  b->data = b->alloc.data;
  b->ordinal = ordinal;
  b->flags = b->alloc.flags & HURRAY_HANDOFF_OPAQUE_DATA;
  b->backend_owned = true;
  b->backend = be;
  b->created_at = caller;
  *out = b;
  return HURRAY_OK;
}

// hurray_buffer_alloc's checked path: the reference for every answer.
[[gnu::noinline]] hurray_status alloc_checked(hurray_context *ctx, const hurray_alloc_desc *in,
                                              const void *caller, hurray_buffer **out,
                                              hurray_error *err) {
  if (!in || !out)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_buffer_alloc: %s is NULL", in ? "out" : "desc");
  hurray_alloc_desc copy;
  const hurray_alloc_desc *dp = read_desc(in, &copy, "hurray_alloc_desc", err);
  if (!dp) return HURRAY_E_INVALID_ARGUMENT;
  hurray_alloc_desc d = *dp;
  if (d.flags & ~HURRAY_ALLOC_SHAREABLE)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_alloc_desc.flags: unknown bits 0x%X", d.flags & ~HURRAY_ALLOC_SHAREABLE);
  if (d.alignment == 0) d.alignment = HURRAY_MIN_ALIGNMENT;
  const hurray_buffer_handle h = {d.byte_size, d.alignment, d.device_tag,
                                  HURRAY_SYNC_PRODUCER_SYNCED, d.memory_class, 0};
  hurray_context *c = resolve(ctx);
  HURRAY_RETURN_NOT_OK(hurray_handle_validate(&h, &c->policy, err));
  if (d.alignment < HURRAY_MIN_ALIGNMENT)  // empty buffers too: we allocate real memory
    return fail(err, HURRAY_E_ALIGNMENT, HURRAY_RULE_ALIGN_MIN,
                "BP-ALIGN-MIN: allocations are aligned to at least 64, asked %u", d.alignment);
  return alloc_buffer(c, h, d.device_ordinal, d.flags, caller, out, err);
}

bool is_ours(const hurray_handoff *h) {
  return h->release == release_trampoline;
}

constexpr uint32_t kKnownHandoffFlags =
    HURRAY_HANDOFF_READ_ONLY | HURRAY_HANDOFF_OPAQUE_DATA | HURRAY_HANDOFF_QPARAM;

// hurray_handoff_check's checked path: the reference for every answer.
[[gnu::noinline]] hurray_status check_handoff(const hurray_handoff *h, const hurray_policy *policy,
                                              hurray_error *err) {
  if (!h)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_handoff_check: handoff is NULL");
  if (h->version != HURRAY_HANDOFF_VERSION)
    return fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_NONE,
                "hurray_handoff.version is %u; this library reads version %u", h->version,
                HURRAY_HANDOFF_VERSION);
  if (!h->release)
    return fail(err, HURRAY_E_ALREADY_RELEASED, HURRAY_RULE_REL_ONCE,
                "BP-REL-ONCE: the handoff is released (release is NULL)");
  if (h->reserved0 != 0 || (h->flags & ~kKnownHandoffFlags) ||
      (h->reserved[0] | h->reserved[1] | h->reserved[2] | h->reserved[3]) != 0)
    return fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_NONE,
                "hurray_handoff: unknown flags or non-zero reserved words (a newer producer?)");
  HURRAY_RETURN_NOT_OK(hurray_table_validate(h->handle, sizeof h->handle, policy, err));
  hurray_buffer_handle hd;
  decode16(h->handle, &hd);
  if (const char *bad =
          payload_problem(hd.sync_mode, h->sync_object, h->release_event, h->sync_value))
    return fail(err, HURRAY_E_SYNC, HURRAY_RULE_SYNC_PAYLOAD, "BP-SYNC-PAYLOAD: %s", bad);
  if (!(h->flags & HURRAY_HANDOFF_OPAQUE_DATA))
    HURRAY_RETURN_NOT_OK(hurray_handle_check_address(&hd, h->data, err));
  return HURRAY_OK;
}

}  // namespace
}  // namespace hurray::detail

extern "C" {

HURRAY_API hurray_status hurray_buffer_wrap(hurray_context *ctx, const hurray_buffer_desc *desc,
                                            hurray_buffer **out, hurray_error *err) {
  return wrap_buffer(ctx, desc, __builtin_return_address(0), out, err);
}

HURRAY_API hurray_status hurray_buffer_alloc(hurray_context *ctx, const hurray_alloc_desc *in,
                                             hurray_buffer **out, hurray_error *err) {
  // Fast path: a descriptor of this library's size whose handle passes the
  // quick checks. Anything else, and every error, takes the checked path.
  if (in && out && in->size == sizeof *in && !(in->flags & ~HURRAY_ALLOC_SHAREABLE)) {
    const uint32_t alignment = in->alignment ? in->alignment : HURRAY_MIN_ALIGNMENT;
    const hurray_buffer_handle h = {in->byte_size, alignment, in->device_tag,
                                    HURRAY_SYNC_PRODUCER_SYNCED, in->memory_class, 0};
    hurray_context *const c = resolve(ctx);
    if (alignment >= HURRAY_MIN_ALIGNMENT && fast_valid(h, c->policy))
      return alloc_buffer(c, h, in->device_ordinal, in->flags, __builtin_return_address(0), out,
                          err);
  }
  return alloc_checked(ctx, in, __builtin_return_address(0), out, err);
}

HURRAY_API hurray_status hurray_buffer_export(hurray_buffer *buffer, const hurray_export_desc *desc,
                                              hurray_handoff *out, hurray_error *err) {
  return export_buffer(buffer, desc, __builtin_return_address(0), out, err);
}

HURRAY_API void hurray_buffer_unref(hurray_buffer *buffer) {
  if (buffer) buffer_unref(buffer);
}

HURRAY_API void *hurray_buffer_data(const hurray_buffer *buffer) {
  return buffer ? buffer->data : nullptr;
}

HURRAY_API hurray_status hurray_buffer_get_handle(const hurray_buffer *buffer,
                                                  hurray_buffer_handle *out, hurray_error *err) {
  if (!buffer || !out)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_buffer_get_handle: %s is NULL", buffer ? "out" : "buffer");
  *out = buffer->handle;
  return HURRAY_OK;
}

HURRAY_API int hurray_buffer_fd(const hurray_buffer *buffer) {
  if (!buffer || !buffer->backend_owned || buffer->handle.device_tag != HURRAY_DEVICE_CPU) return -1;
  return static_cast<int>(reinterpret_cast<intptr_t>(buffer->alloc.plugin_data));
}

namespace {

// The allocation to copy through: the buffer's own, or a host view of
// wrapped host memory.
hurray_status copy_target(const hurray_buffer *b, uint64_t offset, uint64_t n,
                          Backend *be, hurray_backend_allocation *view, const char *what,
                          hurray_error *err) {
  if (!b)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE, "%s: buffer is NULL", what);
  if (offset > b->handle.byte_size || n > b->handle.byte_size - offset)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "%s: %llu bytes at offset %llu do not fit in %llu", what,
                static_cast<unsigned long long>(n), static_cast<unsigned long long>(offset),
                static_cast<unsigned long long>(b->handle.byte_size));
  if (b->backend_owned) {
    *be = b->backend;
    *view = b->alloc;
    return HURRAY_OK;
  }
  if (b->handle.device_tag != HURRAY_DEVICE_CPU || (b->flags & HURRAY_HANDOFF_OPAQUE_DATA))
    return fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_NONE,
                "%s: a wrapped %s buffer is copied by its owner, not by libhurray", what,
                hurray_device_tag_name(b->handle.device_tag));
  *be = Backend{cpu_backend(), nullptr};
  *view = hurray_backend_allocation{};
  view->data = view->host = b->data;
  view->byte_size = b->handle.byte_size;
  return HURRAY_OK;
}

}  // namespace

HURRAY_API hurray_status hurray_buffer_copy_from_host(hurray_buffer *buffer, uint64_t offset,
                                                      const void *src, uint64_t n,
                                                      hurray_error *err) {
  Backend be;
  hurray_backend_allocation view;
  HURRAY_RETURN_NOT_OK(
      copy_target(buffer, offset, n, &be, &view, "hurray_buffer_copy_from_host", err));
  if (n && !src)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_buffer_copy_from_host: src is NULL");
  return be.table->copy_from_host(be.state, &view, offset, src, n, err);
}

HURRAY_API hurray_status hurray_buffer_copy_to_host(const hurray_buffer *buffer, uint64_t offset,
                                                    void *dst, uint64_t n, hurray_error *err) {
  Backend be;
  hurray_backend_allocation view;
  HURRAY_RETURN_NOT_OK(
      copy_target(buffer, offset, n, &be, &view, "hurray_buffer_copy_to_host", err));
  if (n && !dst)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_buffer_copy_to_host: dst is NULL");
  return be.table->copy_to_host(be.state, &view, offset, dst, n, err);
}

HURRAY_API hurray_status hurray_handoff_wrap(hurray_context *ctx, const hurray_buffer_desc *buffer,
                                             const hurray_export_desc *exp, hurray_handoff *out,
                                             hurray_error *err) {
  if (wrap_fast(ctx, buffer, exp, out)) return HURRAY_OK;
  return wrap_handoff(ctx, buffer, exp, __builtin_return_address(0), out, err);
}

HURRAY_API hurray_status hurray_handoff_check(const hurray_handoff *h, const hurray_policy *policy,
                                              hurray_error *err) {
  // Fast path: everything in order. Any doubt takes the checked path.
  if (h && h->version == HURRAY_HANDOFF_VERSION && h->release &&
      !(h->flags & ~kKnownHandoffFlags)) {
    hurray_buffer_handle hd;
    decode16(h->handle, &hd);
    const uint64_t reserved = h->reserved0 | h->reserved[0] | h->reserved[1] | h->reserved[2] |
                              h->reserved[3];
    // PRODUCER_SYNCED (every CPU handoff): no payload, so the payload words
    // join the reserved ones in one test.
    const bool ok =
        hd.sync_mode == HURRAY_SYNC_PRODUCER_SYNCED
            ? (reserved | reinterpret_cast<uintptr_t>(h->sync_object) |
               reinterpret_cast<uintptr_t>(h->release_event) | h->sync_value) == 0
            : reserved == 0 &&
                  !payload_problem(hd.sync_mode, h->sync_object, h->release_event, h->sync_value);
    if (ok && fast_valid(hd, resolve(policy)) &&
        ((h->flags & HURRAY_HANDOFF_OPAQUE_DATA) || address_ok(hd, h->data)))
      return HURRAY_OK;
  }
  return check_handoff(h, policy, err);
}

// hurray_handoff_acquire beyond its common case: waits, and every error.
[[gnu::noinline]] static hurray_status acquire_handoff(hurray_handoff *h, void *consumer_stream,
                                                       hurray_error *err) {
  if (!h)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_handoff_acquire: handoff is NULL");
  if (!h->release)
    return fail(err, HURRAY_E_ALREADY_RELEASED, HURRAY_RULE_REL_AFTER,
                "BP-REL-AFTER: the handoff is released (release is NULL)");
  const uint8_t tag = h->handle[12], mode = h->handle[13];
  switch (mode) {
    case HURRAY_SYNC_PRODUCER_SYNCED:
      return HURRAY_OK;
    case HURRAY_SYNC_EVENT: {
      if (!h->release_event) return HURRAY_OK;  // already waited on and released
      Backend b;
      hurray_error why;
      if (backend_device(tag, h->device_ordinal, &b, &why) != HURRAY_OK)
        return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, HURRAY_RULE_SYNC_WAIT,
                    "BP-SYNC-WAIT: cannot wait on the event: %s", why.message);
      // BP-SYNC-WAIT, then BP-EVREL-ONCE
      HURRAY_RETURN_NOT_OK(b.table->event_wait(b.state, h->device_ordinal, h->sync_object,
                                               h->sync_value, consumer_stream, err));
      return hurray_handoff_release_event(h, err);
    }
    case HURRAY_SYNC_CONSUMER_STREAM: {
      if (consumer_stream == h->sync_object) return HURRAY_OK;
      // BP-SYNC-STREAM: another stream first waits for the declared one
      Backend b;
      hurray_error why;
      if (backend_device(tag, h->device_ordinal, &b, &why) != HURRAY_OK)
        return fail(err, HURRAY_E_SYNC, HURRAY_RULE_SYNC_STREAM,
                    "BP-SYNC-STREAM: the buffer was handed off for stream %p; %p cannot wait "
                    "for it: %s",
                    h->sync_object, consumer_stream, why.message);
      void *event = nullptr;
      uint64_t value = 0;
      HURRAY_RETURN_NOT_OK(b.table->event_record(b.state, h->device_ordinal, h->sync_object,
                                                 &event, &value, err));
      const hurray_status st =
          b.table->event_wait(b.state, h->device_ordinal, event, value, consumer_stream, err);
      b.table->event_release(b.state, h->device_ordinal, event);
      return st;
    }
    default:
      return fail(err, HURRAY_E_SYNC, HURRAY_RULE_SYNC_VALUE,
                  "BP-SYNC-VALUE: sync_mode 0x%02X is not defined", mode);
  }
}

HURRAY_API hurray_status hurray_handoff_acquire(hurray_context *ctx, hurray_handoff *h,
                                                void *consumer_stream, hurray_error *err) {
  (void)ctx;  // backends are process-wide
  // PRODUCER_SYNCED: nothing to wait for, the common case.
  if (h && h->release && h->handle[13] == HURRAY_SYNC_PRODUCER_SYNCED) return HURRAY_OK;
  return acquire_handoff(h, consumer_stream, err);
}

HURRAY_API hurray_status hurray_handoff_release_event(hurray_handoff *h, hurray_error *err) {
  if (!h)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_handoff_release_event: handoff is NULL");
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
  if (!h)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_handoff_release: handoff is NULL");
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
  if (!src || !dst)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_handoff_move: %s is NULL", src ? "dst" : "src");
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

// ---- for the IPC layer (src/ipc/channel.cpp, issue 6) ----
namespace hurray::detail {
// The backend and allocation behind a buffer made by hurray_buffer_alloc,
// so that its memory can be exported to another process; false for memory
// the caller wrapped.
bool buffer_allocation(const hurray_buffer *b, Backend *be,
                       hurray_backend_allocation *a) noexcept {
  if (!b || !b->backend_owned) return false;
  *be = b->backend;
  *a = b->alloc;
  return true;
}
}  // namespace hurray::detail
