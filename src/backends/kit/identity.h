// The device_identity entry's filling, written once (include/hurray_backend.h,
// hurray_backend_device_identity): the kit's plugins call set_identity with
// what their vendor reported. An identity of all-zero bytes is no identity
// (drivers that do not know their UUID report zeros): kind NONE, so that two
// such devices never count as the same device.
#pragma once

#include <hurray_backend.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace hurray::kit {

// *out = (kind, the n <= 16 bytes at bytes, the rest zero); NONE when the
// bytes are all zero.
inline void set_identity(hurray_backend_device_identity *out, uint32_t kind, const void *bytes,
                         size_t n) noexcept {
  std::memset(out, 0, sizeof *out);
  if (n > sizeof out->bytes) n = sizeof out->bytes;
  std::memcpy(out->bytes, bytes, n);
  for (size_t i = 0; i < n; ++i)
    if (out->bytes[i] != 0) {
      out->kind = kind;
      return;
    }
  std::memset(out->bytes, 0, sizeof out->bytes);
}

// PCI identity: bytes[0..3] the domain (little-endian), [4] bus, [5] device,
// [6] function.
inline void set_pci_identity(hurray_backend_device_identity *out, uint32_t domain, uint32_t bus,
                             uint32_t dev, uint32_t fn) noexcept {
  const uint8_t b[7] = {static_cast<uint8_t>(domain),       static_cast<uint8_t>(domain >> 8),
                        static_cast<uint8_t>(domain >> 16), static_cast<uint8_t>(domain >> 24),
                        static_cast<uint8_t>(bus),          static_cast<uint8_t>(dev),
                        static_cast<uint8_t>(fn)};
  set_identity(out, HURRAY_BACKEND_ID_PCI, b, sizeof b);  // 0000:00:00.0 (a host bridge): NONE
}

}  // namespace hurray::kit
