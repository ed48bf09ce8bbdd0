// The WebGPU plugin: native handles and the table behind hurray_backend_entry.
#include "state.h"

namespace hurray::webgpu {

hurray_status native(void *state, int32_t device, hurray_backend_native *out,
                     hurray_error *err) {
  auto [refused, s, d] = kit::enter_out<const State>(state, device, out, err, "native: out");
  if (refused != HURRAY_OK) return refused;
  out->handles[0] = s->instance;
  out->handles[1] = d->adapter;
  out->handles[2] = d->device;
  out->handles[3] = d->queue;
  out->handles[4] = s->lib;  // the dlopen handle: dlsym the same Dawn's functions
  return HURRAY_OK;
}

constinit const hurray_backend_v1 kTable = kit_table<kit::Ipc::kNone>(HURRAY_DEVICE_WEBGPU);

}  // namespace hurray::webgpu

extern "C" HURRAY_API const hurray_backend_v1 *hurray_backend_entry(void) {
  return &hurray::webgpu::kTable;
}
