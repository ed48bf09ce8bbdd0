// The Vulkan plugin: IPC export and import of memory and events (OPAQUE_FD).
#include "state.h"

namespace hurray::vulkan {

// ----------------------------------------------------------------- IPC ----

constexpr uint32_t kIpcMemoryKind =
    hurray::kit::fourcc('V', 'K', 'M', '1');  // OPAQUE_FD VkDeviceMemory
constexpr uint32_t kIpcEventKind =
    hurray::kit::fourcc('V', 'K', 'E', '1');  // OPAQUE_FD timeline VkSemaphore
constexpr uint32_t kIpcMagic = 0x4b565648u;  // "HVVK"

// What travels in hurray_backend_ipc_handle::bytes.
struct IpcBytes {
  uint32_t magic;
  uint32_t memory_type;
  uint64_t allocation_size;
  uint64_t buffer_size;
  uint32_t alignment;
  uint8_t memory_class;
  uint8_t dedicated;
  uint8_t pad[2];
  uint8_t device_uuid[VK_UUID_SIZE];
  uint8_t driver_uuid[VK_UUID_SIZE];
};
static_assert(sizeof(IpcBytes) <= sizeof(hurray_backend_ipc_handle::bytes));

hurray_status ipc_export_memory_impl(State &, const hurray_backend_allocation *alloc,
                                     hurray_backend_ipc_handle *out, hurray_error *err) {
  if (!alloc || !out)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT, "ipc_export_memory: NULL argument");
  if (!alloc->plugin_data)
    return refuse(err, HURRAY_E_UNSUPPORTED,
                  "ipc_export_memory: an empty allocation has no memory to share");
  const Allocation &a = *static_cast<const Allocation *>(alloc->plugin_data);
  Device &d = *a.dev;
  if (!a.exportable)
    return refuse(err, HURRAY_E_UNSUPPORTED,
                  "ipc_export_memory: the %s allocation on %s was not made with "
                  "HURRAY_ALLOC_SHAREABLE",
                  class_name(a.cls), d.label.c_str());
  VkMemoryGetFdInfoKHR gi{};
  gi.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR;
  gi.memory = a.memory;
  gi.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  int fd = -1;
  const VkResult r = d.fn.vkGetMemoryFdKHR(d.dev, &gi, &fd);
  if (r != VK_SUCCESS)
    return vk_fail(err, status_of(r), "vkGetMemoryFdKHR", r, "%s", d.label.c_str());
  std::memset(out, 0, sizeof *out);
  out->kind = kIpcMemoryKind;
  out->fd = fd;
  out->byte_size = a.byte_size;
  out->offset = a.offset;
  IpcBytes b{};
  b.magic = kIpcMagic;
  b.memory_type = a.type;
  b.allocation_size = a.size;
  b.buffer_size = a.buffer_size;
  b.alignment = a.alignment;
  b.memory_class = a.cls;
  b.dedicated = a.dedicated ? 1 : 0;
  std::memcpy(b.device_uuid, d.device_uuid, VK_UUID_SIZE);
  std::memcpy(b.driver_uuid, d.driver_uuid, VK_UUID_SIZE);
  std::memcpy(out->bytes, &b, sizeof b);
  return HURRAY_OK;
}

