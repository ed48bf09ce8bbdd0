// The 16-byte codec (BP-LE, BP-SIZE): explicit little-endian byte assembly,
// so the result is the same on every host; compilers turn it into plain
// loads and stores on little-endian machines.
#include "internal.h"

namespace {

uint64_t load_le(const unsigned char *p, int n) noexcept {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

void store_le(unsigned char *p, uint64_t v, int n) noexcept {
  for (int i = 0; i < n; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

}  // namespace

using namespace hurray::detail;

extern "C" {

HURRAY_API hurray_status hurray_handle_decode(const void *bytes, size_t size,
                                              hurray_buffer_handle *out,
                                              hurray_error *err) {
  if (!bytes || !out)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_handle_decode: %s is NULL", bytes ? "out" : "bytes");
  if (size != HURRAY_HANDLE_SIZE) {
    fill(err, HURRAY_E_SIZE, HURRAY_RULE_SIZE, HURRAY_SEVERITY_ERROR, 0,
         size < HURRAY_HANDLE_SIZE ? static_cast<int64_t>(size) : HURRAY_HANDLE_SIZE,
         "BP-SIZE: a buffer handle is exactly 16 bytes, got %zu", size);
    return HURRAY_E_SIZE;
  }
  const auto *p = static_cast<const unsigned char *>(bytes);
  out->byte_size = load_le(p, 8);
  out->alignment = static_cast<uint32_t>(load_le(p + 8, 4));
  out->device_tag = p[12];
  out->sync_mode = p[13];
  out->memory_class = p[14];
  out->reserved = p[15];
  return HURRAY_OK;
}

HURRAY_API hurray_status hurray_handle_encode(const hurray_buffer_handle *h,
                                              void *out, size_t out_size,
                                              hurray_error *err) {
  if (!h || !out)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_handle_encode: %s is NULL", h ? "out" : "handle");
  if (out_size < HURRAY_HANDLE_SIZE)
    return fail(err, HURRAY_E_SIZE, HURRAY_RULE_SIZE,
                "BP-SIZE: encoding a handle needs 16 bytes of output, got %zu",
                out_size);
  auto *p = static_cast<unsigned char *>(out);
  store_le(p, h->byte_size, 8);
  store_le(p + 8, h->alignment, 4);
  p[12] = h->device_tag;
  p[13] = h->sync_mode;
  p[14] = h->memory_class;
  p[15] = h->reserved;
  return HURRAY_OK;
}

}  // extern "C"
