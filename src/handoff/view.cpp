// Views (hurray_buffer_view): a range of a buffer as a buffer of its own,
// with its own handle, sharing its parent's memory and lifetime. A view is
// an ordinary hurray_buffer record whose `parent` holds a reference to the
// buffer that owns the memory (never itself a view: a view of a view points
// at the first parent, offsets summed), so the reference counts of
// buffer.cpp keep the memory alive while any view or handoff of one lives
// (BP-REFCOUNT), and its exports, copies, IPC sends and PUTs go through the
// paths every buffer takes. The rules (BP-VIEW-BOUNDS, the alignment a view
// inherits) are in docs/spec/views.md.
#include "internal.h"

using namespace hurray::detail;
using namespace hurray::detail::handoff;

namespace hurray::detail::handoff {
namespace {

// The largest power of two dividing both offset and the parent's alignment
// (a power of two): the alignment a view at `offset` can promise.
uint32_t view_alignment(uint32_t parent_alignment, uint64_t offset) {
  if (offset == 0) return parent_alignment;
  const uint64_t low = offset & (~offset + 1);  // lowest set bit of offset
  return low < parent_alignment ? static_cast<uint32_t>(low) : parent_alignment;
}

hurray_status make_view(hurray_buffer *p, uint64_t offset, uint64_t length, const void *caller,
                        hurray_buffer **out, hurray_error *err) {
  if (!p || !out) return null_argument(err, "hurray_buffer_view", p ? "out" : "parent");
  const uint64_t size = p->handle.byte_size;
  if (offset > size || length > size - offset)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "BP-VIEW-BOUNDS: a view of %llu bytes at offset %llu does not fit in its "
                "parent's %llu bytes",
                static_cast<unsigned long long>(length), static_cast<unsigned long long>(offset),
                static_cast<unsigned long long>(size));
  const uint32_t alignment = view_alignment(p->handle.alignment, offset);
  if (length && alignment < HURRAY_MIN_ALIGNMENT)
    return fail(err, HURRAY_E_ALIGNMENT, HURRAY_RULE_ALIGN_MIN,
                "BP-ALIGN-MIN: a view at offset %llu of a %u-aligned buffer is only %u-aligned; "
                "a non-empty buffer needs 64 (BP-VIEW-BOUNDS: the offset of a non-empty view "
                "is a multiple of 64)",
                static_cast<unsigned long long>(offset), p->handle.alignment, alignment);
  const hurray_buffer_handle h = {length, alignment, p->handle.device_tag,
                                  HURRAY_SYNC_PRODUCER_SYNCED, p->handle.memory_class, 0};
  if (const hurray_status st = hurray_handle_validate(&h, &p->ctx->policy, err)) return st;
  hurray_buffer *const root = p->parent ? p->parent : p;
  const uint64_t at = p->view_offset + offset;  // where the view starts in root's memory
  hurray_buffer *v = buffer_pop();
  if (!v) return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "out of buffer records");
  root->refs.fetch_add(1, std::memory_order_relaxed);  // the view's, dropped when it goes
  v->refs.store(1, std::memory_order_relaxed);
  v->ctx = p->ctx;
  context_ref(v->ctx);
  v->handle = h;
  v->ordinal = root->ordinal;
  const bool opaque = root->flags & HURRAY_HANDOFF_OPAQUE_DATA;
  v->flags = (root->flags & (HURRAY_HANDOFF_OPAQUE_DATA | HURRAY_HANDOFF_QPARAM)) |
             (opaque && at ? HURRAY_HANDOFF_OPAQUE_OFFSET : 0u);
  // an address moves by the offset; an opaque handle stays, the offset beside it
  v->data = opaque || !root->data ? root->data : static_cast<unsigned char *>(root->data) + at;
  v->free_fn = nullptr;
  v->free_user = nullptr;
  v->backend_owned = false;
  v->qparam_guarded = false;  // the parent's checksum covers its memory
  v->created_at = caller;
  v->parent = root;
  v->view_offset = at;
  *out = v;
  return HURRAY_OK;
}

}  // namespace
}  // namespace hurray::detail::handoff

namespace hurray::detail {
// For src/ipc: where a buffer starts in the memory it shares (0 for a buffer
// that is not a view), and the buffer that owns that memory.
uint64_t buffer_view_offset(const hurray_buffer *b) noexcept { return b ? b->view_offset : 0; }
const hurray_buffer *buffer_memory_owner(const hurray_buffer *b) noexcept {
  return b ? handoff::buffer_root(b) : nullptr;
}
}  // namespace hurray::detail

extern "C" {

HURRAY_API hurray_status hurray_buffer_view(hurray_buffer *parent, uint64_t offset,
                                            uint64_t length, hurray_buffer **out,
                                            hurray_error *err) {
  return make_view(parent, offset, length, __builtin_return_address(0), out, err);
}

}  // extern "C"
