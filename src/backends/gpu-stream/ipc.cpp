// The GPU stream driver: IPC. Device memory (STANDARD, PEER) is exported by
// the runtime's 64-byte handle of its block, with the offset of the data in
// it, or, for VMM memory, by a file descriptor (vmm.cpp); events by their
// 64-byte handle. Handle kinds are the runtime's fourccs. A handle is opened
// once per allocation and process (ipc_wrapped.cpp).
#include <new>

#include "driver.h"
#include "ipc_parse.h"

namespace hurray::gpu_stream {

hurray_status ipc_export_memory(void *state, const hurray_backend_allocation *allocation,
                                hurray_backend_ipc_handle *out, hurray_error *err) {
  const auto *s = static_cast<const State *>(state);
  if (s == nullptr || allocation == nullptr || out == nullptr)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT,
                  "ipc_export_memory: state, allocation and out must not be NULL");
  const auto *a = static_cast<const Allocation *>(allocation->plugin_data);
  if (a == nullptr)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT,
                  "ipc_export_memory: an empty allocation (or one not made by this plugin) "
                  "has no memory to export");
  if (a->imported)
    return refuse(err, HURRAY_E_UNSUPPORTED,
                  "ipc_export_memory: memory imported from another process cannot be "
                  "exported again (export it from its owner)");
  if (host_visible(a->memory_class))
    return refuse(err, HURRAY_E_UNSUPPORTED, "ipc_export_memory: %s (STANDARD, PEER), not %s",
                  rt::kIpcExports, class_name(a->memory_class));
  Device *d = nullptr;
  if (const hurray_status st = find_device(s, a->device, &d, err)) return st;
  const Api &api = s->api;
  const rt::Current current(s->api, d->ref);
  if (const hurray_status st = check_current(current, s->api, *d, err)) return st;
  if (a->vmm_handle != 0)  // VMM memory (vmm.cpp): a file descriptor
    return vmm_export(s, *d, a->vmm_handle, a->vmm_size, a->byte_size, a->data - a->base, out,
                      err);
  rt::IpcMemHandle h;
  std::memset(&h, 0, sizeof h);
  const Result r = rt::ipc_get_mem(api, &h, a->base);
  if (r != rt::kSuccess)
    return rt_fail(err, api, HURRAY_OK, rt::kIpcGetMem, r, "%llu bytes on '%s'",
                   static_cast<unsigned long long>(a->byte_size), d->name.c_str());
  static_assert(sizeof h <= sizeof out->bytes, "an IPC memory handle is 64 bytes");
  hurray::kit::pack_ipc(rt::kIpcMemoryKind, &h, sizeof h, a->byte_size, a->data - a->base, out);
  return HURRAY_OK;
}

hurray_status ipc_import_memory(void *state, int32_t device,
                                const hurray_backend_ipc_handle *handle, uint8_t memory_class,
                                hurray_backend_allocation *out, hurray_error *err) {
  auto [refused, s, d] = kit::enter_out<State>(state, device, out, err, "ipc_import_memory: out");
  if (refused != HURRAY_OK) return refused;
  if (memory_class != HURRAY_MEMORY_STANDARD && memory_class != HURRAY_MEMORY_PEER)
    return refuse(err, HURRAY_E_UNSUPPORTED,
                  "ipc_import_memory: %s IPC memory is device memory: import it as STANDARD "
                  "or PEER, not %s",
                  rt::kVendor, class_name(memory_class));
  if (handle != nullptr && handle->kind == rt::kIpcVmmKind)
    return vmm_import(s, d, device, handle, memory_class, out, err);
  rt::IpcMemHandle h;  // checked before any vendor call (ipc_parse.cpp)
  if (const hurray_status st = parse_memory(handle, rt::kIpcMemoryKind, rt::kIpcMeaningMemory,
                                            &h, sizeof h, err))
    return st;
  const Api &api = s->api;
  const rt::Current current(s->api, d->ref);
  if (const hurray_status st = check_current(current, s->api, *d, err)) return st;
  uintptr_t base = 0;
  // opened once per allocation and process (ipc_wrapped.cpp)
  if (const hurray_status st = open_handle(s, *d, device, h, &base, err)) return st;
  uintptr_t range_base = 0;
  size_t range_size = 0;
  if (rt::mem_range(api, base, &range_base, &range_size)) {
    if (const hurray_status st = check_in_block(*handle, static_cast<uint64_t>(base - range_base),
                                                range_size, err)) {
      close_handle(s, device, base);
      return st;
    }
  }
  const Allocation a = imported_at(device, memory_class, *handle, base);
  return record(
      s, a, [](const State *st, const Allocation &r) { close_handle(st, r.device, r.base); }, out,
      err);
}

hurray_status ipc_export_event(void *state, int32_t device, void *event,
                               hurray_backend_ipc_handle *out, hurray_error *err) {
  auto [refused, s, d] = kit::enter<const State>(state, device, err,
                                                 "ipc_export_event: event and out", event, out);
  if (refused != HURRAY_OK) return refused;
  if (!d->ipc_events)
    return refuse(err, HURRAY_E_UNSUPPORTED,
                  "ipc_export_event: device %d '%s' cannot make interprocess events %s",
                  static_cast<int>(device), d->name.c_str(), rt::kNoIpcEvents);
  const Api &api = s->api;
  const rt::Current current(s->api, d->ref);
  if (const hurray_status st = check_current(current, s->api, *d, err)) return st;
  rt::IpcEventHandle h;
  std::memset(&h, 0, sizeof h);
  const Result r = rt::ipc_get_event(api, &h, static_cast<rt::Event>(event));
  if (r != rt::kSuccess)
    return rt_fail(err, api, HURRAY_OK, rt::ipc_get_event_name, r, "'%s'%s", d->name.c_str(),
                   rt::export_event_hint(r));
  static_assert(sizeof h <= sizeof out->bytes, "an IPC event handle is 64 bytes");
  hurray::kit::pack_ipc(rt::kIpcEventKind, &h, sizeof h, 0, 0, out);
  return HURRAY_OK;
}

hurray_status ipc_import_event(void *state, int32_t device,
                               const hurray_backend_ipc_handle *handle, void **event,
                               hurray_error *err) {
  auto [refused, s, d] = kit::enter<const State>(state, device, err, "ipc_import_event: event",
                                                 event);
  if (refused != HURRAY_OK) return refused;
  rt::IpcEventHandle h;
  if (const hurray_status st = hurray::kit::unpack_ipc(
          handle, rt::kIpcEventKind, "ipc_import_event", rt::kIpcMeaningEvent, &h, sizeof h, err))
    return st;
  const Api &api = s->api;
  const rt::Current current(s->api, d->ref);
  if (const hurray_status st = check_current(current, s->api, *d, err)) return st;
  rt::Event ev = nullptr;
  const Result r = rt::ipc_open_event(api, &ev, h);
  if (r != rt::kSuccess)
    return rt_fail(err, api, HURRAY_OK, rt::ipc_open_event_name, r, "on '%s'", d->name.c_str());
  *event = ev;
  return HURRAY_OK;
}

}  // namespace hurray::gpu_stream
