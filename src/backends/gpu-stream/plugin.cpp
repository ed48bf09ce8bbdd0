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
  return kit::give_handles(out, {rt::native_device(d->ref), rt::native_context(d->ref),
                                 d->stream, d->stream, s->lib});
}

constinit const hurray_backend_v1 kTable = [] {
  hurray_backend_v1 t = kit_table<kit::Ipc::kEntries>(rt::kDeviceTag);
  t.ipc_export_pointer = kit::barrier<&ipc_export_pointer, "ipc_export_pointer">;
  return t;
}();

}  // namespace hurray::gpu_stream

extern "C" HURRAY_API const hurray_backend_v1 *hurray_backend_entry(void) {
  return &hurray::gpu_stream::kTable;
}
