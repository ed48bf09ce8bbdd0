// The DLPack bridge (hurray_dlpack.h): a handoff as a DLPack tensor and back,
// with the device mapping of TABLES.md section 6.
//
// Export: one block (blocks.h: malloc'd, or the thread's spare) holds the
// managed tensor, the handoff moved into it, and a copy of shape and strides;
// manager_ctx points at the block. The deleter releases the handoff
// (libhurray's release is exactly-once and thread-safe), then frees the block.
//
// Import: no allocation of our own; hurray_handoff_wrap() makes a handoff
// whose free function calls the tensor's deleter, so the handoff's
// exactly-once release is the deleter's exactly-once call.
#include <hurray_dlpack.h>

#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

#include "../core/internal.h"
#include "../core/struct_size.h"
#include "blocks.h"

using namespace hurray::detail;

namespace {

const char *dl_type_name(int32_t t) {
  switch (t) {
    case HURRAY_DL_CPU: return "kDLCPU";
    case HURRAY_DL_CUDA: return "kDLCUDA";
    case HURRAY_DL_CUDA_HOST: return "kDLCUDAHost";
    case HURRAY_DL_OPENCL: return "kDLOpenCL";
    case HURRAY_DL_VULKAN: return "kDLVulkan";
    case HURRAY_DL_METAL: return "kDLMetal";
    case HURRAY_DL_VPI: return "kDLVPI";
    case HURRAY_DL_ROCM: return "kDLROCM";
    case HURRAY_DL_ROCM_HOST: return "kDLROCMHost";
    case HURRAY_DL_EXT_DEV: return "kDLExtDev";
    case HURRAY_DL_CUDA_MANAGED: return "kDLCUDAManaged";
    case HURRAY_DL_ONEAPI: return "kDLOneAPI";
    case HURRAY_DL_WEBGPU: return "kDLWebGPU";
    case HURRAY_DL_HEXAGON: return "kDLHexagon";
    case HURRAY_DL_MAIA: return "kDLMAIA";
    default: return "unknown";
  }
}

// The device mapping of TABLES.md section 6, both ways: a DLPack device
// type and the device tag and memory class it stands for. Towards DLPack, a
// pair without a row of its own takes its tag's STANDARD row (CUDA PEER
// memory is kDLCUDA; ROCm UNIFIED memory is kDLROCM).
struct DlDevice {
  int32_t dl_type;
  uint8_t tag;
  uint8_t memory_class = HURRAY_MEMORY_STANDARD;
};
constexpr DlDevice kDlDevices[] = {
    {HURRAY_DL_CPU, HURRAY_DEVICE_CPU},
    {HURRAY_DL_CUDA, HURRAY_DEVICE_CUDA},
    {HURRAY_DL_CUDA_HOST, HURRAY_DEVICE_CUDA, HURRAY_MEMORY_HOST_PINNED},
    {HURRAY_DL_CUDA_MANAGED, HURRAY_DEVICE_CUDA, HURRAY_MEMORY_UNIFIED},
    {HURRAY_DL_ROCM, HURRAY_DEVICE_ROCM},
    {HURRAY_DL_ROCM_HOST, HURRAY_DEVICE_ROCM, HURRAY_MEMORY_HOST_PINNED},
    {HURRAY_DL_METAL, HURRAY_DEVICE_METAL},
    {HURRAY_DL_VULKAN, HURRAY_DEVICE_VULKAN},
    {HURRAY_DL_WEBGPU, HURRAY_DEVICE_WEBGPU},
    {HURRAY_DL_HEXAGON, HURRAY_DEVICE_HEXAGON},
    {HURRAY_DL_ONEAPI, HURRAY_DEVICE_LEVEL_ZERO},
    {HURRAY_DL_OPENCL, HURRAY_DEVICE_OPENCL},
};

// DLPack device types whose `data` is an opaque handle, not an address.
bool opaque_dl_type(int32_t t) {
  return t == HURRAY_DL_OPENCL || t == HURRAY_DL_VULKAN || t == HURRAY_DL_METAL ||
         t == HURRAY_DL_WEBGPU;
}

// What a tensor's layout spans, in elements relative to element 0:
// [lo, hi], lo <= 0 <= hi; bytes = (hi - lo + 1) * itemsize, 0 when empty.
struct Layout {
  uint64_t itemsize = 0;
  int64_t lo = 0, hi = 0;
  bool empty = false;
  uint64_t bytes = 0;
};

// padded: the tensor's flags say IS_SUBBYTE_TYPE_PADDED (DLPack 1.1): an
// element narrower than a byte occupies one byte per lane.
[[gnu::always_inline]] inline hurray_status compute_layout(const char *who, hurray_dl_data_type dtype, int32_t ndim,
                             const int64_t *shape, const int64_t *strides, Layout *out,
                             hurray_error *err, bool padded = false) {
  if (dtype.bits == 0 || dtype.lanes == 0)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "%s: DLPack dtype {code %u, bits %u, lanes %u} has no size", who,
                unsigned{dtype.code}, unsigned{dtype.bits}, unsigned{dtype.lanes});
  uint64_t bits = uint64_t{dtype.bits} * dtype.lanes;
  if (padded && dtype.bits < 8) bits = uint64_t{8} * dtype.lanes;
  if (bits % 8)
    return fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_NONE,
                "%s: DLPack dtype of %" PRIu64 " bits is not a whole number of bytes "
                "(packed sub-byte types are not supported; padded ones are)",
                who, bits);
  // Before shape[] or strides[] is read: a hostile ndim must not make us
  // read past the arrays the producer really has.
  if (ndim < 0 || ndim > HURRAY_DLPACK_MAX_NDIM)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "%s: DLPack ndim is %d (0 to HURRAY_DLPACK_MAX_NDIM = %d)", who, ndim,
                HURRAY_DLPACK_MAX_NDIM);
  if (ndim > 0 && !shape)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "%s: DLPack shape is NULL with ndim %d", who, ndim);
  Layout l;
  l.itemsize = bits / 8;
  for (int32_t k = 0; k < ndim; ++k) {
    if (shape[k] < 0)
      return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                  "%s: DLPack shape[%d] is %" PRId64, who, k, shape[k]);
    if (shape[k] == 0) l.empty = true;
  }
  if (!l.empty) {
    int64_t row = 1;  // compact row-major stride of dimension k
    for (int32_t k = ndim - 1; k >= 0; --k) {
      const int64_t s = strides ? strides[k] : row;
      int64_t ext;
      if (__builtin_mul_overflow(shape[k] - 1, s, &ext) ||
          (ext > 0 && __builtin_add_overflow(l.hi, ext, &l.hi)) ||
          (ext < 0 && __builtin_add_overflow(l.lo, ext, &l.lo)) ||
          (!strides && __builtin_mul_overflow(row, shape[k], &row)))
        return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                    "%s: the DLPack layout overflows 64 bits (dimension %d)", who, k);
    }
    int64_t elems;
    if (__builtin_sub_overflow(l.hi, l.lo, &elems) ||
        __builtin_add_overflow(elems, int64_t{1}, &elems) ||
        __builtin_mul_overflow(static_cast<uint64_t>(elems), l.itemsize, &l.bytes))
      return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                  "%s: the DLPack layout overflows 64 bits", who);
  }
  *out = l;
  return HURRAY_OK;
}

