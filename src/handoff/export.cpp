// Making handoffs (the producer side): reading and checking an export
// descriptor against the handle it will carry, publishing a record and
// filling the consumer's struct, hurray_buffer_export (one more handoff of a
// shared buffer) and hurray_handoff_wrap (one record that alone owns its
// memory), with wrap's inline fast path for the common CPU case.
#include "internal.h"

using namespace hurray::detail;
using namespace hurray::detail::handoff;

namespace hurray::detail::handoff {
namespace {

constexpr hurray_export_desc kDefaultExport = HURRAY_EXPORT_DESC_INIT;

// Read and check an export descriptor (NULL: the default) against the handle
// it will carry (sync_mode set from the descriptor): BP-SYNC-VALUE, every
// rule of the handle, and BP-SYNC-PAYLOAD. *d points at the descriptor read.
hurray_status read_export(const hurray_export_desc *in, hurray_buffer_handle *h,
                          hurray_export_desc *copy, const hurray_export_desc **d,
                          const hurray_policy *policy, hurray_error *err) {
  const hurray_export_desc *r = *d =
      in ? read_desc(in, copy, err) : &kDefaultExport;
  if (!r) return HURRAY_E_INVALID_ARGUMENT;
  if (r->flags & ~HURRAY_HANDOFF_READ_ONLY)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_export_desc.flags: unknown bits 0x%X",
                r->flags & ~HURRAY_HANDOFF_READ_ONLY);
  if (r->sync_mode > 0xFF)
    return fail(err, HURRAY_E_SYNC, HURRAY_RULE_SYNC_VALUE,
                "BP-SYNC-VALUE: sync_mode %u is not defined", r->sync_mode);
  h->sync_mode = static_cast<uint8_t>(r->sync_mode);
  if (const hurray_status st = hurray_handle_validate(h, policy, err)) return st;
  if (const char *bad = payload_problem(r->sync_mode, r->sync_object, r->event_free_fn,
                                        r->sync_value)) return fail(err, HURRAY_E_SYNC, HURRAY_RULE_SYNC_PAYLOAD, "BP-SYNC-PAYLOAD: %s", bad);
  return HURRAY_OK;
}

// read_export's common case (what every DLPack export asks): a PRODUCER_SYNCED
// descriptor of this library's size, or none, whose handle passes the quick
// checks under the context's policy. The buffer's handle was validated when
// the buffer was made, but the policy may have changed since, so the quick
// check runs each time; any doubt (false) takes read_export, which decides
// and explains everything.
[[gnu::always_inline]] inline bool export_fast(const hurray_export_desc *in,
                                               hurray_buffer_handle *h, const hurray_context *ctx,
                                               const hurray_export_desc **d) {
  if (in && (in->size != sizeof *in || in->sync_mode != HURRAY_SYNC_PRODUCER_SYNCED ||
             in->sync_object || in->sync_value || in->event_free_fn ||
             (in->flags & ~HURRAY_HANDOFF_READ_ONLY)))
    return false;
  h->sync_mode = HURRAY_SYNC_PRODUCER_SYNCED;
  if (!fast_valid(*h, ctx->policy)) return false;
  *d = in ? in : &kDefaultExport;
  return true;
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
  if (!b || !out) return null_argument(err, "hurray_buffer_export", b ? "out" : "buffer");
  hurray_export_desc copy;
  const hurray_export_desc *dp;
  hurray_buffer_handle h = b->handle;
  hurray_context *ctx = b->ctx;
  if (!export_fast(in, &h, ctx, &dp))
    if (const hurray_status st = read_export(in, &h, &copy, &dp, &ctx->policy, err)) return st;
  const hurray_export_desc &d = *dp;
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
  if (b->flags & HURRAY_HANDOFF_OPAQUE_OFFSET) out->reserved[0] = b->view_offset;  // view.cpp
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
  if (!in || !out) return null_argument(err, "hurray_handoff_wrap", in ? "out" : "buffer");
  hurray_buffer_desc bcopy;
  const hurray_buffer_desc *bp;
  if (const hurray_status st = read_buffer_desc(in, &bcopy, &bp, nullptr, err)) return st;
  const hurray_buffer_desc &bd = *bp;
  if (bd.flags & HURRAY_HANDOFF_QPARAM) {
    // QPARAM buffers are checked at wrap time too: take the general path
    hurray_buffer *b;
    if (const hurray_status st = wrap_buffer(ctx, in, caller, &b, err)) return st;
    const hurray_status st = export_buffer(b, exp, caller, out, err);
    if (st != HURRAY_OK) b->free_fn = nullptr;  // not ours to free on failure
    buffer_unref(b);
    return st;
  }
  // The handle is validated once, with the export's sync mode.
  hurray_export_desc ecopy;
  const hurray_export_desc *dp;
  hurray_buffer_handle h = bd.handle;
  if (const hurray_status st = read_export(exp, &h, &ecopy, &dp, &resolve(ctx)->policy, err))
    return st;
  if (const hurray_status st = check_desc_address(bd, err)) return st;
  Slot *s = slot_pop();
  if (!s) return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "out of handoff records");
  s->buf = nullptr;
  s->free_fn = bd.free_fn;
  s->free_user = bd.free_user;
  publish(s, Origin{resolve(ctx), h, bd.data, bd.device_ordinal, dp->flags | bd.flags, caller},
          *dp, out);
  return HURRAY_OK;
}

}  // namespace
}  // namespace hurray::detail::handoff

extern "C" {

HURRAY_API hurray_status hurray_buffer_export(hurray_buffer *buffer, const hurray_export_desc *desc,
                                              hurray_handoff *out, hurray_error *err) {
  return export_buffer(buffer, desc, __builtin_return_address(0), out, err);
}

HURRAY_API hurray_status hurray_handoff_wrap(hurray_context *ctx, const hurray_buffer_desc *buffer,
                                             const hurray_export_desc *exp, hurray_handoff *out,
                                             hurray_error *err) {
  if (wrap_fast(ctx, buffer, exp, out)) return HURRAY_OK;
  return wrap_handoff(ctx, buffer, exp, __builtin_return_address(0), out, err);
}

}  // extern "C"
