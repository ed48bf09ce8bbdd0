// Buffers: the reference-counted producer buffer (hurray_buffer) from wrap
// or allocation to its last reference, reading and checking the buffer and
// allocation descriptors, and the public buffer API (hurray_buffer_wrap,
// _alloc, _unref, _data, _get_handle, _fd, _copy_from_host, _copy_to_host).
// Exporting a buffer as a handoff is in export.cpp; the records it lives in
// are in records.cpp and internal.h.
#include "internal.h"

using namespace hurray::detail;
using namespace hurray::detail::handoff;

namespace hurray::detail::handoff {
namespace {

bool host_readable(const hurray_buffer *b) {
  return b->data && b->handle.byte_size && b->handle.device_tag == HURRAY_DEVICE_CPU &&
         !(b->flags & HURRAY_HANDOFF_OPAQUE_DATA);
}

void buffer_destroy(hurray_buffer *b) {
  if (b->qparam_guarded && checksum(b->data, b->handle.byte_size) != b->qparam_sum)
    guard_report(b->ctx, HURRAY_RULE_ZC_QPARAM, b->created_at,
                 "BP-ZC-QPARAM: a quantization-parameter buffer was modified after it was "
                 "described (found when it was freed)");
  if (b->backend_owned)
    dispatch::free(b->backend, &b->alloc);
  else if (b->free_fn)
    b->free_fn(b->free_user, b->data);
  context_unref(b->ctx);
  b->ctx = nullptr;
  b->free_fn = nullptr;
  b->backend_owned = false;
  hurray_buffer *const parent = b->parent;  // a view: the memory is its parent's
  b->parent = nullptr;
  b->view_offset = 0;
  b->refs.store(0, std::memory_order_relaxed);  // a stray unref then destroys nothing
  buffer_push(b);
  if (parent) buffer_unref(parent);
}

}  // namespace

void buffer_unref(hurray_buffer *b) {
  // The last reference needs no read-modify-write: while this thread holds
  // the only one, no other thread can take another (that needs a reference
  // to copy), so a count of 1 cannot change under us. The acquire load
  // orders the other owners' earlier releases before the destruction.
  if (b->refs.load(std::memory_order_acquire) == 1 ||
      b->refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
    buffer_destroy(b);
}

namespace {

hurray_status new_buffer(hurray_context *ctx, hurray_buffer **out, hurray_error *err) {
  hurray_buffer *b = buffer_pop();
  if (!b) return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "out of buffer records");
  b->refs.store(1, std::memory_order_relaxed);
  b->ctx = resolve(ctx);
  context_ref(b->ctx);
  b->free_fn = nullptr;
  b->free_user = nullptr;
  b->backend_owned = false;
  b->memory_serial = 0;
  b->qparam_guarded = false;
  b->flags = 0;
  *out = b;
  return HURRAY_OK;
}

}  // namespace

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
  const hurray_buffer_desc *r = *d = read_desc(in, copy, err);
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
  if (const hurray_status st = hurray_handle_validate(&r->handle, policy, err)) return st;
  return check_desc_address(*r, err);
}

