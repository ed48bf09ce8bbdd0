// What the files of the handoff layer share (internal to libhurray): the two
// kinds of record (hurray_buffer, a reference-counted producer buffer, and
// Slot, one handoff as a consumer holds it), the process-lifetime pools they
// live in with the per-thread caches in front of them, the token a handoff
// carries in private_data, and the functions one file of the folder defines
// and another calls. What the fast paths use is defined here, inline, so
// that it compiles into its caller as it did when the layer was one file.
//
// A handoff made here carries, in private_data, a token (record index and
// generation) instead of a pointer. Records live in a process-lifetime pool
// and are never freed, so a release through a stale copy of the struct reads
// a record that is still mapped, sees that the generation moved on, and is
// refused without reaching the producer (BP-REL-ONCE). One atomic word per
// record (generation | event released | live) makes every transition a
// single compare-and-swap, so releases may race from any thread.
#pragma once

#include <hurray.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>

#include <pthread.h>

#include "../runtime/backends.h"
#include "../runtime/dispatch.h"
#include "../core/inline.h"
#include "../runtime/context.h"
#include "handoff.h"
#include "../core/pool.h"
#include "../core/struct_size.h"

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
  // of backend-owned memory: a number no other allocation of this process
  // ever gets (records are reused, addresses too); 0 for wrapped memory
  uint64_t memory_serial = 0;
  // guard: BP-ZC-QPARAM checksum taken at wrap
  bool qparam_guarded = false;
  uint64_t qparam_sum = 0;
  const void *created_at = nullptr;
  // a view (view.cpp): the buffer whose memory it shows (a reference; never
  // itself a view) and where the view starts in it; nullptr for a buffer
  hurray_buffer *parent = nullptr;
  uint64_t view_offset = 0;
};

namespace hurray::detail::handoff {

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

// ---- record storage (defined in records.cpp) ----

// Constant-initialised, never destroyed (trivial destructors): usable from
// any thread at any time, exit included.
extern constinit Pool<hurray_buffer> g_buffers;
extern constinit Pool<Slot> g_slots;
inline Pool<hurray_buffer> &buffers() { return g_buffers; }
inline Pool<Slot> &slots() { return g_slots; }

// Per-thread stacks of free records in front of the shared pools, so the
// common wrap/release and alloc/free cycles touch no shared cache line but
// the record's and take no locked instruction for it. Plain data in
// initial-exec TLS (no TLS wrapper call: the declaration says constinit); a
// pthread key flushes them back to the pools when their thread exits.
struct ThreadCache {
  // Small: initial-exec TLS comes from the static TLS reserve that a
  // dlopen()ed libhurray (Python ctypes, say) shares with other libraries.
  static constexpr int kSlots = 12, kBuffers = 4;
  // Zero-initialised members: constinit needs a constant initialiser (clang
  // refuses one that leaves them indeterminate; thread_local storage is zero anyway).
  Slot *slots[kSlots] = {};
  hurray_buffer *buffers[kBuffers] = {};
  int nslots = 0, nbuffers = 0;
  bool registered = false;
};
extern constinit thread_local ThreadCache t_cache __attribute__((tls_model("initial-exec")));

extern pthread_key_t g_cache_key;
extern const bool g_cache_key_ok;

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

inline Slot *slot_pop() {
  return t_cache.nslots ? t_cache.slots[--t_cache.nslots] : slots().pop();
}
[[gnu::always_inline]] inline void slot_push(Slot *s) {
  ThreadCache *c = thread_cache();
  if (c && c->nslots < ThreadCache::kSlots)
    c->slots[c->nslots++] = s;
  else
    slots().push(s);
}

inline hurray_buffer *buffer_pop() {
  return t_cache.nbuffers ? t_cache.buffers[--t_cache.nbuffers] : buffers().pop();
}
inline void buffer_push(hurray_buffer *b) {
  ThreadCache *c = thread_cache();
  if (c && c->nbuffers < ThreadCache::kBuffers)
    c->buffers[c->nbuffers++] = b;
  else
    buffers().push(b);
}

// ---- tokens ----

inline uint32_t gen_of(uint64_t state) { return static_cast<uint32_t>(state >> kGenShift); }

inline void *token(const Slot *s, uint64_t state) {
  return reinterpret_cast<void *>(static_cast<uintptr_t>(
      static_cast<uint64_t>(gen_of(state)) << 32 | s->pool_index));
}

[[gnu::always_inline]] inline Slot *from_token(const void *tok, uint32_t *gen) {
  const auto v = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(tok));
  *gen = static_cast<uint32_t>(v >> 32);
  return slots().find(v & 0xFFFFFFFFu);
}

