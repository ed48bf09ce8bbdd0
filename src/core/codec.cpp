// The 16-byte codec (BP-LE, BP-SIZE): fields are read and written
// little-endian explicitly, so the result is the same on every host.
#include "inline.h"

using namespace hurray::detail;

extern "C" {

HURRAY_API hurray_status hurray_handle_decode(const void *bytes, size_t size,
                                              hurray_buffer_handle *out,
                                              hurray_error *err) {
  if (!bytes || !out) return null_argument(err, "hurray_handle_decode", bytes ? "out" : "bytes");
  if (size != HURRAY_HANDLE_SIZE) {
    fill(err, HURRAY_E_SIZE, HURRAY_RULE_SIZE, HURRAY_SEVERITY_ERROR, 0,
         size < HURRAY_HANDLE_SIZE ? static_cast<int64_t>(size) : HURRAY_HANDLE_SIZE,
         "BP-SIZE: a buffer handle is exactly 16 bytes, got %zu", size);
    return HURRAY_E_SIZE;
  }
  const auto *p = static_cast<const unsigned char *>(bytes);
  decode16(p, out);
  return HURRAY_OK;
}

HURRAY_API hurray_status hurray_handle_encode(const hurray_buffer_handle *h,
                                              void *out, size_t out_size,
                                              hurray_error *err) {
  if (!h || !out) return null_argument(err, "hurray_handle_encode", h ? "out" : "handle");
  if (out_size < HURRAY_HANDLE_SIZE)
    return fail(err, HURRAY_E_SIZE, HURRAY_RULE_SIZE,
                "BP-SIZE: encoding a handle needs 16 bytes of output, got %zu",
                out_size);
  auto *p = static_cast<unsigned char *>(out);
  encode16(*h, p);
  return HURRAY_OK;
}

}  // extern "C"
