// The OpenCL plugin: the device count, native handles and the table behind hurray_backend_entry.
#include "state.h"

namespace hurray::opencl {

int32_t device_count(void *state) { return hurray::kit::count_devices<State>(state); }

// ---- native handles -------------------------------------------------------

hurray_status native(void *state, int32_t device, hurray_backend_native *out,
                     hurray_error *err) {
  auto [refused, s, d] = kit::enter_out<const State>(state, device, out, err, "native: out");
  if (refused != HURRAY_OK) return refused;
  return kit::give_handles(out, {d->platform, d->id, d->context, d->queue, s->lib});
}

constinit const hurray_backend_v1 kTable = kit_table<kit::Ipc::kNone>(HURRAY_DEVICE_OPENCL);

}  // namespace hurray::opencl

extern "C" HURRAY_API const hurray_backend_v1 *hurray_backend_entry(void) {
  return &hurray::opencl::kTable;
}
