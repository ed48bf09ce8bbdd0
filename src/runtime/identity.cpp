// The public device-identity functions (hurray.h): hurray_device_identity and
// hurray_device_find, and the lookup the IPC import shares (identity.h).
// Rule BP-DEV-ID: docs/spec/identity.md.
#include "identity.h"

#include <cstring>

#include "../core/internal.h"
#include "backends.h"
#include "dispatch.h"

namespace hurray::detail {

bool same_identity(const hurray_backend_device_identity &a,
                   const hurray_backend_device_identity &b) noexcept {
  return a.kind != HURRAY_BACKEND_ID_NONE && a.kind == b.kind &&
         std::memcmp(a.bytes, b.bytes, sizeof a.bytes) == 0;
}

int find_identity(const Backend &b, const hurray_backend_device_identity &id,
                  int32_t *ordinal) noexcept {
  const int32_t n = dispatch::device_count(b);
  bool any = false;
  for (int32_t i = 0; i < n; ++i) {
    hurray_backend_device_identity mine;
    hurray_error ignored;
    if (dispatch::device_identity(b, i, &mine, &ignored) != HURRAY_OK) continue;
    if (mine.kind == HURRAY_BACKEND_ID_NONE) continue;
    any = true;
    if (same_identity(mine, id)) {
      *ordinal = i;
      return 1;
    }
  }
  return any ? 0 : -1;
}

}  // namespace hurray::detail

using namespace hurray::detail;

extern "C" {

HURRAY_API hurray_status hurray_device_identity(hurray_context *ctx, uint8_t tag, int32_t ordinal,
                                                hurray_backend_device_identity *out,
                                                hurray_error *err) {
  (void)ctx;
  if (!out) return null_argument(err, "hurray_device_identity", "out");
  std::memset(out, 0, sizeof *out);
  Backend b;
  if (const hurray_status st = backend_device(tag, ordinal, &b, err)) return st;
  return dispatch::device_identity(b, ordinal, out, err);
}

HURRAY_API hurray_status hurray_device_find(hurray_context *ctx, uint8_t tag,
                                            const hurray_backend_device_identity *identity,
                                            int32_t *ordinal, hurray_error *err) {
  (void)ctx;
  if (!identity || !ordinal)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_device_find: identity and ordinal must not be NULL");
  *ordinal = -1;
  if (identity->kind == HURRAY_BACKEND_ID_NONE)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "BP-DEV-ID: hurray_device_find: an identity of kind NONE names no device");
  Backend b;
  if (const hurray_status st = backend_for(tag, &b, err)) return st;
  if (find_identity(b, *identity, ordinal) == 1) return HURRAY_OK;
  *ordinal = -1;
  char text[64];
  return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, HURRAY_RULE_NONE,
              "BP-DEV-ID: no %s device of this process has the identity %s",
              hurray_device_tag_name(tag), identity_text(*identity, text, sizeof text));
}

}  // extern "C"
