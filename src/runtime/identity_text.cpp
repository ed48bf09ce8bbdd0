// A device identity as text (identity_text.h).
#include "identity_text.h"

#include <cstdio>

namespace hurray::detail {

const char *identity_text(const hurray_backend_device_identity &id, char *buf,
                          size_t cap) noexcept {
  const uint8_t *x = id.bytes;
  switch (id.kind) {
    case HURRAY_BACKEND_ID_UUID:
      std::snprintf(buf, cap,
                    "UUID %02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                    x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11],
                    x[12], x[13], x[14], x[15]);
      break;
    case HURRAY_BACKEND_ID_LUID:
      std::snprintf(buf, cap, "LUID %02x%02x%02x%02x%02x%02x%02x%02x", x[0], x[1], x[2], x[3],
                    x[4], x[5], x[6], x[7]);
      break;
    case HURRAY_BACKEND_ID_PCI:
      std::snprintf(buf, cap, "PCI %04x:%02x:%02x.%x",
                    static_cast<unsigned>(x[0] | x[1] << 8 | x[2] << 16 |
                                          static_cast<unsigned>(x[3]) << 24),
                    x[4], x[5], x[6]);
      break;
    case HURRAY_BACKEND_ID_NONE:
      std::snprintf(buf, cap, "none");
      break;
    default:
      std::snprintf(buf, cap, "kind %u", id.kind);
  }
  return buf;
}

}  // namespace hurray::detail
