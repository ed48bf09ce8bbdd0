// The backend registry: the built-in CPU backend and the plugins found in
// $HURRAY_BACKEND_PATH and <libdir>/hurray/, each loaded and probed on the
// first use of its device tag. Process-wide, thread-safe, never unloaded.
#pragma once

#include <hurray.h>
#include <hurray_backend.h>

#include <atomic>
#include <string>

#include "backend.h"

namespace hurray::detail {

// The backend serving `tag`, loading and probing its plugin on first use.
// HURRAY_E_DEVICE_UNAVAILABLE with the reason when there is none.
hurray_status backend_for(uint8_t tag, Backend *out, hurray_error *err) noexcept;

// Each tag's backend once it is probed and ready (it never changes after),
// so that finding it is one load; nullptr until then.
extern std::atomic<const Backend *> g_ready_backends[256];
// Its device count as probed, written before g_ready_backends[tag] and never
// after: an ordinal below it needs no call into the plugin. (An ordinal at
// or above it asks the plugin again, in backend_device_slow.)
extern int32_t g_ready_devices[256];

hurray_status backend_device_slow(uint8_t tag, int32_t ordinal, Backend *out,
                                  hurray_error *err) noexcept;

// Also checks the ordinal against the backend's device count.
inline hurray_status backend_device(uint8_t tag, int32_t ordinal, Backend *out,
                                    hurray_error *err) noexcept {
  if (const Backend *b = g_ready_backends[tag].load(std::memory_order_acquire)) {
    if (ordinal >= 0 && ordinal < g_ready_devices[tag]) {
      *out = *b;
      return HURRAY_OK;
    }
  }
  return backend_device_slow(tag, ordinal, out, err);
}

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
