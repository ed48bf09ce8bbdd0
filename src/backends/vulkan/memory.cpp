// The Vulkan plugin: allocation and free.
#include "state.h"

namespace hurray::vulkan {

// -------------------------------------------------------------- alloc ----

// A buffer of `size` bytes and `usage` on d, shared by its queue families,
// exportable as OPAQUE_FD when external.
VkResult create_buffer(Device &d, uint64_t size, VkBufferUsageFlags usage, bool external,
                       VkBuffer *out) noexcept {
  auto ext = vk_struct<VkExternalMemoryBufferCreateInfo>(
      VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO);
  ext.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  auto bci = vk_struct<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                                           external ? &ext : nullptr);
  bci.size = size;
  bci.usage = usage;
  bci.sharingMode = d.sharing();
  bci.queueFamilyIndexCount = static_cast<uint32_t>(d.families.size());
  bci.pQueueFamilyIndices = d.families.data();
  return d.fn.vkCreateBuffer(d.dev, &bci, nullptr, out);
}

// Create a VkBuffer of `size` bytes, allocate memory for it and bind it.
// `import_fd` >= 0 imports the memory instead (the fd is consumed on
// success): then `import_size` is the exporter's allocationSize and
// `forced_type` its memory type, and `size` must be the exporter's buffer
// size (a dedicated import needs an identical buffer).
hurray_status make_memory(Device &d, Allocation &a, uint64_t size, bool external,
                          int import_fd, uint64_t import_size, int forced_type,
                          hurray_error *err) {
  VkResult r = create_buffer(d, size, kBufferUsage, external, &a.buffer);
  a.buffer_size = size;
  if (r != VK_SUCCESS) {
    a.buffer = VK_NULL_HANDLE;
    return vk_fail(err, status_of(r), "vkCreateBuffer", r, "%llu bytes of %s on %s",
                   static_cast<unsigned long long>(size), class_name(a.cls), d.label.c_str());
  }
  VkMemoryRequirements req{};
  d.fn.vkGetBufferMemoryRequirements(d.dev, a.buffer, &req);
  int type = forced_type;
  if (type < 0) {
    type = d.pick_type(a.cls, req.memoryTypeBits);
    if (type < 0)
      return refuse(err, HURRAY_E_DEVICE_UNAVAILABLE,
                    "%s cannot serve memory class %s%s: no memory type allowed for its "
                    "buffers is %s",
                    d.label.c_str(), class_name(a.cls), external ? " (shareable)" : "",
                    class_needs(a.cls));
  } else if (!(req.memoryTypeBits & (1u << type))) {
    return refuse(err, HURRAY_E_UNSUPPORTED,
                  "%s cannot bind a buffer to imported memory of type %d", d.label.c_str(), type);
  }
  a.type = static_cast<uint32_t>(type);
  a.coherent = (d.mem.memoryTypes[type].propertyFlags & kHC) != 0;
  if (import_fd >= 0) {
    a.size = import_size;
    if (a.size < req.size)
      return refuse(err, HURRAY_E_INVALID_ARGUMENT,
                    "importing on %s: %llu bytes of exported memory cannot hold a %llu-byte "
                    "buffer",
                    d.label.c_str(), static_cast<unsigned long long>(a.size),
                    static_cast<unsigned long long>(req.size));
  } else if (a.dedicated) {
    a.size = req.size;  // a dedicated allocation is exactly the buffer's size
  } else {
    a.size = round_up(std::max<uint64_t>(req.size, size), d.atom);
  }

  VkMemoryAllocateInfo mai{};
  mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  mai.allocationSize = a.size;
  mai.memoryTypeIndex = a.type;
  const void *chain = nullptr;
  VkMemoryDedicatedAllocateInfo dedicated{};
  dedicated.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO;
  dedicated.buffer = a.buffer;
  if (a.dedicated) {
    dedicated.pNext = chain;
    chain = &dedicated;
  }
  VkExportMemoryAllocateInfo exp{};
  exp.sType = VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO;
  exp.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkImportMemoryFdInfoKHR imp{};
  imp.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR;
  imp.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  imp.fd = import_fd;
  if (import_fd >= 0) {
    imp.pNext = chain;
    chain = &imp;
  } else if (external) {
    exp.pNext = chain;
    chain = &exp;
  }
  mai.pNext = chain;
  r = d.fn.vkAllocateMemory(d.dev, &mai, nullptr, &a.memory);
  if (r != VK_SUCCESS) {
    a.memory = VK_NULL_HANDLE;
    return vk_fail(err, status_of(r), "vkAllocateMemory", r,
                   "%s%llu bytes of %s (memory type %u) on %s",
                   import_fd >= 0 ? "importing " : "", static_cast<unsigned long long>(a.size),
                   class_name(a.cls), a.type, d.label.c_str());
  }
  r = d.fn.vkBindBufferMemory(d.dev, a.buffer, a.memory, 0);
  if (r != VK_SUCCESS)
    return vk_fail(err, status_of(r), "vkBindBufferMemory", r, "%s", d.label.c_str());
  if (class_mapped(a.cls)) {
    r = d.fn.vkMapMemory(d.dev, a.memory, 0, VK_WHOLE_SIZE, 0, &a.base);
    if (r != VK_SUCCESS) {
      a.base = nullptr;
      return vk_fail(err, status_of(r), "vkMapMemory", r, "%llu bytes of %s on %s",
                     static_cast<unsigned long long>(a.size), class_name(a.cls),
                     d.label.c_str());
    }
  }
  return HURRAY_OK;
}

