// The GPU stream driver: native handles and the table behind
// hurray_backend_entry, every entry behind the kit's exception barrier.
#include "driver.h"

namespace hurray::gpu_stream {

using hurray::kit::kPlugin;

hurray_status native(void *state, int32_t device, hurray_backend_native *out,
                     hurray_error *err) {
  const auto *s = static_cast<const State *>(state);
  Device *d = nullptr;
  if (const hurray_status st = get_device(s, device, &d, err)) return st;
  if (out == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "%s: native: out must not be NULL", kPlugin);
  std::memset(out, 0, sizeof *out);
  out->handles[0] = rt::native_device(d->ref);
  out->handles[1] = rt::native_context(d->ref);
  out->handles[2] = d->stream;
  out->handles[3] = d->stream;
  out->handles[4] = s->lib;
  return HURRAY_OK;
}

namespace {

constexpr hurray_backend_v1 make_table() noexcept {
  hurray_backend_v1 t = hurray::kit::make_table(rt::kDeviceTag);
  HURRAY_KIT_ENTRY(t, probe, probe);
  HURRAY_KIT_ENTRY(t, shutdown, shutdown);
  HURRAY_KIT_ENTRY(t, device_count, device_count);
  HURRAY_KIT_ENTRY(t, device_info, device_info);
  HURRAY_KIT_ENTRY(t, alloc, alloc);
  HURRAY_KIT_ENTRY(t, free, free_);
  HURRAY_KIT_ENTRY(t, copy_to_host, copy_to_host);
  HURRAY_KIT_ENTRY(t, copy_from_host, copy_from_host);
  HURRAY_KIT_ENTRY(t, classify, classify);
  HURRAY_KIT_ENTRY(t, event_record, event_record);
  HURRAY_KIT_ENTRY(t, event_wait, event_wait);
  HURRAY_KIT_ENTRY(t, event_release, event_release);
  HURRAY_KIT_ENTRY(t, ipc_export_memory, ipc_export_memory);
  HURRAY_KIT_ENTRY(t, ipc_import_memory, ipc_import_memory);
  HURRAY_KIT_ENTRY(t, ipc_export_event, ipc_export_event);
  HURRAY_KIT_ENTRY(t, ipc_import_event, ipc_import_event);
  HURRAY_KIT_ENTRY(t, native, native);
  return t;
}

constinit const hurray_backend_v1 kTable = make_table();

}  // namespace

}  // namespace hurray::gpu_stream

extern "C" __attribute__((visibility("default"))) const hurray_backend_v1 *hurray_backend_entry(
    void) {
  return &hurray::gpu_stream::kTable;
}