// ---- export ----

template <class M>
struct Block {
  M tensor;
  hurray_handoff handoff;
  size_t bytes;  // what block_alloc was asked for (the deleter gives it back)
  // followed by ndim shape entries, then ndim stride entries
  int64_t *dims() { return reinterpret_cast<int64_t *>(this + 1); }
};
static_assert(alignof(Block<hurray_dl_managed_tensor>) >= alignof(int64_t));
// A tensor of up to 7 dimensions fits a small block, versioned or legacy.
static_assert(sizeof(Block<hurray_dl_managed_tensor_versioned>) + 14 * sizeof(int64_t) <=
              hurray::detail::dlpack::kSmallBlock);

template <class M>
void block_deleter(M *self) {
  if (!self) return;
  auto *b = static_cast<Block<M> *>(self->manager_ctx);
  // BP-REL-ONCE / BP-REL-THREAD: libhurray's release is exactly-once and
  // safe on any thread; a foreign handoff's release is called once here.
  hurray_handoff_release(&b->handoff, nullptr);
  const size_t bytes = b->bytes;
  b->~Block<M>();
  hurray::detail::dlpack::block_free(b, bytes);
}

template <class M>
hurray_status export_tensor(const char *who, bool versioned, hurray_handoff *h,
                            hurray_dl_data_type dtype, int32_t ndim, const int64_t *shape,
                            const int64_t *strides, uint64_t byte_offset, M **out,
                            hurray_error *err) {
  if (!h || !out) return null_argument(err, who, h ? "out" : "handoff");
  hurray_buffer_handle hd;
  if (const hurray_status st = hurray_handle_decode(h->handle, sizeof h->handle, &hd, err))
    return st;
  int32_t dl_type = HURRAY_DL_CPU;
  if (hd.device_tag != HURRAY_DEVICE_CPU || hd.memory_class != HURRAY_MEMORY_STANDARD)
    if (const hurray_status st =
            hurray_dlpack_device_to_dl(hd.device_tag, hd.memory_class, &dl_type, err))
      return st;
  if (hd.sync_mode == HURRAY_SYNC_EVENT && h->release_event && h->release)
    return fail(err, HURRAY_E_SYNC, HURRAY_RULE_SYNC_WAIT,
                "BP-SYNC-WAIT: DLPack carries no event; acquire the EVENT handoff "
                "(hurray_handoff_acquire) before %s",
                who);
  if (hd.sync_mode == HURRAY_SYNC_EVENT && hd.device_tag != HURRAY_DEVICE_CPU) {
    // Acquired: the event was waited on and released, so the payload check
    // (an event and its release, BP-SYNC-PAYLOAD) applies no more. Check
    // the rest as for a PRODUCER_SYNCED handoff.
    hurray_handoff probe = *h;
    probe.handle[13] = HURRAY_SYNC_PRODUCER_SYNCED;
    probe.sync_object = nullptr;
    probe.sync_value = 0;
    if (const hurray_status st = hurray_handoff_check(&probe, nullptr, err)) return st;
  } else {
    if (const hurray_status st = hurray_handoff_check(h, nullptr, err)) return st;
  }
  const bool read_only = h->flags & (HURRAY_HANDOFF_READ_ONLY | HURRAY_HANDOFF_QPARAM);
  if (!versioned && read_only)
    return fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_ZC_NOMUT,
                "BP-ZC-NOMUT: the handoff is read-only and a legacy DLManagedTensor has no "
                "READ_ONLY flag (its consumer would think it writable); use "
                "hurray_dlpack_export_versioned");
  Layout l;
  if (const hurray_status st = compute_layout(who, dtype, ndim, shape, strides, &l, err)) return st;
  if (!l.empty) {
    // The spanned bytes [byte_offset + lo*itemsize, byte_offset + (hi+1)*itemsize)
    // lie inside [0, byte_size).
    const uint64_t below = (0 - static_cast<uint64_t>(l.lo)) * l.itemsize;  // <= l.bytes: no overflow
    uint64_t above;  // byte_offset + (hi + 1) * itemsize, without overflow
    const bool overflow =
        __builtin_mul_overflow(static_cast<uint64_t>(l.hi) + 1, l.itemsize, &above) ||
        __builtin_add_overflow(above, byte_offset, &above);
    if (below > byte_offset || overflow || above > hd.byte_size)
      return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                  "%s: the layout spans %" PRIu64 " bytes at byte_offset %" PRIu64
                  " (first byte at %s%" PRIu64 "), outside the buffer's %" PRIu64 " bytes",
                  who, l.bytes, byte_offset, below > byte_offset ? "-" : "+",
                  below > byte_offset ? below - byte_offset : byte_offset - below,
                  hd.byte_size);
  }
  const size_t dims = static_cast<size_t>(ndim);
  if (dims > (SIZE_MAX - sizeof(Block<M>)) / (2 * sizeof(int64_t)))
    return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "%s: ndim %d is too large", who,
                ndim);
  const size_t bytes = sizeof(Block<M>) + 2 * dims * sizeof(int64_t);
  void *mem = hurray::detail::dlpack::block_alloc(bytes);
  if (!mem) return out_of_memory(err, who);
  // Default-initialised, not zeroed: every field of the tensor is set below
  // and the handoff is moved in whole (both are plain C structs).
  auto *b = new (mem) Block<M>;
  b->bytes = bytes;
  int64_t *sh = b->dims(), *st = b->dims() + dims;
  uint64_t row = 1;  // wraps only for an empty tensor, whose strides are moot
  for (size_t k = dims; k-- > 0;) {
    sh[k] = shape[k];
    st[k] = strides ? strides[k] : static_cast<int64_t>(row);
    row *= static_cast<uint64_t>(shape[k] ? shape[k] : 1);
  }
  hurray_dl_tensor &t = b->tensor.dl_tensor;
  // Where data is an address, byte_offset is folded into it (as numpy and
  // PyTorch export): consumers that ignore byte_offset (PyTorch 1.x) read
  // the right bytes. An opaque handle keeps its offset beside it.
  const bool opaque_data = (h->flags & HURRAY_HANDOFF_OPAQUE_DATA) || opaque_dl_type(dl_type);
  t.data = opaque_data ? h->data : static_cast<unsigned char *>(h->data) + byte_offset;
  t.device.device_type = dl_type;
  t.device.device_id = hd.device_tag == HURRAY_DEVICE_CPU ? 0 : h->device_ordinal;
  t.ndim = ndim;
  t.dtype = dtype;
  t.shape = dims ? sh : nullptr;
  t.strides = dims ? st : nullptr;
  t.byte_offset = opaque_data ? byte_offset : 0;
  // A view of an opaque-handle buffer starts reserved[0] bytes into the object
  // (HURRAY_HANDOFF_OPAQUE_OFFSET, docs/spec/views.md): byte_offset says so too.
  if (opaque_data && (h->flags & HURRAY_HANDOFF_OPAQUE_OFFSET)) t.byte_offset += h->reserved[0];
  b->tensor.manager_ctx = b;
  b->tensor.deleter = &block_deleter<M>;
  if constexpr (std::is_same_v<M, hurray_dl_managed_tensor_versioned>) {
    b->tensor.version.major = HURRAY_DLPACK_MAJOR_VERSION;
    b->tensor.version.minor = HURRAY_DLPACK_MINOR_VERSION;
    b->tensor.flags = read_only ? HURRAY_DLPACK_FLAG_READ_ONLY : 0;
  }
  // hurray_handoff_move, which cannot fail here: the handoff passed the
  // check (release is set) and the block is not the caller's struct.
  std::memcpy(&b->handoff, h, sizeof *h);
  h->release = nullptr;
  h->release_event = nullptr;
  *out = &b->tensor;
  return HURRAY_OK;
}

