// The Level Zero plugin: the device count, native handles and the table behind
// hurray_backend_entry.
#include "state.h"

namespace hurray::level_zero {

int32_t device_count(void *state) { return hurray::kit::count_devices<State>(state); }

// ---- native handles -------------------------------------------------------

hurray_status native(void *state, int32_t device, hurray_backend_native *out,
                     hurray_error *err) {
  auto [refused, s, d] = kit::enter_out<State>(state, device, out, err, "native: out");
  if (refused != HURRAY_OK) return refused;
  void *group = reinterpret_cast<void *>(static_cast<uintptr_t>(d->group));
  return kit::give_handles(out, {d->driver->handle, d->handle, d->driver->context, d->list,
                                 s->lib, group});
}

constinit const hurray_backend_v1 kTable = kit_table<kit::Ipc::kEntries>(HURRAY_DEVICE_LEVEL_ZERO);

}  // namespace hurray::level_zero

extern "C" HURRAY_API const hurray_backend_v1 *hurray_backend_entry(void) {
  return &hurray::level_zero::kTable;
}
