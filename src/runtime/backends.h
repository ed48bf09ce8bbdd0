// The backend registry: the built-in CPU backend and the plugins found in
// $HURRAY_BACKEND_PATH and <libdir>/hurray/, each loaded and probed on the
// first use of its device tag. Process-wide, thread-safe, never unloaded.
#pragma once

#include <hurray.h>
#include <hurray_backend.h>

#include <string>

namespace hurray::detail {

// A probed backend, ready to use.
struct Backend {
  const hurray_backend_v1 *table;
  void *state;
};

// The backend serving `tag`, loading and probing its plugin on first use.
// HURRAY_E_DEVICE_UNAVAILABLE with the reason when there is none.
hurray_status backend_for(uint8_t tag, Backend *out, hurray_error *err) noexcept;

// Also checks the ordinal against the backend's device count.
hurray_status backend_device(uint8_t tag, int32_t ordinal, Backend *out,
                             hurray_error *err) noexcept;

// An object whose address identifies (backend, device) for callbacks that
// only carry one user pointer (an event's release).
struct DeviceRef {
  Backend backend;
  int32_t device;
};
const DeviceRef *device_ref(const Backend &b, int32_t device) noexcept;

// The built-in CPU backend's table (src/backends/cpu).
const hurray_backend_v1 *cpu_backend() noexcept;

// HURRAY_LOG=debug: one line on stderr per step of the loader.
void log_debug(const char *fmt, ...) noexcept __attribute__((format(printf, 1, 2)));

}  // namespace hurray::detail