// ---- import ----

void free_versioned(void *user, void *) {
  auto *t = static_cast<hurray_dl_managed_tensor_versioned *>(user);
  if (t->deleter) t->deleter(t);
}

void free_legacy(void *user, void *) {
  auto *t = static_cast<hurray_dl_managed_tensor *>(user);
  if (t->deleter) t->deleter(t);
}

hurray_status check_options(const char *who, const hurray_dlpack_import_options *o,
                            hurray_error *err) {
  if (!o) return HURRAY_OK;
  SizeRefusal small;
  if (below_first_size<hurray_dlpack_import_options>(who, o->size, &small))
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE, "%s", small.text);
  if (o->size < sizeof(hurray_dlpack_import_options) || o->flags || o->reserved0)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "%s: options: size %u (want %zu), flags 0x%x and reserved0 %u (want 0); "
                "start from HURRAY_DLPACK_IMPORT_OPTIONS_INIT",
                who, o->size, sizeof(hurray_dlpack_import_options), o->flags, o->reserved0);
  if (o->sync_mode != HURRAY_SYNC_PRODUCER_SYNCED && o->sync_mode != HURRAY_SYNC_CONSUMER_STREAM)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "%s: options: sync_mode %u; a DLPack import is PRODUCER_SYNCED or "
                "CONSUMER_STREAM (DLPack carries no event)",
                who, o->sync_mode);
  if (o->sync_mode == HURRAY_SYNC_CONSUMER_STREAM && !o->stream)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "%s: options: CONSUMER_STREAM without the stream the producer synchronised to",
                who);
  return HURRAY_OK;
}

