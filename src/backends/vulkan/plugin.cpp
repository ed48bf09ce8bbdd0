// The Vulkan plugin: the C entry points and the table behind hurray_backend_entry.
#include "kit/table.h"
#include "state.h"

namespace hurray::vulkan {

// ------------------------------------------------------- the C table ----

hurray_status probe(void **state, hurray_error *err) {
  return probe_impl(state, err);
}

void shutdown(void *state) {
  delete state_of(state);
}

int32_t device_count(void *state) { return hurray::kit::count_devices<State>(state); }

hurray_status device_info(void *state, int32_t device, hurray_backend_device_info *out,
                             hurray_error *err) {
  auto [refused, s, d] = kit::enter_out<State>(state, device, out, err, "device_info: out");
  if (refused != HURRAY_OK) return refused;
  std::snprintf(out->name, sizeof out->name, "%.127s", d->props.deviceName);
  for (int c = 0; c < kClassCount; ++c)
    if (d->class_type[c] >= 0) out->memory_classes |= 1u << c;
  out->ipc = (d->ipc_memory ? HURRAY_BACKEND_IPC_MEMORY : 0u) |
             (d->ipc_events ? static_cast<uint32_t>(HURRAY_BACKEND_IPC_EVENTS) : 0u);
  out->min_alignment = HURRAY_MIN_ALIGNMENT;
  std::snprintf(out->detail, sizeof out->detail, "%s", d->detail.c_str());
  return HURRAY_OK;
}

hurray_status alloc(void *state, int32_t device, uint8_t memory_class, uint64_t byte_size,
                       uint32_t alignment, uint32_t flags, hurray_backend_allocation *out,
                       hurray_error *err) {
  auto [refused, s, d] = kit::enter<State>(state, device, err, "alloc: out", out);
  if (refused != HURRAY_OK) return refused;
  return alloc_impl(*s, d, memory_class, byte_size, alignment, flags, out, err);
}

hurray_status copy_to_host(void *, const hurray_backend_allocation *src, uint64_t offset,
                              void *dst, uint64_t n, hurray_error *err) {
  return copy_impl(src, offset, dst, n, true, err);
}

hurray_status copy_from_host(void *, hurray_backend_allocation *dst, uint64_t offset,
                                const void *src, uint64_t n, hurray_error *err) {
  return copy_impl(dst, offset, const_cast<void *>(src), n, false, err);
}

hurray_status classify(void *state, const void *ptr, int32_t *device, uint8_t *memory_class,
                          hurray_error *err) {
  State *s = state_of(state);
  if (!s || !ptr) return refuse(err, HURRAY_E_INVALID_ARGUMENT, "classify: NULL argument");
  const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(s->reg_mu);
  auto it = s->registry.upper_bound(p);
  while (it != s->registry.begin()) {
    --it;
    if (p < it->second.end) {
      const Allocation &a = *it->second.allocation;
      if (device) *device = a.dev->ordinal;
      if (memory_class) *memory_class = a.cls;
      return HURRAY_OK;
    }
    if (it->first != p) break;
  }
  return refuse(err, HURRAY_E_INVALID_ARGUMENT, "classify: %p is not memory of the vulkan backend",
                ptr);
}

hurray_status event_record(void *state, int32_t device, void *stream, void **event,
                              uint64_t *value, hurray_error *err) {
  auto [refused, s, d] = kit::enter<State>(state, device, err, "event_record: event and value",
                                           event, value);
  if (refused != HURRAY_OK) return refused;
  return event_record_impl(d, stream, event, value, err);
}

hurray_status event_wait(void *state, int32_t device, void *event, uint64_t value,
                            void *stream, hurray_error *err) {
  auto [refused, s, d] = kit::enter<State>(state, device, err, "event_wait: event", event);
  if (refused != HURRAY_OK) return refused;
  return event_wait_impl(d, event, value, stream, err);
}

void event_release(void *state, int32_t device, void *event) {
  if (State *s = state_of(state)) event_release_impl(*s, device, event);
}

hurray_status ipc_export_memory(void *state, const hurray_backend_allocation *allocation,
                                   hurray_backend_ipc_handle *out, hurray_error *err) {
  State *s = state_of(state);
  if (!s) return refuse(err, HURRAY_E_INVALID_ARGUMENT, "ipc_export_memory: no state");
  return ipc_export_memory_impl(*s, allocation, out, err);
}

hurray_status ipc_import_memory(void *state, int32_t device,
                                   const hurray_backend_ipc_handle *handle,
                                   uint8_t memory_class, hurray_backend_allocation *out,
                                   hurray_error *err) {
  auto [refused, s, d] = kit::enter<State>(state, device, err, "ipc_import_memory: handle and out",
                                           handle, out);
  if (refused != HURRAY_OK) return refused;
  return ipc_import_memory_impl(*s, d, handle, memory_class, out, err);
}

hurray_status ipc_export_event(void *state, int32_t device, void *event,
                                  hurray_backend_ipc_handle *out, hurray_error *err) {
  auto [refused, s, d] = kit::enter<State>(state, device, err, "ipc_export_event: event and out",
                                           event, out);
  if (refused != HURRAY_OK) return refused;
  return ipc_export_event_impl(d, event, out, err);
}

hurray_status ipc_import_event(void *state, int32_t device,
                                  const hurray_backend_ipc_handle *handle, void **event,
                                  hurray_error *err) {
  auto [refused, s, d] = kit::enter<State>(state, device, err, "ipc_import_event: handle and event",
                                           handle, event);
  if (refused != HURRAY_OK) return refused;
  return ipc_import_event_impl(d, handle, event, err);
}

hurray_status native(void *state, int32_t device, hurray_backend_native *out,
                        hurray_error *err) {
  auto [refused, s, d] = kit::enter_out<State>(state, device, out, err, "native: out");
  if (refused != HURRAY_OK) return refused;
  out->handles[0] = to_ptr(s->instance);
  out->handles[1] = to_ptr(d->phys);
  out->handles[2] = to_ptr(d->dev);
  out->handles[3] = to_ptr(d->queue);
  out->handles[4] = reinterpret_cast<void *>(static_cast<uintptr_t>(d->family));
  static_assert(sizeof(s->loader.vkGetInstanceProcAddr) == sizeof(void *));
  std::memcpy(&out->handles[5], &s->loader.vkGetInstanceProcAddr, sizeof(void *));
  std::lock_guard<std::mutex> lock(d->mu);
  out->handles[6] = to_ptr(d->timelines.front().semaphore);
  return HURRAY_OK;
}

constinit const hurray_backend_v1 kTable = kit_table<kit::Ipc::kEntries>(HURRAY_DEVICE_VULKAN);

}  // namespace hurray::vulkan

extern "C" HURRAY_API const hurray_backend_v1 *hurray_backend_entry(void) {
  return &hurray::vulkan::kTable;
}
