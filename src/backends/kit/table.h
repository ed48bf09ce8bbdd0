// The plugin's table, written once: the entry functions by their
// conventional names, declared in the plugin's namespace, and the
// constant table that holds each behind the kit's exception barrier.
//
//   namespace hurray::myplugin {
//   HURRAY_KIT_DECLARE_ENTRIES()        // probe ... native, device_identity, release_after
//   HURRAY_KIT_DECLARE_IPC_ENTRIES()    // ipc_export_memory ... (optional)
//   HURRAY_KIT_TABLE(kTable, HURRAY_DEVICE_X, HURRAY_KIT_IPC_ENTRIES)
//   }
//   HURRAY_KIT_EXPORT(hurray::myplugin::kTable)
//
// free is spelled free_ (the name free is libc's). Every kit plugin has
// device_identity and release_after: they are declared and set here with
// the others. A plugin without IPC passes HURRAY_KIT_NO_IPC_ENTRIES: those
// entries stay NULL. A plugin's own optional entries (ipc_export_pointer)
// follow as more arguments, each one HURRAY_KIT_ENTRY(t, field, fn) (t is
// the table being built), declared by the plugin.
#pragma once

#include <hurray_backend.h>

#include "entry.h"

namespace hurray::kit {

// device_count() of a plugin whose State holds its devices in `devices`.
template <class State>
int32_t count_devices(void *state) noexcept {
  const auto *s = static_cast<const State *>(state);
  return s == nullptr ? 0 : static_cast<int32_t>(s->devices.size());
}

}  // namespace hurray::kit

#define HURRAY_KIT_DECLARE_ENTRIES()                                                            \
  hurray_status probe(void **state, hurray_error *err);                                        \
  void shutdown(void *state);                                                                   \
  int32_t device_count(void *state);                                                            \
  hurray_status device_info(void *state, int32_t device, hurray_backend_device_info *out,     \
                            hurray_error *err);                                                 \
  hurray_status alloc(void *state, int32_t device, uint8_t memory_class, uint64_t byte_size,  \
                      uint32_t alignment, uint32_t flags, hurray_backend_allocation *out,      \
                      hurray_error *err);                                                       \
  void free_(void *state, hurray_backend_allocation *allocation);                              \
  hurray_status copy_to_host(void *state, const hurray_backend_allocation *src,               \
                             uint64_t offset, void *dst, uint64_t n, hurray_error *err);       \
  hurray_status copy_from_host(void *state, hurray_backend_allocation *dst, uint64_t offset,  \
                               const void *src, uint64_t n, hurray_error *err);                \
  hurray_status classify(void *state, const void *ptr, int32_t *device,                       \
                         uint8_t *memory_class, hurray_error *err);                             \
  hurray_status event_record(void *state, int32_t device, void *stream, void **event,         \
                             uint64_t *value, hurray_error *err);                               \
  hurray_status event_wait(void *state, int32_t device, void *event, uint64_t value,          \
                           void *stream, hurray_error *err);                                    \
  void event_release(void *state, int32_t device, void *event);                                \
  hurray_status native(void *state, int32_t device, hurray_backend_native *out,               \
                       hurray_error *err);                                                      \
  hurray_status device_identity(void *state, int32_t device,                                  \
                                hurray_backend_device_identity *out, hurray_error *err);       \
  hurray_status release_after(void *state, int32_t device, void *stream, void *event,         \
                              uint64_t value, void (*done)(void *), void *user,               \
                              hurray_error *err);

#define HURRAY_KIT_DECLARE_IPC_ENTRIES()                                                   \
  hurray_status ipc_export_memory(void *state, const hurray_backend_allocation *allocation, \
                                  hurray_backend_ipc_handle *out, hurray_error *err);       \
  hurray_status ipc_import_memory(void *state, int32_t device,                            \
                                  const hurray_backend_ipc_handle *handle,                \
                                  uint8_t memory_class, hurray_backend_allocation *out,   \
                                  hurray_error *err);                                      \
  hurray_status ipc_export_event(void *state, int32_t device, void *event,                \
                                 hurray_backend_ipc_handle *out, hurray_error *err);       \
  hurray_status ipc_import_event(void *state, int32_t device,                             \
                                 const hurray_backend_ipc_handle *handle, void **event,   \
                                 hurray_error *err);

// Each listed entry behind the barrier: HURRAY_KIT_ENTRY(t, field, field),
// except free, whose function is free_.
#define HURRAY_KIT_SET_(t, field) HURRAY_KIT_ENTRY(t, field, field);
#define HURRAY_KIT_IPC_ENTRIES(t)                                       \
  HURRAY_KIT_SET_(t, ipc_export_memory) HURRAY_KIT_SET_(t, ipc_import_memory) \
  HURRAY_KIT_SET_(t, ipc_export_event) HURRAY_KIT_SET_(t, ipc_import_event)
#define HURRAY_KIT_NO_IPC_ENTRIES(t)

// constinit const hurray_backend_v1 name: every entry behind the barrier.
#define HURRAY_KIT_TABLE(name, device_tag, ipc_entries, ...)                             \
  constinit const hurray_backend_v1 name = [] {                                         \
    hurray_backend_v1 t = ::hurray::kit::make_table(device_tag);                        \
    HURRAY_KIT_SET_(t, probe) HURRAY_KIT_SET_(t, shutdown) HURRAY_KIT_SET_(t, device_count) \
    HURRAY_KIT_SET_(t, device_info) HURRAY_KIT_SET_(t, alloc) HURRAY_KIT_ENTRY(t, free, free_); \
    HURRAY_KIT_SET_(t, copy_to_host) HURRAY_KIT_SET_(t, copy_from_host)                 \
    HURRAY_KIT_SET_(t, classify) HURRAY_KIT_SET_(t, event_record)                       \
    HURRAY_KIT_SET_(t, event_wait) HURRAY_KIT_SET_(t, event_release)                    \
    ipc_entries(t) HURRAY_KIT_SET_(t, native)                                           \
    HURRAY_KIT_SET_(t, device_identity) HURRAY_KIT_SET_(t, release_after)               \
    __VA_ARGS__;                                                                        \
    return t;                                                                           \
  }();

// The plugin's one exported symbol, returning &table.
#define HURRAY_KIT_EXPORT(table)                                                     \
  extern "C" __attribute__((visibility("default"))) const hurray_backend_v1 *       \
  hurray_backend_entry(void) {                                                       \
    return &(table);                                                                 \
  }
