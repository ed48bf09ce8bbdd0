// Stable device identity (docs/spec/identity.md): finding this process's
// device of a tag by the identity another process, or the network, reported.
// Used by hurray_device_find (identity.cpp) and the IPC import (src/ipc);
// identity_text (identity_text.h) writes an identity for messages.
#pragma once

#include <hurray.h>
#include <hurray_backend.h>

#include <cstdint>

#include "backend.h"
#include "identity_text.h"

namespace hurray::detail {

// Two identities name the same device: kind not NONE, kind and bytes equal.
bool same_identity(const hurray_backend_device_identity &a,
                   const hurray_backend_device_identity &b) noexcept;

// The ordinal of b's device whose identity is `id` (kind not NONE): 1 and
// *ordinal when one is; 0 when none is and at least one of b's devices has an
// identity (so `id` names a device this process does not have); -1 when
// none of b's devices has an identity (nothing to match: callers fall back
// to the ordinal). A plugin error on a device counts as no identity.
int find_identity(const Backend &b, const hurray_backend_device_identity &id,
                  int32_t *ordinal) noexcept;

}  // namespace hurray::detail
