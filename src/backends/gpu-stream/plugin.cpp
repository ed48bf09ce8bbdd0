// The GPU stream driver: native handles and the table behind
// hurray_backend_entry, every entry behind the kit's exception barrier.
#include "driver.h"

namespace hurray::gpu_stream {

using hurray::kit::kPlugin;

int32_t device_count(void *state) { return hurray::kit::count_devices<State>(state); }

hurray_status native(void *state, int32_t device, hurray_backend_native *out,
                     hurray_error *err) {
  auto [refused, s, d] = kit::enter_out<const State>(state, device, out, err, "native: out");
  if (refused != HURRAY_OK) return refused;
  out->handles[0] = rt::native_device(d->ref);
  out->handles[1] = rt::native_context(d->ref);
  out->handles[2] = d->stream;
  out->handles[3] = d->stream;
  out->handles[4] = s->lib;
  return HURRAY_OK;
}

HURRAY_KIT_TABLE(kTable, rt::kDeviceTag, HURRAY_KIT_IPC_ENTRIES,
                 HURRAY_KIT_ENTRY(t, ipc_export_pointer, ipc_export_pointer))

}  // namespace hurray::gpu_stream

HURRAY_KIT_EXPORT(hurray::gpu_stream::kTable)
