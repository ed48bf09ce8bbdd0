// The rule engine: every reject and warn rule of RULES.md that the 16 bytes
// (plus the policy) decide. One walker, two sinks: the first-error sink stops
// at the first error and formats nothing else; the diagnose sink records all.
#include <cinttypes>
#include <cstdio>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "inline.h"

namespace hurray::detail {
namespace {

// Walk the rules of one handle in field (byte) order, calling
// sink.emit(Finding) for each violation. emit returns false to stop.
// `first` is handle 0 of the table (for BP-COLOC), null for index 0 or a
// standalone handle. Every rule is evaluated on its own; a rule is skipped
// only when its question cannot be asked (e.g. the pair of a reserved tag).
template <class Sink>
bool walk_handle(const hurray_buffer_handle &h, const Policy &p, int64_t index,
                 int64_t base, const hurray_buffer_handle *first, Sink &sink) {
  const auto warn = p.warnings_as_errors ? HURRAY_SEVERITY_ERROR : HURRAY_SEVERITY_WARNING;
  auto emit = [&](hurray_rule r, hurray_severity s, int64_t field) {
    return sink.emit(Finding{r, s, index, base + field});
  };
  const bool nonempty = h.byte_size != 0;
  const DeviceInfo *dev = device_info(h.device_tag);  // null: reserved/invalid

  // offset 8: alignment
  if (!is_pow2(h.alignment) && !emit(HURRAY_RULE_ALIGN_POW2, HURRAY_SEVERITY_ERROR, 8))
    return false;
  if (nonempty && h.alignment < HURRAY_MIN_ALIGNMENT &&
      !emit(HURRAY_RULE_ALIGN_MIN, HURRAY_SEVERITY_ERROR, 8))
    return false;
  if (nonempty && p.needs_ipc_alignment() && h.alignment < HURRAY_IPC_ALIGNMENT &&
      !emit(HURRAY_RULE_ALIGN_IPC, HURRAY_SEVERITY_ERROR, 8))
    return false;
  if (nonempty && dev && dev->gpu_memory && h.alignment < HURRAY_IPC_ALIGNMENT &&
      !emit(HURRAY_RULE_ALIGN_GPU_PAGE, warn, 8))
    return false;
  if (nonempty && dev && h.alignment < dev->should_alignment &&
      !emit(HURRAY_RULE_ALIGN_HEXAGON, warn, 8))
    return false;

  // offset 12: device_tag
  switch (tag_kind(h.device_tag)) {
    case TagKind::Invalid:
      if (!emit(HURRAY_RULE_DEV_INVALID, HURRAY_SEVERITY_ERROR, 12)) return false;
      break;
    case TagKind::Reserved:
      if (!emit(HURRAY_RULE_DEV_RESERVED, HURRAY_SEVERITY_ERROR, 12)) return false;
      break;
    case TagKind::Private:
      if (!p.private_agreed(h.device_tag) &&
          !emit(HURRAY_RULE_DEV_PRIVATE, HURRAY_SEVERITY_ERROR, 12))
        return false;
      break;
    case TagKind::Named:
      break;
  }
  if (first && h.device_tag != first->device_tag &&
      !emit(HURRAY_RULE_COLOC, HURRAY_SEVERITY_ERROR, 12))
    return false;

  // offset 13: sync_mode
  if (h.sync_mode > HURRAY_SYNC_CONSUMER_STREAM) {
    if (!emit(HURRAY_RULE_SYNC_VALUE, HURRAY_SEVERITY_ERROR, 13)) return false;
  } else if (h.sync_mode != HURRAY_SYNC_PRODUCER_SYNCED) {
    if (h.device_tag == HURRAY_DEVICE_CPU &&
        !emit(HURRAY_RULE_SYNC_CPU, HURRAY_SEVERITY_ERROR, 13))
      return false;
    if (p.is_network() && !emit(HURRAY_RULE_SYNC_NET, HURRAY_SEVERITY_ERROR, 13))
      return false;
    if (p.transport == HURRAY_TRANSPORT_IPC && dev && h.device_tag != HURRAY_DEVICE_CPU) {
      const unsigned need = h.sync_mode == HURRAY_SYNC_EVENT ? HURRAY_IPC_SYNC_EVENTS
                                                             : HURRAY_IPC_SYNC_STREAMS;
      if (!(p.ipc_sync[h.device_tag] & need) &&
          !emit(HURRAY_RULE_SYNC_IPC, HURRAY_SEVERITY_ERROR, 13))
        return false;
    }
  }

  // offset 14: memory_class
  const ClassKind ck = class_kind(h.memory_class);
  if (ck == ClassKind::Reserved || ck == ClassKind::Invalid) {
    if (!emit(HURRAY_RULE_MC_INVALID, HURRAY_SEVERITY_ERROR, 14)) return false;
  } else if (dev && !pair_valid(h.device_tag, h.memory_class)) {
    if (!emit(HURRAY_RULE_MC_PAIR, HURRAY_SEVERITY_ERROR, 14)) return false;
  }
  if (first && h.memory_class != first->memory_class &&
      !emit(HURRAY_RULE_COLOC, HURRAY_SEVERITY_ERROR, 14))
    return false;

  // offset 15: reserved
  if (h.reserved != 0 && !emit(HURRAY_RULE_RESERVED, HURRAY_SEVERITY_ERROR, 15))
    return false;
  return true;
}

void decode_at(const unsigned char *p, hurray_buffer_handle *h) noexcept { decode16(p, h); }

// The batch fast path: true when every handle of the table passes the quick
// rules and shares handle 0's device_tag and memory_class (BP-COLOC). Each
// handle is two little-endian words; the loop has no branch on the data, so
// the compiler vectorises it, and reads each byte once. False means "ask the
// full walk", which then finds and reports the first error.
bool fast_table_valid(const unsigned char *p, size_t n, const Policy &pol) noexcept {
  hurray_buffer_handle first;
  decode16(p, &first);
  if (!fast_valid(first, pol)) return false;
  if (n == 1) return true;
  // word 1: bytes 8-11 alignment, 12 tag, 13 sync, 14 class, 15 reserved
  const uint64_t fixed_mask = 0xFFFF00FF00000000ull;  // tag, class, reserved
  const uint64_t fixed = uint64_t(first.device_tag) << 32 | uint64_t(first.memory_class) << 48;
  // sync_mode may vary per handle, within what the first handle's device and
  // the transport allow (fast_valid's rule)
  const bool any_sync = first.device_tag != HURRAY_DEVICE_CPU &&
                        pol.transport == HURRAY_TRANSPORT_IN_PROCESS;
  const uint64_t max_sync = any_sync ? HURRAY_SYNC_CONSUMER_STREAM : HURRAY_SYNC_PRODUCER_SYNCED;
  const uint64_t min_align = pol.needs_ipc_alignment() ? HURRAY_IPC_ALIGNMENT : HURRAY_MIN_ALIGNMENT;
  uint64_t bad = 0;
  size_t i = 1;
#if defined(__SSE2__)
  // Four handles at a time: transpose four 16-byte handles into lanes of
  // size_lo, size_hi, alignment and meta (tag | sync << 8 | class << 16 |
  // reserved << 24), then test the same rules as the scalar loop below on 32-bit
  // lanes (SSE2 has no 64-bit compares).
  const __m128i want_meta = _mm_set1_epi32(int(first.device_tag | uint32_t(first.memory_class) << 16));
  const __m128i meta_mask = _mm_set1_epi32(int(0xFFFF00FFu));
  const __m128i sync_limit = _mm_set1_epi32(int(max_sync));
  const __m128i below_min = _mm_set1_epi32(int(~uint32_t(min_align - 1)));
  const __m128i zero = _mm_setzero_si128(), ones = _mm_set1_epi32(-1);
  __m128i acc = zero;  // all-ones lanes where a rule broke
  for (; i + 4 <= n; i += 4) {
    const auto *q = reinterpret_cast<const __m128i *>(p + 16 * i);
    const __m128i h0 = _mm_loadu_si128(q), h1 = _mm_loadu_si128(q + 1);
    const __m128i h2 = _mm_loadu_si128(q + 2), h3 = _mm_loadu_si128(q + 3);
    const __m128i t0 = _mm_unpacklo_epi32(h0, h1), t1 = _mm_unpacklo_epi32(h2, h3);
    const __m128i t2 = _mm_unpackhi_epi32(h0, h1), t3 = _mm_unpackhi_epi32(h2, h3);
    const __m128i size_lo = _mm_unpacklo_epi64(t0, t1), size_hi = _mm_unpackhi_epi64(t0, t1);
    const __m128i align = _mm_unpacklo_epi64(t2, t3), meta = _mm_unpackhi_epi64(t2, t3);
    // BP-COLOC, BP-RESERVED: tag, class and reserved bytes as expected
    acc = _mm_or_si128(acc, _mm_xor_si128(_mm_cmpeq_epi32(_mm_and_si128(meta, meta_mask), want_meta), ones));
    // BP-SYNC-*: sync_mode within what the device and transport allow
    acc = _mm_or_si128(acc, _mm_cmpgt_epi32(_mm_and_si128(_mm_srli_epi32(meta, 8), _mm_set1_epi32(0xFF)), sync_limit));
    // BP-ALIGN-POW2: non-zero, one bit set
    acc = _mm_or_si128(acc, _mm_cmpeq_epi32(align, zero));
    acc = _mm_or_si128(acc, _mm_xor_si128(_mm_cmpeq_epi32(_mm_and_si128(align, _mm_add_epi32(align, ones)), zero), ones));
    // BP-ALIGN-MIN / BP-ALIGN-IPC: a non-empty buffer's power of two is below the minimum
    const __m128i empty = _mm_cmpeq_epi32(_mm_or_si128(size_lo, size_hi), zero);
    const __m128i small = _mm_cmpeq_epi32(_mm_and_si128(align, below_min), zero);
    acc = _mm_or_si128(acc, _mm_andnot_si128(empty, small));
  }
  bad |= uint64_t(_mm_movemask_epi8(acc));
#endif
  for (; i < n; ++i) {
    const uint64_t size = load_le<uint64_t>(p + 16 * i);
    const uint64_t w = load_le<uint64_t>(p + 16 * i + 8);
    const uint64_t a = w & 0xFFFFFFFFu;
    const uint64_t sync = (w >> 40) & 0xFF;
    bad |= (w & fixed_mask) ^ fixed;                   // BP-COLOC, BP-RESERVED
    bad |= uint64_t(sync > max_sync);                  // BP-SYNC-*
    bad |= uint64_t(a == 0) | (a & (a - 1));           // BP-ALIGN-POW2
    bad |= uint64_t(size != 0) & uint64_t(a < min_align);  // BP-ALIGN-MIN / -IPC
  }
  return bad == 0;
}

// Walk a whole table: BP-SIZE first, then every complete handle.
template <class Sink>
void walk_table(const unsigned char *bytes, size_t size, const Policy &p, Sink &sink) {
  if (size == 0 || size % HURRAY_HANDLE_SIZE != 0) {
    const int64_t whole = static_cast<int64_t>(size / HURRAY_HANDLE_SIZE);
    if (!sink.emit(Finding{HURRAY_RULE_SIZE, HURRAY_SEVERITY_ERROR, whole,
                           whole * HURRAY_HANDLE_SIZE}))
      return;
  }
  const size_t n = size / HURRAY_HANDLE_SIZE;
  hurray_buffer_handle first{};
  for (size_t i = 0; i < n; ++i) {
    hurray_buffer_handle h;
    decode_at(bytes + i * HURRAY_HANDLE_SIZE, &h);
    if (i == 0) first = h;
    sink.current = &h;
    sink.first = &first;
    if (!walk_handle(h, p, static_cast<int64_t>(i),
                     static_cast<int64_t>(i * HURRAY_HANDLE_SIZE),
                     i == 0 ? nullptr : &first, sink))
      return;
  }
}

// Stops at the first error; formats only that one.
struct FirstError {
  const Policy &policy;
  size_t size;
  hurray_error *err;
  const hurray_buffer_handle *current = nullptr;
  const hurray_buffer_handle *first = nullptr;
  hurray_status status = HURRAY_OK;