void fill_out(const Allocation &a, int32_t device, hurray_backend_allocation *out) {
  std::memset(out, 0, sizeof *out);
  out->byte_size = a.byte_size;
  out->alignment = a.alignment;
  out->device = device;
  out->memory_class = a.cls;
  if (a.base) {
    out->data = static_cast<char *>(a.base) + a.offset;
    out->host = out->data;
    out->flags = 0;
  } else {
    out->data = to_ptr(a.memory);
    out->host = nullptr;
    out->flags = HURRAY_HANDOFF_OPAQUE_DATA;
  }
  out->plugin_data = const_cast<Allocation *>(&a);
}

void register_allocation(State &s, Allocation *a, const hurray_backend_allocation &out) {
  const uintptr_t start = reinterpret_cast<uintptr_t>(out.data);
  const uintptr_t end = a->base ? start + std::max<uint64_t>(a->byte_size, 1) : start + 1;
  s.add(a, start, end);
}

hurray_status check_class(const Device &d, uint8_t cls, hurray_error *err) {
  if (cls >= kClassCount)
    return refuse(err, HURRAY_E_MEMORY_CLASS,
                  "memory class %s (0x%02x) is not a Vulkan memory class (Vulkan serves "
                  "STANDARD, HOST_PINNED and UNIFIED)",
                  class_name(cls), static_cast<unsigned>(cls));
  if (d.class_type[cls] < 0)
    return refuse(err, HURRAY_E_DEVICE_UNAVAILABLE,
                  "memory class %s is not available on %s: it has no %s", class_name(cls),
                  d.label.c_str(), class_needs(cls) + 2);
  return HURRAY_OK;
}

hurray_status alloc_impl(State &s, Device *d, uint8_t cls, uint64_t byte_size, uint32_t alignment,
                         uint32_t flags, hurray_backend_allocation *out, hurray_error *err) {
  if (const hurray_status st = check_class(*d, cls, err); st != HURRAY_OK) return st;
  if (const hurray_status st =
          hurray::kit::check_alloc(alignment, flags, HURRAY_MIN_ALIGNMENT, &alignment, err))
    return st;
  const bool shareable = (flags & HURRAY_ALLOC_SHAREABLE) != 0;
  if (shareable && !d->ipc_memory)
    return refuse(err, HURRAY_E_UNSUPPORTED, "%s cannot share memory with other processes: %s",
                  d->label.c_str(), d->ipc_memory_why.c_str());
  const bool mapped = class_mapped(cls);
  const uint64_t guaranteed = mapped ? std::max<uint64_t>(alignment, d->map_align) : alignment;
  if (guaranteed > (1u << 31))
    return refuse(err, HURRAY_E_INVALID_ARGUMENT, "alloc: alignment %llu is too large",
                  static_cast<unsigned long long>(guaranteed));
  if (byte_size > d->max_alloc)
    return refuse(err, HURRAY_E_OUT_OF_MEMORY,
                  "%llu bytes of %s exceed maxMemoryAllocationSize (%llu) of %s",
                  static_cast<unsigned long long>(byte_size), class_name(cls),
                  static_cast<unsigned long long>(d->max_alloc), d->label.c_str());
  if (byte_size == 0) {  // an empty buffer: nothing to allocate
    std::memset(out, 0, sizeof *out);
    out->alignment = static_cast<uint32_t>(guaranteed);
    out->device = d->ordinal;
    out->memory_class = cls;
    out->flags = mapped ? 0u : HURRAY_HANDOFF_OPAQUE_DATA;
    return HURRAY_OK;
  }

  auto a = std::make_unique<Allocation>();
  a->dev = d;
  a->cls = cls;
  a->byte_size = byte_size;
  a->alignment = static_cast<uint32_t>(guaranteed);
  a->exportable = shareable;
  a->dedicated = shareable && d->export_dedicated;
  // Mappings are aligned to map_align: room to slide data up to `guaranteed`.
  uint64_t need = round_up(byte_size, d->atom);
  if (mapped && guaranteed > d->map_align) need += guaranteed - d->map_align;
  struct Cleanup {
    Allocation *a;
    ~Cleanup() {
      if (a) a->destroy();
    }
  } cleanup{a.get()};
  if (const hurray_status st = make_memory(*d, *a, need, shareable, -1, 0, -1, err);
      st != HURRAY_OK)
    return st;
  if (mapped) {
    const uintptr_t base = reinterpret_cast<uintptr_t>(a->base);
    const uintptr_t data = (base + guaranteed - 1) & ~static_cast<uintptr_t>(guaranteed - 1);
    a->offset = data - base;
    if (a->offset + byte_size > a->buffer_size)
      return fail(err, HURRAY_E_ALIGNMENT,
                  "[vkMapMemory] %s mapped %s memory at %p, not aligned to "
                  "minMemoryMapAlignment %llu: cannot place %u-byte aligned data",
                  d->label.c_str(), class_name(cls), a->base,
                  static_cast<unsigned long long>(d->props.limits.minMemoryMapAlignment),
                  a->alignment);
    if (data % guaranteed != 0)
      return refuse(err, HURRAY_E_INTERNAL, "misaligned data %p", reinterpret_cast<void *>(data));
  }
  fill_out(*a, d->ordinal, out);
  register_allocation(s, a.get(), *out);
  cleanup.a = nullptr;
  a.release();
  return HURRAY_OK;
}

void free_(void *state, hurray_backend_allocation *allocation) {
  hurray::kit::free_record<State, Allocation>(state, allocation, [](State *s, Allocation *a) {
    s->remove(a);
    a->destroy();
    delete a;
  });
}

}  // namespace hurray::vulkan
