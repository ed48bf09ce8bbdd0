// The hot primitives of the codec and the rule engine, inline, so the
// handoff layer's fast paths compile to straight-line code. The exported
// functions are thin wrappers around these; every slow path (anything that
// fails) goes through the full rule engine, which is the reference.
#pragma once

#include <bit>
#include <cstring>

#include "internal.h"

namespace hurray::detail {

template <class T>
inline T load_le(const unsigned char *p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::big) {
    if constexpr (sizeof(T) == 8) v = __builtin_bswap64(v);
    else v = __builtin_bswap32(v);
  }
  return v;
}

template <class T>
inline void store_le(unsigned char *p, T v) noexcept {
  if constexpr (std::endian::native == std::endian::big) {
    if constexpr (sizeof(T) == 8) v = __builtin_bswap64(v);
    else v = __builtin_bswap32(v);
  }
  std::memcpy(p, &v, sizeof v);
}

// BP-LE: 16 bytes to fields and back, on any host.
inline void decode16(const unsigned char *p, hurray_buffer_handle *h) noexcept {
  h->byte_size = load_le<uint64_t>(p);
  h->alignment = load_le<uint32_t>(p + 8);
  h->device_tag = p[12];
  h->sync_mode = p[13];
  h->memory_class = p[14];
  h->reserved = p[15];
}

inline void encode16(const hurray_buffer_handle &h, unsigned char *p) noexcept {
  store_le<uint64_t>(p, h.byte_size);
  store_le<uint32_t>(p + 8, h.alignment);
  // Bytes 12..15 in one store: a reader that loads them as one word (decode16
  // does, once inlined) then gets them by store forwarding instead of
  // stalling on four byte stores (about a third of a handoff round trip).
  store_le<uint32_t>(p + 12, static_cast<uint32_t>(h.device_tag) |
                                 static_cast<uint32_t>(h.sync_mode) << 8 |
                                 static_cast<uint32_t>(h.memory_class) << 16 |
                                 static_cast<uint32_t>(h.reserved) << 24);
}

// True when h breaks no reject rule and no warn rule can become an error:
// the common case, decided in a few branches. False means "ask the full
// walk", not "invalid" (the tests compare both on random input).
inline bool fast_valid(const hurray_buffer_handle &h, const Policy &p) noexcept {
  if (h.reserved != 0 || h.device_tag > HURRAY_DEVICE_OPENCL ||
      h.memory_class > HURRAY_MEMORY_PEER || p.warnings_as_errors)
    return false;
  if (!((kNamedDevices[h.device_tag].valid_classes >> h.memory_class) & 1u)) return false;
  if (!is_pow2(h.alignment)) return false;
  if (h.byte_size != 0 &&
      h.alignment < (p.needs_ipc_alignment() ? HURRAY_IPC_ALIGNMENT : HURRAY_MIN_ALIGNMENT))
    return false;
  if (h.sync_mode == HURRAY_SYNC_PRODUCER_SYNCED) return true;
  return h.sync_mode <= HURRAY_SYNC_CONSUMER_STREAM && h.device_tag != HURRAY_DEVICE_CPU &&
         p.transport == HURRAY_TRANSPORT_IN_PROCESS;
}

// BP-ALIGN-ADDR for a handle whose alignment is a power of two; empty
// buffers take any address (BP-ALIGN-EMPTY).
inline bool address_ok(const hurray_buffer_handle &h, const void *addr) noexcept {
  const auto a = reinterpret_cast<uintptr_t>(addr);
  return h.byte_size == 0 || (a != 0 && (a & (uintptr_t(h.alignment) - 1)) == 0);
}

}  // namespace hurray::detail