hurray_status import_tensor(const char *who, hurray_context *ctx, const hurray_dl_tensor &t,
                            bool read_only, hurray_free_fn free_fn, void *user,
                            hurray_handoff *out, hurray_error *err, bool padded = false,
                            const hurray_dlpack_import_options *opts = nullptr) {
  uint8_t tag = 0, mc = 0;
  if (const hurray_status st = check_options(who, opts, err)) return st;
  if (const hurray_status st = hurray_dlpack_device_from_dl(t.device.device_type, &tag, &mc, err))
    return st;
  const bool on_stream = opts && opts->sync_mode == HURRAY_SYNC_CONSUMER_STREAM;
  if (on_stream && tag == HURRAY_DEVICE_CPU)
    return fail(err, HURRAY_E_SYNC, HURRAY_RULE_SYNC_CPU,
                "BP-SYNC-CPU: %s: a CPU tensor is PRODUCER_SYNCED; it has no stream", who);
  Layout l;
  if (const hurray_status st =
          compute_layout(who, t.dtype, t.ndim, t.shape, t.strides, &l, err, padded))
    return st;
  hurray_buffer_desc d = HURRAY_BUFFER_DESC_INIT;
  d.handle.byte_size = l.bytes;
  d.handle.device_tag = tag;
  d.handle.memory_class = mc;
  d.handle.sync_mode = HURRAY_SYNC_PRODUCER_SYNCED;
  d.device_ordinal = tag == HURRAY_DEVICE_CPU ? 0 : t.device.device_id;
  d.free_fn = free_fn;
  d.free_user = user;
  if (!l.empty && !t.data)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "%s: DLPack data is NULL for a tensor of %" PRIu64 " bytes", who, l.bytes);
  if (opaque_dl_type(t.device.device_type)) {
    if (t.byte_offset != 0 || l.lo != 0)
      return fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_ZC_NOCOPY,
                  "BP-ZC-NOCOPY: on %s the DLPack data is an opaque handle; byte_offset %" PRIu64
                  " and negative strides cannot be handed off without a copy",
                  dl_type_name(t.device.device_type), t.byte_offset);
    d.flags = HURRAY_HANDOFF_OPAQUE_DATA;
    d.data = t.data;
    d.handle.alignment = HURRAY_MIN_ALIGNMENT;
  } else {
    // The lowest byte the tensor spans: data + byte_offset + lo * itemsize.
    const uint64_t base = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(t.data));
    const uint64_t below = (0 - static_cast<uint64_t>(l.lo)) * l.itemsize;  // <= l.bytes: no overflow
    uint64_t addr;
    if (__builtin_add_overflow(base, t.byte_offset, &addr) || below > addr)
      return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                  "%s: DLPack data %p + byte_offset %" PRIu64 " wraps around the address space",
                  who, t.data, t.byte_offset);
    addr -= below;
    if (uint64_t end; __builtin_add_overflow(addr, l.bytes, &end))
      return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                  "%s: the DLPack tensor's %" PRIu64 " bytes at 0x%" PRIx64
                  " wrap around the address space",
                  who, l.bytes, addr);
    d.data = reinterpret_cast<void *>(static_cast<uintptr_t>(addr));
    if (l.empty) {
      d.handle.alignment = HURRAY_MIN_ALIGNMENT;  // BP-ALIGN-EMPTY: any address
    } else {
      if (addr == 0)
        return fail(err, HURRAY_E_ALIGNMENT, HURRAY_RULE_ALIGN_ADDR,
                    "BP-ALIGN-ADDR: the first byte of a non-empty DLPack tensor is at "
                    "address 0 (data %p, byte_offset %" PRIu64 ")",
                    t.data, t.byte_offset);
      const uint64_t lowbit = addr & (~addr + 1);
      d.handle.alignment = static_cast<uint32_t>(lowbit < 4096 ? lowbit : 4096);
      if (d.handle.alignment < HURRAY_MIN_ALIGNMENT)
        return fail(err, HURRAY_E_ALIGNMENT, HURRAY_RULE_ALIGN_MIN,
                    "BP-ALIGN-MIN: the DLPack tensor's first byte (0x%" PRIx64
                    ") is only %u-byte aligned; a buffer must be aligned to %u",
                    addr, d.handle.alignment, HURRAY_MIN_ALIGNMENT);
    }
  }
  hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
  e.flags = read_only ? HURRAY_HANDOFF_READ_ONLY : 0;
  if (on_stream) {
    e.sync_mode = HURRAY_SYNC_CONSUMER_STREAM;
    e.sync_object = opts->stream;
  }
  return hurray_handoff_wrap(ctx, &d, &e, out, err);
}

}  // namespace

