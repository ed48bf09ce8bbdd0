// The Level Zero plugin: IPC export and import of memory and events.
#include "state.h"

namespace hurray::level_zero {

// ---- IPC ------------------------------------------------------------------

hurray_status ipc_export_memory(void *state, const hurray_backend_allocation *allocation,
                                hurray_backend_ipc_handle *out, hurray_error *err) {
  auto *s = static_cast<State *>(state);
  if (s == nullptr || allocation == nullptr || out == nullptr)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT, "ipc_export_memory: NULL argument");
  const auto *a = static_cast<const Allocation *>(allocation->plugin_data);
  if (a == nullptr || a->base == nullptr)
    return refuse(err, HURRAY_E_UNSUPPORTED,
                  "ipc_export_memory: an empty allocation has no memory to share");
  Device *d = nullptr;
  if (const hurray_status st = find_device(s, a->device, &d, err)) return st;
  if (!d->driver->ipc_memory())
    return refuse(err, HURRAY_E_UNSUPPORTED,
                  "ipc_export_memory: the driver of device %d '%s' does not share memory "
                  "between processes (zeDriverGetIpcProperties: no ZE_IPC_PROPERTY_FLAG_MEMORY)",
                  static_cast<int>(a->device), d->name.c_str());
  if (!is_device_class(a->memory_class))
    return refuse(err, HURRAY_E_UNSUPPORTED,
                  "ipc_export_memory: %s memory cannot be exported: Level Zero exports "
                  "device allocations only (STANDARD, PEER)",
                  class_name(a->memory_class));
  if (a->imported)
    return refuse(err, HURRAY_E_UNSUPPORTED,
                  "ipc_export_memory: memory imported from another process cannot be "
                  "exported again");
  ze_ipc_mem_handle_t h{};
  const ze_result_t r = s->ze.zeMemGetIpcHandle(d->driver->context, a->base, &h);
  if (r != ZE_RESULT_SUCCESS)
    return code_fail(err, HURRAY_OK, "zeMemGetIpcHandle", ze_code(r),
                     "%llu bytes on device %d '%s'", static_cast<unsigned long long>(a->byte_size),
                     static_cast<int>(a->device), d->name.c_str());
  int fd = -1;
  if (const hurray_status st = export_fd(h.data, &fd, err)) return st;
  std::memset(out, 0, sizeof *out);
  out->kind = kIpcMemoryKind;
  out->fd = fd;
  out->byte_size = a->byte_size;
  out->offset = static_cast<uint64_t>(static_cast<const char *>(a->ptr) -
                                      static_cast<const char *>(a->base));
  static_assert(sizeof h.data == sizeof out->bytes, "a ze_ipc_mem_handle_t fills bytes");
  std::memcpy(out->bytes, h.data, sizeof out->bytes);
  return HURRAY_OK;
}

hurray_status ipc_import_memory(void *state, int32_t device,
                                const hurray_backend_ipc_handle *handle, uint8_t memory_class,
                                hurray_backend_allocation *out, hurray_error *err) {
  auto [refused, s, d] = kit::enter_out<State>(state, device, out, err,
                                               "ipc_import_memory: handle and out", handle);
  if (refused != HURRAY_OK) return refused;
  if (const hurray_status st = hurray::kit::check_kind(handle, kIpcMemoryKind, "ipc_import_memory",
                                                       "a Level Zero memory handle", err))
    return st;
  if (const hurray_status st = check_class(*d, memory_class, err)) return st;
  if (const hurray_status st = check_shareable(*d, memory_class, "ipc_import_memory", err))
    return st;
  if (handle->byte_size == 0 || handle->offset > UINT64_MAX - handle->byte_size)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT,
                  "ipc_import_memory: %llu bytes at offset %llu is not a range to map",
                  static_cast<unsigned long long>(handle->byte_size),
                  static_cast<unsigned long long>(handle->offset));
  ze_ipc_mem_handle_t h{};
  std::memcpy(h.data, handle->bytes, sizeof h.data);
  int fd = -1;
  if (const hurray_status st = import_fd(handle->fd, h.data, &fd, "ipc_import_memory", err))
    return st;
  void *base = nullptr;
  const ze_result_t r = s->ze.zeMemOpenIpcHandle(d->driver->context, d->handle, h, 0, &base);
  if (r != ZE_RESULT_SUCCESS || base == nullptr) {
    if (fd >= 0) close(fd);
    if (r != ZE_RESULT_SUCCESS)
      return code_fail(err, HURRAY_OK, "zeMemOpenIpcHandle", ze_code(r), "on device %d '%s'",
                       static_cast<int>(device), d->name.c_str());
    return fail(err, HURRAY_E_BACKEND,
                "[zeMemOpenIpcHandle] ZE_RESULT_SUCCESS but no pointer: on device %d '%s'",
                static_cast<int>(device), d->name.c_str());
  }
  auto a = std::make_unique<Allocation>();
  a->device = device;
  a->memory_class = memory_class;
  a->byte_size = handle->byte_size;
  a->imported = true;
  a->ipc_fd = fd;
  a->base = base;
  a->ptr = static_cast<char *>(base) + handle->offset;
  const uint64_t al = alignment_of(a->ptr);
  if (al < HURRAY_MIN_ALIGNMENT) {
    release_memory(s, a.get());
    return refuse(err, HURRAY_E_ALIGNMENT,
                  "ipc_import_memory: the mapping starts at %p, aligned to %llu bytes "
                  "only (the protocol needs %d)",
                  a->ptr, static_cast<unsigned long long>(al), HURRAY_MIN_ALIGNMENT);
  }
  try {
    register_allocation(s, a.get());
  } catch (...) {
    release_memory(s, a.get());
    throw;
  }
  fill_out(*a, static_cast<uint32_t>(al), out);
  a.release();
  return HURRAY_OK;
}