  bool emit(const Finding &f) noexcept {
    if (f.severity != HURRAY_SEVERITY_ERROR) return true;
    status = status_of_rule(f.rule);
    if (err) describe(f, current, first, policy, size, err);
    return false;
  }
};

// Records everything, up to capacity, and counts beyond it.
struct Diagnose {
  const Policy &policy;
  size_t size;
  hurray_error *out;
  size_t capacity;
  const hurray_buffer_handle *current = nullptr;
  const hurray_buffer_handle *first = nullptr;
  size_t errors = 0, warnings = 0;
  hurray_status status = HURRAY_OK;

  bool emit(const Finding &f) noexcept {
    const size_t k = errors + warnings;
    if (f.severity == HURRAY_SEVERITY_ERROR) {
      if (errors++ == 0) status = status_of_rule(f.rule);
    } else {
      ++warnings;
    }
    if (k < capacity) describe(f, current, first, policy, size, &out[k]);
    return true;
  }
};

}  // namespace

void describe(const Finding &f, const hurray_buffer_handle *h, const hurray_buffer_handle *first,
              const Policy &p, size_t size, hurray_error *out) noexcept {
  const hurray_status st = status_of_rule(f.rule);
  const char *id = hurray_rule_id(f.rule);
  const char *sev = f.severity == HURRAY_SEVERITY_WARNING ? " (SHOULD)" : "";
  char where[48];
  std::snprintf(where, sizeof where, "buffer %" PRId64 " byte %" PRId64, f.index, f.offset);
  if (f.rule == HURRAY_RULE_SIZE || !h) {
    if (size == 0)
      fill(out, st, f, "%s: empty input; a buffer table holds at least one 16-byte handle", id);
    else
      fill(out, st, f,
           "%s: %zu bytes is not a whole number of 16-byte handles "
           "(%zu trailing bytes at offset %" PRId64 ")",
           id, size, size % HURRAY_HANDLE_SIZE, f.offset);
    return;
  }
  const char *tr = hurray_transport_name(p.transport);
  switch (f.rule) {
    case HURRAY_RULE_ALIGN_POW2:
      fill(out, st, f, "%s: %s: alignment %" PRIu32 " is not a power of two", id, where,
           h->alignment);
      break;
    case HURRAY_RULE_ALIGN_MIN:
      fill(out, st, f,
           "%s: %s: alignment %" PRIu32 " is below 64, the minimum for a non-empty buffer", id,
           where, h->alignment);
      break;
    case HURRAY_RULE_ALIGN_IPC:
      fill(out, st, f,
           "%s: %s: alignment %" PRIu32 " is below 4096, the minimum on the %s transport", id,
           where, h->alignment, tr);
      break;
    case HURRAY_RULE_ALIGN_GPU_PAGE:
      fill(out, st, f, "%s%s: %s: %s memory should be page-aligned (4096), declared %" PRIu32, id,
           sev, where, hurray_device_tag_name(h->device_tag), h->alignment);
      break;
    case HURRAY_RULE_ALIGN_HEXAGON:
      fill(out, st, f, "%s%s: %s: HEXAGON buffers should be aligned to 128, declared %" PRIu32, id,
           sev, where, h->alignment);
      break;
    case HURRAY_RULE_DEV_INVALID:
      fill(out, st, f, "%s: %s: device_tag 0xFF is invalid", id, where);
      break;
    case HURRAY_RULE_DEV_RESERVED:
      fill(out, st, f, "%s: %s: device_tag 0x%02X is reserved (0x09-0xEF)", id, where,
           h->device_tag);
      break;
    case HURRAY_RULE_DEV_PRIVATE:
      fill(out, st, f,
           "%s: %s: private device_tag 0x%02X was not agreed out of band "
           "(allow it in the policy)",
           id, where, h->device_tag);
      break;
    case HURRAY_RULE_MC_INVALID:
      fill(out, st, f, "%s: %s: memory_class 0x%02X is %s", id, where, h->memory_class,
           hurray_memory_class_name(h->memory_class));
      break;
    case HURRAY_RULE_MC_PAIR:
      fill(out, st, f, "%s: %s: memory_class 0x%02X %s is not valid with device_tag 0x%02X %s", id,
           where, h->memory_class, hurray_memory_class_name(h->memory_class), h->device_tag,
           hurray_device_tag_name(h->device_tag));
      break;
    case HURRAY_RULE_COLOC:
      if (f.offset % HURRAY_HANDLE_SIZE == 12)
        fill(out, st, f, "%s: %s: device_tag 0x%02X differs from buffer 0's 0x%02X", id, where,
             h->device_tag, first ? first->device_tag : 0);
      else
        fill(out, st, f, "%s: %s: memory_class 0x%02X differs from buffer 0's 0x%02X", id, where,
             h->memory_class, first ? first->memory_class : 0);
      break;
    case HURRAY_RULE_SYNC_VALUE:
      fill(out, st, f, "%s: %s: sync_mode 0x%02X is not defined", id, where, h->sync_mode);
      break;
    case HURRAY_RULE_SYNC_CPU:
      fill(out, st, f, "%s: %s: CPU buffers must be PRODUCER_SYNCED, not %s", id, where,
           hurray_sync_mode_name(h->sync_mode));
      break;
    case HURRAY_RULE_SYNC_NET:
      fill(out, st, f, "%s: %s: the %s transport carries only PRODUCER_SYNCED handles, not %s", id,
           where, tr, hurray_sync_mode_name(h->sync_mode));
      break;
    case HURRAY_RULE_SYNC_IPC:
      fill(out, st, f,
           "%s: %s: %s over IPC needs a device that exports IPC %s; "
           "%s does not (per the policy)",
           id, where, hurray_sync_mode_name(h->sync_mode),
           h->sync_mode == HURRAY_SYNC_EVENT ? "events" : "streams",
           hurray_device_tag_name(h->device_tag));
      break;
    case HURRAY_RULE_RESERVED:
      fill(out, st, f, "%s: %s: reserved byte is 0x%02X, must be 0x00", id, where, h->reserved);
      break;
    default:
      fill(out, st, f, "%s: %s: %s", id, where, hurray_rule_summary(f.rule));
      break;
  }
}

}  // namespace hurray::detail