// ---- descriptors and payloads (shared by the producer and consumer sides) ----

// Read a caller's option struct that starts with `uint32_t size`
// (../core/struct_size.h): a size below the first published one is refused;
// fields beyond what the caller knows read as zero, bytes beyond what we
// know must be zero (libbpf's OPTS_VALID). Returns the struct to read: the
// caller's own when its size is ours (the common case, no copy), else *copy.
template <class T>
const T *read_desc(const T *in, T *copy, hurray_error *err) {
  if (in->size == sizeof(T)) return in;
  SizeRefusal small;
  if (below_first_size<T>(nullptr, in->size, &small)) {
    fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE, "%s", small.text);
    return nullptr;
  }
  const auto *bytes = reinterpret_cast<const unsigned char *>(in);
  for (size_t i = sizeof(T); i < in->size; ++i)
    if (bytes[i]) {
      fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
           "%s has non-zero bytes beyond the %zu this library knows", SizeFirst<T>::name,
           sizeof(T));
      return nullptr;
    }
  std::memset(static_cast<void *>(copy), 0, sizeof(T));
  std::memcpy(static_cast<void *>(copy), in, in->size < sizeof(T) ? in->size : sizeof(T));
  return copy;
}

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

// What a new handoff hands out, whichever way its memory is owned.
struct Origin {
  hurray_context *ctx;  // for guard mode
  hurray_buffer_handle handle;  // with the export's sync_mode
  void *data;
  int32_t ordinal;
  uint32_t flags;  // buffer flags | export flags
  const void *caller;
};

// ---- buffers (buffer.cpp) ----

void buffer_unref(hurray_buffer *b);
// A buffer's own memory: a view's parent, else the buffer (view.cpp).
inline const hurray_buffer *buffer_root(const hurray_buffer *b) { return b->parent ? b->parent : b; }
// Read and check a buffer descriptor (what is checked: see buffer.cpp).
hurray_status read_buffer_desc(const hurray_buffer_desc *in, hurray_buffer_desc *copy,
                               const hurray_buffer_desc **d, const hurray_policy *policy,
                               hurray_error *err);
hurray_status check_desc_address(const hurray_buffer_desc &d, hurray_error *err);
hurray_status wrap_buffer(hurray_context *ctx, const hurray_buffer_desc *in,
                          const void *caller, hurray_buffer **out, hurray_error *err);

// ---- handoff records: release (release.cpp) ----

// The consumer's release and release_event of a libhurray handoff; their
// address tells a libhurray handoff from a foreign one.
void release_trampoline(hurray_handoff *self);
void release_event_trampoline(hurray_handoff *self);

// ---- deferred releases (release_after.cpp) ----

// An event handed over with a deferred release: free(user, object) once the
// release has run (hurray_handoff_release_after_event). free nullptr: none.
struct EventOwner {
  void (*free)(void *user, void *event) = nullptr;
  void *user = nullptr;
  void *object = nullptr;
};
// hurray_handoff_release_after with the checks after h != NULL: on success h
// is moved in and, once (event, event_value) or the work on stream has
// completed, released, then owner's event freed; on error neither is taken
// and owner.free is not called. `where`: the caller's return address (guard).
hurray_status release_after(hurray_context *ctx, hurray_handoff *h, void *stream, void *event,
                            uint64_t event_value, EventOwner owner, const void *where,
                            hurray_error *err) noexcept;

// ---- guard mode (guard.cpp) ----

// Guard-mode checksum of host memory (BP-ZC-NOMUT, BP-ZC-QPARAM).
uint64_t checksum(const void *data, uint64_t n);
// Guard mode's part of publishing a record: track it, and checksum memory
// that must not change while handed off.
// (Origin by value: passing its address would put the caller's copy on the
// stack, on the fast path too.)
[[gnu::noinline]] void publish_guarded(Slot *s, Origin o);
// Keep a released guard-mode record out of circulation for a while.
[[gnu::noinline]] void quarantine(Slot *s);
// Report a refused release or event release (with the record's context and
// origin while the record is provably the same handoff).
void report_stale(Slot *s, uint32_t gen, hurray_rule rule, const char *what);

}  // namespace hurray::detail::handoff
