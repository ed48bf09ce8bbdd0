// A device identity (docs/spec/identity.md) as text for messages and the
// loader's debug log (identity_text.cpp).
#pragma once

#include <hurray_backend.h>

#include <cstddef>

namespace hurray::detail {

// "UUID 0123...", "PCI 0000:65:00.0", "LUID 0011...", "none" into buf.
const char *identity_text(const hurray_backend_device_identity &id, char *buf,
                          size_t cap) noexcept;

}  // namespace hurray::detail