using namespace hurray::detail;

extern "C" {

HURRAY_API hurray_status hurray_handle_validate(const hurray_buffer_handle *handle,
                                                const hurray_policy *policy,
                                                hurray_error *err) {
  if (!handle) return null_argument(err, "hurray_handle_validate", "handle");
  const Policy &p = resolve(policy);
  if (fast_valid(*handle, p)) return HURRAY_OK;
  FirstError sink{p, HURRAY_HANDLE_SIZE, err};
  sink.current = handle;
  walk_handle(*handle, p, 0, 0, nullptr, sink);
  return sink.status;
}

HURRAY_API hurray_status hurray_handle_check_address(const hurray_buffer_handle *handle,
                                                     const void *address,
                                                     hurray_error *err) {
  if (!handle) return null_argument(err, "hurray_handle_check_address", "handle");
  if (handle->byte_size == 0) return HURRAY_OK;  // BP-ALIGN-EMPTY
  const auto addr = reinterpret_cast<uintptr_t>(address);
  if (!is_pow2(handle->alignment)) {
    fill(err, HURRAY_E_ALIGNMENT, HURRAY_RULE_ALIGN_POW2, HURRAY_SEVERITY_ERROR, 0, 8,
         "BP-ALIGN-POW2: alignment %" PRIu32 " is not a power of two", handle->alignment);
    return HURRAY_E_ALIGNMENT;
  }
  if (addr == 0) {
    // 0 is a multiple of every alignment: say what is wrong (the pointer).
    fill(err, HURRAY_E_ALIGNMENT, HURRAY_RULE_ALIGN_ADDR, HURRAY_SEVERITY_ERROR, 0, -1,
         "BP-ALIGN-ADDR: the data pointer is NULL but byte_size is %" PRIu64
         "; only an empty buffer (byte_size 0, BP-ALIGN-EMPTY) may have a NULL pointer",
         handle->byte_size);
    return HURRAY_E_ALIGNMENT;
  }
  if (addr % handle->alignment != 0) {
    fill(err, HURRAY_E_ALIGNMENT, HURRAY_RULE_ALIGN_ADDR, HURRAY_SEVERITY_ERROR, 0, -1,
         "BP-ALIGN-ADDR: address 0x%" PRIxPTR " of a non-empty buffer is not a "
         "multiple of its declared alignment %" PRIu32,
         addr, handle->alignment);
    return HURRAY_E_ALIGNMENT;
  }
  return HURRAY_OK;
}

HURRAY_API hurray_status hurray_table_validate(const void *bytes, size_t size,
                                               const hurray_policy *policy,
                                               hurray_error *err) {
  if (!bytes && size != 0) return null_argument(err, "hurray_table_validate", "bytes");
  const Policy &p = resolve(policy);
  if (size != 0 && size % HURRAY_HANDLE_SIZE == 0 &&
      fast_table_valid(static_cast<const unsigned char *>(bytes), size / HURRAY_HANDLE_SIZE, p))
    return HURRAY_OK;
  FirstError sink{p, size, err};
  walk_table(static_cast<const unsigned char *>(bytes), size, p, sink);
  return sink.status;
}

HURRAY_API hurray_status hurray_table_diagnose(const void *bytes, size_t size,
                                               const hurray_policy *policy,
                                               hurray_error *out, size_t capacity,
                                               size_t *n_errors, size_t *n_warnings,
                                               hurray_error *err) {
  if ((!bytes && size != 0) || (!out && capacity != 0))
    return null_argument(err, "hurray_table_diagnose", bytes || size == 0 ? "out" : "bytes");
  const Policy &p = resolve(policy);
  Diagnose sink{p, size, out, capacity};
  walk_table(static_cast<const unsigned char *>(bytes), size, p, sink);
  if (n_errors) *n_errors = sink.errors;
  if (n_warnings) *n_warnings = sink.warnings;
  return sink.status;
}

}  // extern "C"