// What both imports check first: the device imports this kind at all
// (UNSUPPORTED with the reason), then the handle is of the kind, carries
// the plugin's mark and an fd, and comes from this device and driver.
hurray_status check_ipc_handle(const Device &d, const hurray_backend_ipc_handle *h,
                               uint32_t kind, IpcBytes *b, const char *what,
                               hurray_error *err) {
  const bool memory = kind == kIpcMemoryKind;
  if (!(memory ? d.ipc_memory : d.ipc_events))
    return refuse(err, HURRAY_E_UNSUPPORTED, "%s: %s cannot import %s: %s", what, d.label.c_str(),
                  memory ? "memory" : "events",
                  (memory ? d.ipc_memory_why : d.ipc_events_why).c_str());
  if (const hurray_status st = hurray::kit::check_kind(
          h, kind, what,
          kind == kIpcMemoryKind ? "a Vulkan memory handle" : "a Vulkan event handle", err))
    return st;
  std::memcpy(b, h->bytes, sizeof *b);
  if (b->magic != kIpcMagic)
    return refuse(
        err, HURRAY_E_INVALID_ARGUMENT,
        "%s: not a Vulkan %s handle of the vulkan backend (its bytes lack the plugin's mark)", what,
        kind == kIpcMemoryKind ? "memory" : "event");
  if (h->fd < 0) return refuse(err, HURRAY_E_INVALID_ARGUMENT, "%s: the handle has no fd", what);
  if (std::memcmp(b->device_uuid, d.device_uuid, VK_UUID_SIZE) != 0 ||
      std::memcmp(b->driver_uuid, d.driver_uuid, VK_UUID_SIZE) != 0)
    return refuse(err, HURRAY_E_UNSUPPORTED,
                  "%s: the handle comes from another Vulkan device or driver than %s (device "
                  "or driver UUID differs)",
                  what, d.label.c_str());
  return HURRAY_OK;
}

hurray_status ipc_import_memory_impl(State &s, Device *d, const hurray_backend_ipc_handle *h,
                                     uint8_t cls, hurray_backend_allocation *out,
                                     hurray_error *err) {
  const char *what = "ipc_import_memory";
  IpcBytes b{};
  if (const hurray_status st = check_ipc_handle(*d, h, kIpcMemoryKind, &b, what, err)) return st;
  if (cls >= kClassCount)
    return check_class(*d, cls, err);
  if (b.memory_type >= d->mem.memoryTypeCount ||
      !type_serves(cls, d->mem.memoryTypes[b.memory_type].propertyFlags))
    return refuse(err, HURRAY_E_MEMORY_CLASS,
                  "%s: the exported memory (type %u, exported as %s) cannot serve memory class "
                  "%s on %s",
                  what, b.memory_type, class_name(b.memory_class), class_name(cls),
                  d->label.c_str());
  if (h->offset > b.buffer_size || h->byte_size > b.buffer_size - h->offset ||
      b.buffer_size > b.allocation_size)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT,
                  "%s: bytes [%llu, +%llu) lie outside the %llu-byte exported buffer", what,
                  static_cast<unsigned long long>(h->offset),
                  static_cast<unsigned long long>(h->byte_size),
                  static_cast<unsigned long long>(b.buffer_size));
  if (!class_mapped(cls) && h->offset != 0)
    return refuse(err, HURRAY_E_UNSUPPORTED, "%s: an opaque %s import cannot start at offset %llu",
                  what, class_name(cls), static_cast<unsigned long long>(h->offset));

  FdGuard fd{fcntl(h->fd, F_DUPFD_CLOEXEC, 0)};
  if (fd.fd < 0)
    return refuse(err, HURRAY_E_IO, "%s: dup of fd %d failed: %s", what, h->fd,
                  std::strerror(errno));
  auto a = std::make_unique<Allocation>();
  a->dev = d;
  a->cls = cls;
  a->byte_size = h->byte_size;
  a->exportable = true;
  a->dedicated = b.dedicated != 0;
  struct Cleanup {
    Allocation *a;
    ~Cleanup() {
      if (a) a->destroy();
    }
  } cleanup{a.get()};
  if (const hurray_status st = make_memory(*d, *a, b.buffer_size, true, fd.fd, b.allocation_size,
                                           static_cast<int>(b.memory_type), err);
      st != HURRAY_OK) {
    if (a->memory) fd.release();  // Vulkan owns it once the import succeeded
    return st;
  }
  fd.release();
  a->offset = h->offset;
  if (a->base) {
    // The exporter's alignment holds here only as far as this mapping allows.
    const uintptr_t data = reinterpret_cast<uintptr_t>(a->base) + a->offset;
    uint32_t al = b.alignment ? b.alignment : HURRAY_MIN_ALIGNMENT;
    while (al > 1 && data % al) al >>= 1;
    a->alignment = al;
  } else {
    a->alignment = b.alignment ? b.alignment : HURRAY_MIN_ALIGNMENT;
  }
  fill_out(*a, d->ordinal, out);
  register_allocation(s, a.get(), *out);
  cleanup.a = nullptr;
  a.release();
  return HURRAY_OK;
}

