// The entry functions of a kit plugin and its table, written once for every
// plugin. This header declares into the namespace that includes it: the
// plugin's own header includes it once, inside the plugin's namespace, after
// kit/table.h (see there). No #pragma once on purpose; nothing else may
// include it.
//
// Each function is the plugin's own (defined in its .cpp files); kit_table
// puts each behind the kit's barrier (kit::barrier, entry.h).

hurray_status probe(void **state, hurray_error *err);
void shutdown(void *state);
int32_t device_count(void *state);
hurray_status device_info(void *state, int32_t device, hurray_backend_device_info *out,
                          hurray_error *err);
hurray_status alloc(void *state, int32_t device, uint8_t memory_class, uint64_t byte_size,
                    uint32_t alignment, uint32_t flags, hurray_backend_allocation *out,
                    hurray_error *err);
void free_(void *state, hurray_backend_allocation *allocation);
hurray_status copy_to_host(void *state, const hurray_backend_allocation *src, uint64_t offset,
                           void *dst, uint64_t n, hurray_error *err);
hurray_status copy_from_host(void *state, hurray_backend_allocation *dst, uint64_t offset,
                             const void *src, uint64_t n, hurray_error *err);
hurray_status classify(void *state, const void *ptr, int32_t *device, uint8_t *memory_class,
                       hurray_error *err);
hurray_status event_record(void *state, int32_t device, void *stream, void **event,
                           uint64_t *value, hurray_error *err);
hurray_status event_wait(void *state, int32_t device, void *event, uint64_t value, void *stream,
                         hurray_error *err);
void event_release(void *state, int32_t device, void *event);
hurray_status native(void *state, int32_t device, hurray_backend_native *out, hurray_error *err);
hurray_status device_identity(void *state, int32_t device, hurray_backend_device_identity *out,
                              hurray_error *err);
hurray_status release_after(void *state, int32_t device, void *stream, void *event,
                            uint64_t value, void (*done)(void *), void *user, hurray_error *err);

// The IPC entries: defined only by a plugin whose table has them
// (kit::Ipc::kEntries).
hurray_status ipc_export_memory(void *state, const hurray_backend_allocation *allocation,
                                hurray_backend_ipc_handle *out, hurray_error *err);
hurray_status ipc_import_memory(void *state, int32_t device,
                                const hurray_backend_ipc_handle *handle, uint8_t memory_class,
                                hurray_backend_allocation *out, hurray_error *err);
hurray_status ipc_export_event(void *state, int32_t device, void *event,
                               hurray_backend_ipc_handle *out, hurray_error *err);
hurray_status ipc_import_event(void *state, int32_t device,
                               const hurray_backend_ipc_handle *handle, void **event,
                               hurray_error *err);

// The plugin's table: kit::make_table's head for device_tag and every entry
// above behind the barrier, the IPC entries only with Ipc::kEntries.
template <::hurray::kit::Ipc WithIpc>
constexpr hurray_backend_v1 kit_table(uint8_t device_tag) noexcept {
  using ::hurray::kit::barrier;
  hurray_backend_v1 t = ::hurray::kit::make_table(device_tag);
  t.probe = barrier<&probe, "probe">;
  t.shutdown = barrier<&shutdown, "shutdown">;
  t.device_count = barrier<&device_count, "device_count">;
  t.device_info = barrier<&device_info, "device_info">;
  t.alloc = barrier<&alloc, "alloc">;
  t.free = barrier<&free_, "free">;
  t.copy_to_host = barrier<&copy_to_host, "copy_to_host">;
  t.copy_from_host = barrier<&copy_from_host, "copy_from_host">;
  t.classify = barrier<&classify, "classify">;
  t.event_record = barrier<&event_record, "event_record">;
  t.event_wait = barrier<&event_wait, "event_wait">;
  t.event_release = barrier<&event_release, "event_release">;
  t.native = barrier<&native, "native">;
  t.device_identity = barrier<&device_identity, "device_identity">;
  t.release_after = barrier<&release_after, "release_after">;
  if constexpr (WithIpc == ::hurray::kit::Ipc::kEntries) {
    t.ipc_export_memory = barrier<&ipc_export_memory, "ipc_export_memory">;
    t.ipc_import_memory = barrier<&ipc_import_memory, "ipc_import_memory">;
    t.ipc_export_event = barrier<&ipc_export_event, "ipc_export_event">;
    t.ipc_import_event = barrier<&ipc_import_event, "ipc_import_event">;
  }
  return t;
}
