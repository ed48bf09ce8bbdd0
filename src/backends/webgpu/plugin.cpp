// The WebGPU plugin: the table behind hurray_backend_entry (no IPC entries:
// WebGPU defines none) and native handles.
#include "state.h"

namespace hurray::webgpu {

constinit const hurray_backend_v1 kTable = kit_table<kit::Ipc::kNone>(HURRAY_DEVICE_WEBGPU);

hurray_status native(void *state, int32_t device, hurray_backend_native *out,
                     hurray_error *err) {
  auto [refused, s, d] = kit::enter_out<const State>(state, device, out, err, "native: out");
  if (refused != HURRAY_OK) return refused;
  // handles[4], the dlopen handle: dlsym the same Dawn's functions
  return kit::give_handles(out, {s->instance, d->adapter, d->device, d->queue, s->lib});
}

}  // namespace hurray::webgpu

extern "C" HURRAY_API const hurray_backend_v1 *hurray_backend_entry(void) {
  return &hurray::webgpu::kTable;
}