hurray_status wrap_buffer(hurray_context *ctx, const hurray_buffer_desc *in,
                          const void *caller, hurray_buffer **out, hurray_error *err) {
  if (!in || !out) return null_argument(err, "hurray_buffer_wrap", in ? "out" : "desc");
  hurray_buffer_desc copy;
  const hurray_buffer_desc *dp;
  if (const hurray_status st = read_buffer_desc(in, &copy, &dp, &resolve(ctx)->policy, err))
    return st;
  const hurray_buffer_desc &d = *dp;
  hurray_buffer *b;
  if (const hurray_status st = new_buffer(ctx, &b, err)) return st;
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

namespace {

// Allocate through the backend for exactly h's device and class
// (BP-PUT-DEVICE: that device and class, or an error) into a new record;
// h is valid.
hurray_status alloc_buffer(hurray_context *c, const hurray_buffer_handle &h, int32_t ordinal,
                           uint32_t flags, const void *caller, hurray_buffer **out,
                           hurray_error *err) {
  Backend be;
  if (const hurray_status st = backend_device(h.device_tag, ordinal, &be, err)) return st;
  hurray_buffer *b;
  if (const hurray_status st = new_buffer(c, &b, err)) return st;
  if (const hurray_status st = dispatch::alloc(be, ordinal, h.memory_class, h.byte_size,
                                               h.alignment, flags, &b->alloc, err)) {
    buffer_unref(b);  // nothing to free yet: not backend_owned, no free_fn
    return st;
  }
  b->handle = h;
  b->data = b->alloc.data;
  b->ordinal = ordinal;
  b->flags = b->alloc.flags & HURRAY_HANDOFF_OPAQUE_DATA;
  b->backend_owned = true;
  static std::atomic<uint64_t> serials{0};
  b->memory_serial = serials.fetch_add(1, std::memory_order_relaxed) + 1;
  b->backend = be;
  b->created_at = caller;
  *out = b;
  return HURRAY_OK;
}

// hurray_buffer_alloc's checked path: the reference for every answer.
[[gnu::noinline]] hurray_status alloc_checked(hurray_context *ctx, const hurray_alloc_desc *in,
                                              const void *caller, hurray_buffer **out,
                                              hurray_error *err) {
  if (!in || !out) return null_argument(err, "hurray_buffer_alloc", in ? "out" : "desc");
  hurray_alloc_desc copy;
  const hurray_alloc_desc *dp = read_desc(in, &copy, err);
  if (!dp) return HURRAY_E_INVALID_ARGUMENT;
  hurray_alloc_desc d = *dp;
  if (d.flags & ~HURRAY_ALLOC_SHAREABLE)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_alloc_desc.flags: unknown bits 0x%X", d.flags & ~HURRAY_ALLOC_SHAREABLE);
  if (d.alignment == 0) d.alignment = HURRAY_MIN_ALIGNMENT;
  const hurray_buffer_handle h = {d.byte_size, d.alignment, d.device_tag,
                                  HURRAY_SYNC_PRODUCER_SYNCED, d.memory_class, 0};
  hurray_context *c = resolve(ctx);
  if (const hurray_status st = hurray_handle_validate(&h, &c->policy, err)) return st;
  if (d.alignment < HURRAY_MIN_ALIGNMENT)  // empty buffers too: we allocate real memory
    return fail(err, HURRAY_E_ALIGNMENT, HURRAY_RULE_ALIGN_MIN,
                "BP-ALIGN-MIN: allocations are aligned to at least 64, asked %u", d.alignment);
  return alloc_buffer(c, h, d.device_ordinal, d.flags, caller, out, err);
}

}  // namespace
}  // namespace hurray::detail::handoff

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

HURRAY_API void hurray_buffer_unref(hurray_buffer *buffer) {
  if (buffer) buffer_unref(buffer);
}

HURRAY_API void *hurray_buffer_data(const hurray_buffer *buffer) {
  return buffer ? buffer->data : nullptr;
}

HURRAY_API hurray_status hurray_buffer_get_handle(const hurray_buffer *buffer,
                                                  hurray_buffer_handle *out, hurray_error *err) {
  if (!buffer || !out)
    return null_argument(err, "hurray_buffer_get_handle", buffer ? "out" : "buffer");
  *out = buffer->handle;
  return HURRAY_OK;
}

HURRAY_API int hurray_buffer_fd(const hurray_buffer *buffer) {
  if (!buffer || !buffer->backend_owned || buffer->handle.device_tag != HURRAY_DEVICE_CPU) return -1;
  return static_cast<int>(reinterpret_cast<intptr_t>(buffer->alloc.plugin_data));
}

namespace {

// The allocation to copy through: the buffer's own, or a host view of
// wrapped host memory; a view's offset becomes one in its parent's memory.
hurray_status copy_target(const hurray_buffer *b, uint64_t &offset, uint64_t n,
                          Backend *be, hurray_backend_allocation *view, const char *what,
                          hurray_error *err) {
  if (!b)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE, "%s: buffer is NULL", what);
  if (offset > b->handle.byte_size || n > b->handle.byte_size - offset)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "%s: %llu bytes at offset %llu do not fit in %llu", what,
                static_cast<unsigned long long>(n), static_cast<unsigned long long>(offset),
                static_cast<unsigned long long>(b->handle.byte_size));
  if (b->parent) {  // a view copies through its parent's memory, from where it starts
    offset += b->view_offset;
    b = b->parent;
  }
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

// Both copies between a buffer and host memory.
hurray_status copy_host(const hurray_buffer *buffer, uint64_t offset, void *host, uint64_t n,
                        bool to_host, hurray_error *err) {
  const char *fn = to_host ? "hurray_buffer_copy_to_host" : "hurray_buffer_copy_from_host";
  Backend be;
  hurray_backend_allocation view;
  if (const hurray_status st = copy_target(buffer, offset, n, &be, &view, fn, err)) return st;
  if (n && !host) return null_argument(err, fn, to_host ? "dst" : "src");
  return to_host ? dispatch::copy_to_host(be, &view, offset, host, n, err)
                 : dispatch::copy_from_host(be, &view, offset, host, n, err);
}

}  // namespace

HURRAY_API hurray_status hurray_buffer_copy_from_host(hurray_buffer *buffer, uint64_t offset,
                                                      const void *src, uint64_t n,
                                                      hurray_error *err) {
  return copy_host(buffer, offset, const_cast<void *>(src), n, false, err);
}

HURRAY_API hurray_status hurray_buffer_copy_to_host(const hurray_buffer *buffer, uint64_t offset,
                                                    void *dst, uint64_t n, hurray_error *err) {
  return copy_host(buffer, offset, dst, n, true, err);
}

}  // extern "C"