hurray_status ipc_export_event(void *state, int32_t device, void *event,
                               hurray_backend_ipc_handle *out, hurray_error *err) {
  auto [refused, s, d] = kit::enter<State>(state, device, err, "ipc_export_event: event and out",
                                           event, out);
  if (refused != HURRAY_OK) return refused;
  if (!d->ipc_pools)
    return refuse(err, HURRAY_E_UNSUPPORTED,
                  "ipc_export_event: the driver of device %d '%s' does not share event "
                  "pools between processes (zeDriverGetIpcProperties: no "
                  "ZE_IPC_PROPERTY_FLAG_EVENT_POOL)",
                  static_cast<int>(device), d->name.c_str());
  ze_event_pool_handle_t pool = nullptr;
  uint32_t index = 0;
  {
    std::lock_guard<std::mutex> lock(d->mu);
    auto it = d->lent.find(static_cast<ze_event_handle_t>(event));
    if (it == d->lent.end())
      return refuse(err, HURRAY_E_UNSUPPORTED,
                    "ipc_export_event: only events made by event_record on device %d "
                    "'%s' (and not yet released) can be exported",
                    static_cast<int>(device), d->name.c_str());
    pool = d->pools[it->second.pool].handle;
    index = it->second.index;
  }
  ze_ipc_event_pool_handle_t h{};
  const ze_result_t r = s->ze.zeEventPoolGetIpcHandle(pool, &h);
  if (r != ZE_RESULT_SUCCESS)
    return code_fail(err, HURRAY_OK, "zeEventPoolGetIpcHandle", ze_code(r), "device %d '%s'",
                     static_cast<int>(device), d->name.c_str());
  int fd = -1;
  if (const hurray_status st = export_fd(h.data, &fd, err)) return st;
  std::memset(out, 0, sizeof *out);
  out->kind = kIpcEventKind;
  out->fd = fd;
  out->byte_size = 0;
  out->offset = index;  // the event's index in the pool
  static_assert(sizeof h.data == sizeof out->bytes, "a ze_ipc_event_pool_handle_t fills bytes");
  std::memcpy(out->bytes, h.data, sizeof out->bytes);
  return HURRAY_OK;
}

hurray_status ipc_import_event(void *state, int32_t device, const hurray_backend_ipc_handle *handle,
                               void **event, hurray_error *err) {
  auto [refused, s, d] = kit::enter<State>(state, device, err, "ipc_import_event: handle and event",
                                           handle, event);
  if (refused != HURRAY_OK) return refused;
  if (const hurray_status st = hurray::kit::check_kind(handle, kIpcEventKind, "ipc_import_event",
                                                       "a Level Zero event handle", err))
    return st;
  if (handle->offset >= UINT32_MAX)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT,
                  "ipc_import_event: event index %llu is out of range",
                  static_cast<unsigned long long>(handle->offset));
  if (!d->driver->ipc_events())
    return refuse(err, HURRAY_E_UNSUPPORTED,
                  "ipc_import_event: the driver of device %d '%s' does not share event "
                  "pools between processes (zeDriverGetIpcProperties: no "
                  "ZE_IPC_PROPERTY_FLAG_EVENT_POOL)",
                  static_cast<int>(device), d->name.c_str());
  const Api &ze = s->ze;
  ze_ipc_event_pool_handle_t h{};
  std::memcpy(h.data, handle->bytes, sizeof h.data);
  int fd = -1;
  if (const hurray_status st = import_fd(handle->fd, h.data, &fd, "ipc_import_event", err))
    return st;
  std::lock_guard<std::mutex> lock(d->mu);
  ze_event_pool_handle_t pool = nullptr;
  ze_result_t r = ze.zeEventPoolOpenIpcHandle(d->driver->context, h, &pool);
  if (r != ZE_RESULT_SUCCESS || pool == nullptr) {
    if (fd >= 0) close(fd);
    return code_fail(err, r != ZE_RESULT_SUCCESS ? HURRAY_OK : HURRAY_E_BACKEND,
                     "zeEventPoolOpenIpcHandle", ze_code(r), "device %d '%s'%s",
                     static_cast<int>(device), d->name.c_str(),
                     r == ZE_RESULT_SUCCESS ? " (no pool returned)" : "");
  }
  ze_event_desc_t ed{};
  ed.stype = ZE_STRUCTURE_TYPE_EVENT_DESC;
  ed.index = static_cast<uint32_t>(handle->offset);
  ed.signal = ZE_EVENT_SCOPE_FLAG_HOST;
  ed.wait = ZE_EVENT_SCOPE_FLAG_HOST;
  ze_event_handle_t ev = nullptr;
  r = ze.zeEventCreate(pool, &ed, &ev);
  if (r != ZE_RESULT_SUCCESS || ev == nullptr) {
    ze.zeEventPoolCloseIpcHandle(pool);
    if (fd >= 0) close(fd);
    return code_fail(err, r != ZE_RESULT_SUCCESS ? HURRAY_OK : HURRAY_E_BACKEND, "zeEventCreate",
                     ze_code(r), "event %u of an imported pool on device %d '%s'%s", ed.index,
                     static_cast<int>(device), d->name.c_str(),
                     r == ZE_RESULT_SUCCESS ? " (no event returned)" : "");
  }
  try {
    d->imported.emplace(ev, ImportedEvent{pool, fd});
  } catch (...) {
    ze.zeEventDestroy(ev);
    ze.zeEventPoolCloseIpcHandle(pool);
    if (fd >= 0) close(fd);
    throw;
  }
  *event = ev;
  return HURRAY_OK;
}

}  // namespace hurray::level_zero