extern "C" {

HURRAY_API hurray_status hurray_dlpack_device_to_dl(uint8_t device_tag, uint8_t memory_class,
                                                    int32_t *dl_device_type, hurray_error *err) {
  if (!dl_device_type) return null_argument(err, "hurray_dlpack_device_to_dl", "dl_device_type");
  // Every export of CPU memory asks this: a valid pair whatever the rest of
  // the handle, so the probe below would only say yes.
  if (device_tag == HURRAY_DEVICE_CPU && memory_class == HURRAY_MEMORY_STANDARD) {
    *dl_device_type = HURRAY_DL_CPU;
    return HURRAY_OK;
  }
  if (device_tag >= HURRAY_DEVICE_PRIVATE_FIRST && device_tag <= HURRAY_DEVICE_PRIVATE_LAST)
    return fail(err, HURRAY_E_DEVICE_TAG, HURRAY_RULE_DEV_PRIVATE,
                "BP-DEV-PRIVATE: private device tag 0x%02X has no DLPack device type "
                "(TABLES.md section 6: refuse)",
                device_tag);
  // The pair must be valid (reserved and invalid tags, BP-MC-*), whatever the
  // size, alignment and sync mode.
  const hurray_buffer_handle probe = {0, HURRAY_MIN_ALIGNMENT, device_tag,
                                      HURRAY_SYNC_PRODUCER_SYNCED, memory_class, 0};
  if (const hurray_status st = hurray_handle_validate(&probe, nullptr, err)) return st;
  const DlDevice *standard = nullptr;
  for (const DlDevice &d : kDlDevices) {
    if (d.tag != device_tag) continue;
    if (d.memory_class == memory_class) {
      *dl_device_type = d.dl_type;
      return HURRAY_OK;
    }
    if (d.memory_class == HURRAY_MEMORY_STANDARD) standard = &d;
  }
  if (!standard)  // unreachable: validate refused every other tag
    return fail(err, HURRAY_E_DEVICE_TAG, HURRAY_RULE_DEV_RESERVED,
                "BP-DEV-RESERVED: device tag 0x%02X has no DLPack device type", device_tag);
  *dl_device_type = standard->dl_type;
  return HURRAY_OK;
}

HURRAY_API hurray_status hurray_dlpack_device_from_dl(int32_t dl_device_type, uint8_t *device_tag,
                                                      uint8_t *memory_class, hurray_error *err) {
  if (!device_tag || !memory_class)
    return null_argument(err, "hurray_dlpack_device_from_dl",
                         device_tag ? "memory_class" : "device_tag");
  for (const DlDevice &d : kDlDevices)
    if (d.dl_type == dl_device_type) {
      *device_tag = d.tag;
      *memory_class = d.memory_class;
      return HURRAY_OK;
    }
  return fail(err, HURRAY_E_DEVICE_TAG, HURRAY_RULE_DEV_INVALID,
              "BP-DEV-INVALID: DLPack device type %d (%s) has no Hurray device tag "
              "(TABLES.md section 6: refuse)",
              dl_device_type, dl_type_name(dl_device_type));
}

HURRAY_API hurray_status hurray_dlpack_export_versioned(
    hurray_handoff *handoff, hurray_dl_data_type dtype, int32_t ndim, const int64_t *shape,
    const int64_t *strides, uint64_t byte_offset, hurray_dl_managed_tensor_versioned **out,
    hurray_error *err) {
  return export_tensor("hurray_dlpack_export_versioned", true, handoff, dtype, ndim, shape,
                       strides, byte_offset, out, err);
}

HURRAY_API hurray_status hurray_dlpack_export_legacy(hurray_handoff *handoff,
                                                     hurray_dl_data_type dtype, int32_t ndim,
                                                     const int64_t *shape, const int64_t *strides,
                                                     uint64_t byte_offset,
                                                     hurray_dl_managed_tensor **out,
                                                     hurray_error *err) {
  return export_tensor("hurray_dlpack_export_legacy", false, handoff, dtype, ndim, shape,
                       strides, byte_offset, out, err);
}

HURRAY_API hurray_status hurray_dlpack_import_versioned_opts(
    hurray_context *ctx, hurray_dl_managed_tensor_versioned *tensor,
    const hurray_dlpack_import_options *options, hurray_handoff *out, hurray_error *err) {
  static const char who[] = "hurray_dlpack_import_versioned";
  if (!tensor || !out) return null_argument(err, who, tensor ? "out" : "tensor");
  if (tensor->version.major != HURRAY_DLPACK_MAJOR_VERSION)
    return fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_NONE,
                "%s: DLPack version %u.%u; this library reads major version %d", who,
                tensor->version.major, tensor->version.minor, HURRAY_DLPACK_MAJOR_VERSION);
  return import_tensor(who, ctx, tensor->dl_tensor,
                       (tensor->flags & HURRAY_DLPACK_FLAG_READ_ONLY) != 0, &free_versioned,
                       tensor, out, err,
                       (tensor->flags & HURRAY_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED) != 0, options);
}

HURRAY_API hurray_status hurray_dlpack_import_versioned(hurray_context *ctx,
                                                       hurray_dl_managed_tensor_versioned *tensor,
                                                       hurray_handoff *out, hurray_error *err) {
  return hurray_dlpack_import_versioned_opts(ctx, tensor, nullptr, out, err);
}

HURRAY_API hurray_status hurray_dlpack_import_legacy_opts(
    hurray_context *ctx, hurray_dl_managed_tensor *tensor,
    const hurray_dlpack_import_options *options, hurray_handoff *out, hurray_error *err) {
  static const char who[] = "hurray_dlpack_import_legacy";
  if (!tensor || !out) return null_argument(err, who, tensor ? "out" : "tensor");
  return import_tensor(who, ctx, tensor->dl_tensor, false, &free_legacy, tensor, out, err, false,
                       options);
}

HURRAY_API hurray_status hurray_dlpack_import_legacy(hurray_context *ctx,
                                                    hurray_dl_managed_tensor *tensor,
                                                    hurray_handoff *out, hurray_error *err) {
  return hurray_dlpack_import_legacy_opts(ctx, tensor, nullptr, out, err);
}

}  // extern "C"