hurray_status ipc_export_event_impl(Device *d, void *event, hurray_backend_ipc_handle *out,
                                    hurray_error *err) {
  if (!d->ipc_events)
    return refuse(err, HURRAY_E_UNSUPPORTED,
                  "ipc_export_event: %s cannot share events with other processes: %s",
                  d->label.c_str(), d->ipc_events_why.c_str());
  const VkSemaphore sem = from_ptr<VkSemaphore>(event);
  {
    std::lock_guard<std::mutex> lock(d->mu);
    bool ours = false;
    for (const Timeline &t : d->timelines) ours = ours || t.semaphore == sem;
    if (!ours)
      return refuse(err, HURRAY_E_UNSUPPORTED,
                    "ipc_export_event: only timelines made by event_record on %s can be exported",
                    d->label.c_str());
  }
  VkSemaphoreGetFdInfoKHR gi{};
  gi.sType = VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR;
  gi.semaphore = sem;
  gi.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
  int fd = -1;
  const VkResult r = d->fn.vkGetSemaphoreFdKHR(d->dev, &gi, &fd);
  if (r != VK_SUCCESS)
    return vk_fail(err, status_of(r), "vkGetSemaphoreFdKHR", r, "%s", d->label.c_str());
  std::memset(out, 0, sizeof *out);
  out->kind = kIpcEventKind;
  out->fd = fd;
  IpcBytes b{};
  b.magic = kIpcMagic;
  std::memcpy(b.device_uuid, d->device_uuid, VK_UUID_SIZE);
  std::memcpy(b.driver_uuid, d->driver_uuid, VK_UUID_SIZE);
  std::memcpy(out->bytes, &b, sizeof b);
  return HURRAY_OK;
}

hurray_status ipc_import_event_impl(Device *d, const hurray_backend_ipc_handle *h, void **event,
                                    hurray_error *err) {
  const char *what = "ipc_import_event";
  IpcBytes b{};
  if (const hurray_status st = check_ipc_handle(*d, h, kIpcEventKind, &b, what, err)) return st;
  FdGuard fd{fcntl(h->fd, F_DUPFD_CLOEXEC, 0)};
  if (fd.fd < 0)
    return refuse(err, HURRAY_E_IO, "%s: dup of fd %d failed: %s", what, h->fd,
                  std::strerror(errno));
  const VkSemaphoreTypeCreateInfo type = timeline_type();
  VkSemaphoreCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  ci.pNext = &type;
  VkSemaphore sem = VK_NULL_HANDLE;
  VkResult r = d->fn.vkCreateSemaphore(d->dev, &ci, nullptr, &sem);
  if (r != VK_SUCCESS)
    return vk_fail(err, status_of(r), "vkCreateSemaphore", r, "%s", what);
  VkImportSemaphoreFdInfoKHR ii{};
  ii.sType = VK_STRUCTURE_TYPE_IMPORT_SEMAPHORE_FD_INFO_KHR;
  ii.semaphore = sem;
  ii.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
  ii.fd = fd.fd;
  r = d->fn.vkImportSemaphoreFdKHR(d->dev, &ii);
  if (r != VK_SUCCESS) {
    d->fn.vkDestroySemaphore(d->dev, sem, nullptr);
    return vk_fail(err, status_of(r), "vkImportSemaphoreFdKHR", r, "%s", d->label.c_str());
  }
  fd.release();  // owned by the semaphore now
  std::lock_guard<std::mutex> lock(d->mu);
  d->imported.push_back(sem);
  *event = to_ptr(sem);
  return HURRAY_OK;
}

}  // namespace hurray::vulkan
