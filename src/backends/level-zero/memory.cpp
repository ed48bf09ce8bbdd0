// The Level Zero plugin: allocation, copies and classify.
#include "state.h"

namespace hurray::level_zero {

// ---- memory ---------------------------------------------------------------

const char *alloc_function(uint8_t mc) noexcept {
  switch (mc) {
    case HURRAY_MEMORY_HOST_PINNED:
      return "zeMemAllocHost";
    case HURRAY_MEMORY_UNIFIED:
      return "zeMemAllocShared";
    default:
      return "zeMemAllocDevice";
  }
}

ze_result_t allocate(const Api &ze, const Device &d, uint8_t mc, uint64_t size, uint64_t alignment,
                     void **out) noexcept {
  *out = nullptr;
  ze_device_mem_alloc_desc_t dd{};
  dd.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC;
  dd.flags = 0;
  dd.ordinal = 0;
  ze_host_mem_alloc_desc_t hd{};
  hd.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC;
  hd.flags = 0;
  const auto n = static_cast<size_t>(size);
  const auto al = static_cast<size_t>(alignment);
  switch (mc) {
    case HURRAY_MEMORY_HOST_PINNED:
      return ze.zeMemAllocHost(d.driver->context, &hd, n, al, out);
    case HURRAY_MEMORY_UNIFIED:
      return ze.zeMemAllocShared(d.driver->context, &dd, &hd, n, al, d.handle, out);
    default:
      return ze.zeMemAllocDevice(d.driver->context, &dd, n, al, d.handle, out);
  }
}

// Allocate `size` bytes of class `mc` whose address is `align`-aligned into
// a->base and a->ptr (see "Alignment" above).
hurray_status alloc_aligned(const Api &ze, const Device &d, uint8_t mc, uint64_t size,
                            uint32_t align, Allocation *a, hurray_error *err) noexcept {
  const char *fn = alloc_function(mc);
  void *p = nullptr;
  ze_result_t r = allocate(ze, d, mc, size, align, &p);
  if (r == ZE_RESULT_SUCCESS && p != nullptr && is_aligned(p, align)) {
    a->base = a->ptr = p;
    return HURRAY_OK;
  }
  if (r != ZE_RESULT_SUCCESS && r != ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT)
    return code_fail(err, HURRAY_OK, fn, ze_code(r), "%llu bytes aligned to %u on device %d '%s'",
                     static_cast<unsigned long long>(size), align, static_cast<int>(d.ordinal),
                     d.name.c_str());
  if (r == ZE_RESULT_SUCCESS && p == nullptr)
    return fail(err, HURRAY_E_BACKEND,
                "[%s] ZE_RESULT_SUCCESS but no pointer: %llu bytes on device %d '%s'", fn,
                static_cast<unsigned long long>(size), static_cast<int>(d.ordinal),
                d.name.c_str());
  const uint64_t got = p != nullptr ? alignment_of(p) : 0;
  if (p != nullptr) ze.zeMemFree(d.driver->context, p);

  // Second try: `align` bytes more, and data at the first aligned address.
  if (size > UINT64_MAX - align)
    return refuse(err, HURRAY_E_OUT_OF_MEMORY, "%llu bytes cannot be allocated",
                  static_cast<unsigned long long>(size));
  void *base = nullptr;
  r = allocate(ze, d, mc, size + align, HURRAY_MIN_ALIGNMENT, &base);
  if (r != ZE_RESULT_SUCCESS)
    return code_fail(err, HURRAY_OK, fn, ze_code(r),
                     "%llu bytes on device %d '%s' (to place %llu bytes at a %u-byte aligned "
                     "address; the first try gave %s)",
                     static_cast<unsigned long long>(size + align), static_cast<int>(d.ordinal),
                     d.name.c_str(), static_cast<unsigned long long>(size), align,
                     got != 0 ? "a less aligned pointer" : "ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT");
  if (base == nullptr)
    return fail(err, HURRAY_E_BACKEND,
                "[%s] ZE_RESULT_SUCCESS but no pointer: %llu bytes on device %d '%s'", fn,
                static_cast<unsigned long long>(size + align), static_cast<int>(d.ordinal),
                d.name.c_str());
  const uintptr_t b = reinterpret_cast<uintptr_t>(base);
  a->base = base;
  a->ptr = reinterpret_cast<void *>((b + align - 1) & ~(static_cast<uintptr_t>(align) - 1));
  return HURRAY_OK;
}

// Give back what alloc() or ipc_import_memory() made for `a` (not the record).
void release_memory(State *s, Allocation *a) noexcept {
  if (a->base != nullptr) {
    const Device &d = *s->devices[static_cast<size_t>(a->device)];
    if (a->imported) {
      s->ze.zeMemCloseIpcHandle(d.driver->context, a->base);
    } else {
      s->ze.zeMemFree(d.driver->context, a->base);
    }
  }
  if (a->ipc_fd >= 0) close(a->ipc_fd);
  a->ipc_fd = -1;
  a->base = a->ptr = nullptr;
}

void register_allocation(State *s, Allocation *a) {
  std::lock_guard<std::mutex> lock(s->mu);
  if (a->ptr != nullptr) {
    s->live.emplace(reinterpret_cast<uintptr_t>(a->ptr), a);
  } else {
    s->empties.push_back(a);
  }
}

void fill_out(const Allocation &a, uint32_t alignment, hurray_backend_allocation *out) noexcept {
  out->data = a.ptr;
  out->byte_size = a.byte_size;
  out->alignment = alignment;
  out->flags = 0;  // Level Zero pointers are addresses, never opaque handles
  out->device = a.device;
  out->memory_class = a.memory_class;
  out->host = is_device_class(a.memory_class) ? nullptr : a.ptr;
  out->plugin_data = const_cast<Allocation *>(&a);
}

// Can `d` serve class `mc`? HURRAY_OK, or the failure naming the reason.
hurray_status check_class(const Device &d, uint8_t mc, hurray_error *err) noexcept {
  if (mc > HURRAY_MEMORY_PEER)
    return refuse(err, HURRAY_E_MEMORY_CLASS,
                  "memory class %s (0x%02x) is not a Level Zero memory class "
                  "(STANDARD, HOST_PINNED, UNIFIED, PEER)",
                  class_name(mc), mc);
  if (mc == HURRAY_MEMORY_UNIFIED && !d.unified)
    return refuse(err, HURRAY_E_DEVICE_UNAVAILABLE,
                  "memory class UNIFIED (0x02) is not available on device %d '%s': %s",
                  static_cast<int>(d.ordinal), d.name.c_str(), d.unified_why.c_str());
  if (mc == HURRAY_MEMORY_PEER && d.peers.empty())
    return refuse(err, HURRAY_E_DEVICE_UNAVAILABLE,
                  "memory class PEER (0x03) is not available on device %d '%s': %s",
                  static_cast<int>(d.ordinal), d.name.c_str(), d.peer_why.c_str());
  return HURRAY_OK;
}

hurray_status alloc(void *state, int32_t device, uint8_t memory_class, uint64_t byte_size,
                    uint32_t alignment, uint32_t flags, hurray_backend_allocation *out,
                    hurray_error *err) {
  auto [refused, s, d] = kit::enter_out<State>(state, device, out, err, "alloc: out");
  if (refused != HURRAY_OK) return refused;
  if (const hurray_status st = check_class(*d, memory_class, err)) return st;
  if ((flags & HURRAY_ALLOC_SHAREABLE) != 0)
    if (const hurray_status st = check_shareable(*d, memory_class, "HURRAY_ALLOC_SHAREABLE", err))
      return st;
  uint32_t align = 0;
  if (const hurray_status st =
          hurray::kit::check_alloc(alignment, flags, HURRAY_MIN_ALIGNMENT, &align, err))
    return st;
  if (byte_size > SIZE_MAX / 2)
    return refuse(err, HURRAY_E_OUT_OF_MEMORY, "%llu bytes cannot be allocated",
                  static_cast<unsigned long long>(byte_size));

  auto a = std::make_unique<Allocation>();
  a->device = device;
  a->memory_class = memory_class;
  a->byte_size = byte_size;
  // An empty buffer has no memory.
  if (byte_size != 0) {
    if (const hurray_status st = alloc_aligned(s->ze, *d, memory_class, byte_size, align,
                                               a.get(), err))
      return st;
  }
  try {
    register_allocation(s, a.get());
  } catch (...) {
    release_memory(s, a.get());
    throw;
  }
  fill_out(*a, align, out);
  a.release();
  return HURRAY_OK;
}

void free_(void *state, hurray_backend_allocation *allocation) {
  hurray::kit::free_record<State, Allocation>(state, allocation, [](State *s, Allocation *a) {
    {
      std::lock_guard<std::mutex> lock(s->mu);
      if (a->ptr != nullptr) {
        s->live.erase(reinterpret_cast<uintptr_t>(a->ptr));
      } else {
        s->empties.erase(std::remove(s->empties.begin(), s->empties.end(), a), s->empties.end());
      }
    }
    release_memory(s, a);
    delete a;
  });
}

// One synchronous copy on the plugin's list of `d` (see "Copies" above).
hurray_status copy_on_list(const Api &ze, Device &d, void *dst, const void *src, uint64_t n,
                           const char *what, hurray_error *err) noexcept {
  std::lock_guard<std::mutex> lock(d.mu);
  ze_result_t r = ze.zeCommandListAppendBarrier(d.list, nullptr, 0, nullptr);
  if (r != ZE_RESULT_SUCCESS)
    return code_fail(err, HURRAY_OK, "zeCommandListAppendBarrier", ze_code(r),
                     "%s on device %d '%s'", what, static_cast<int>(d.ordinal), d.name.c_str());
  r = ze.zeCommandListAppendMemoryCopy(d.list, dst, src, static_cast<size_t>(n), d.copy_event, 0,
                                       nullptr);
  if (r != ZE_RESULT_SUCCESS)
    return code_fail(err, HURRAY_OK, "zeCommandListAppendMemoryCopy", ze_code(r),
                     "%s of %llu bytes on device %d '%s'", what, static_cast<unsigned long long>(n),
                     static_cast<int>(d.ordinal), d.name.c_str());
  r = ze.zeEventHostSynchronize(d.copy_event, UINT64_MAX);
  const ze_result_t reset = ze.zeEventHostReset(d.copy_event);
  if (r != ZE_RESULT_SUCCESS)
    return code_fail(err, HURRAY_OK, "zeEventHostSynchronize", ze_code(r),
                     "waiting for the %s of %llu bytes on device %d '%s'", what,
                     static_cast<unsigned long long>(n), static_cast<int>(d.ordinal),
                     d.name.c_str());
  if (reset != ZE_RESULT_SUCCESS)
    return code_fail(err, HURRAY_OK, "zeEventHostReset", ze_code(reset),
                     "the copy event of device %d '%s'", static_cast<int>(d.ordinal),
                     d.name.c_str());
  return HURRAY_OK;
}

hurray_status check_shareable(const Device &d, uint8_t mc, const char *what,
                              hurray_error *err) noexcept {
  if (!is_device_class(mc))
    return refuse(err, HURRAY_E_UNSUPPORTED,
                  "%s: %s memory: Level Zero shares device allocations only (STANDARD, "
                  "PEER)",
                  what, class_name(mc));
  if (!d.driver->ipc_memory())
    return refuse(err, HURRAY_E_UNSUPPORTED,
                  "%s: the driver of device %d '%s' does not share memory between "
                  "processes (zeDriverGetIpcProperties: no ZE_IPC_PROPERTY_FLAG_MEMORY)",
                  what, static_cast<int>(d.ordinal), d.name.c_str());
  return HURRAY_OK;
}

// Copy n bytes between host memory and the allocation, to_host or not, on
// the plugin's list of d. A record without memory (a zero-byte allocation)
// cannot take a copy.
static hurray_status copy(State *s, const Allocation *a, Device *d, uint64_t offset, void *host,
                          uint64_t n, bool to_host, hurray_error *err) noexcept {
  if (a->ptr == nullptr)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT,
                  "%s: the allocation was not made by this plugin (or was freed)",
                  to_host ? "copy_to_host" : "copy_from_host");
  char *mem = static_cast<char *>(a->ptr) + offset;
  return to_host ? copy_on_list(s->ze, *d, host, mem, n, "copy to host", err)
                 : copy_on_list(s->ze, *d, mem, host, n, "copy from host", err);
}

hurray_status copy_to_host(void *state, const hurray_backend_allocation *src, uint64_t offset,
                           void *dst, uint64_t n, hurray_error *err) {
  return kit::copy_entry<State, Allocation>(state, src, offset, dst, n, true, err, copy);
}

hurray_status copy_from_host(void *state, hurray_backend_allocation *dst, uint64_t offset,
                             const void *src, uint64_t n, hurray_error *err) {
  return kit::copy_entry<State, Allocation>(state, dst, offset, const_cast<void *>(src), n,
                                            false, err, copy);
}

// The plugin's own allocation that holds p (under s->mu), or nullptr.
const Allocation *find_allocation(const State *s, uintptr_t p) noexcept {
  auto it = s->live.upper_bound(p);
  if (it == s->live.begin()) return nullptr;
  --it;
  const Allocation *a = it->second;
  return p - it->first < std::max<uint64_t>(a->byte_size, 1) ? a : nullptr;
}

hurray_status classify(void *state, const void *ptr, int32_t *device, uint8_t *memory_class,
                       hurray_error *err) {
  auto *s = static_cast<State *>(state);
  if (s == nullptr)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT, "the plugin state is NULL (probe first)");
  if (ptr == nullptr)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT, "classify: the pointer is NULL");
  const Api &ze = s->ze;
  // Ours, as far as the plugin knows (the class PEER, the device of host memory).
  int32_t own_device = -1;
  uint8_t own_class = HURRAY_MEMORY_INVALID;
  {
    std::lock_guard<std::mutex> lock(s->mu);
    if (const Allocation *a = find_allocation(s, reinterpret_cast<uintptr_t>(ptr))) {
      own_device = a->device;
      own_class = a->memory_class;
    }
  }
  std::string failures;
  for (auto &drv : s->drivers) {
    if (drv->context == nullptr) continue;
    ze_memory_allocation_properties_t props{};
    props.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES;
    props.type = ZE_MEMORY_TYPE_UNKNOWN;
    ze_device_handle_t owner = nullptr;
    const ze_result_t r = ze.zeMemGetAllocProperties(drv->context, ptr, &props, &owner);
    if (r != ZE_RESULT_SUCCESS) {
      char buf[40];
      note(&failures, "%s on driver %u", result_text(r, buf), drv->index);
      continue;
    }
    uint8_t mc;
    switch (props.type) {
      case ZE_MEMORY_TYPE_DEVICE:
        mc = own_class == HURRAY_MEMORY_PEER ? HURRAY_MEMORY_PEER : HURRAY_MEMORY_STANDARD;
        break;
      case ZE_MEMORY_TYPE_HOST:
        mc = HURRAY_MEMORY_HOST_PINNED;
        break;
      case ZE_MEMORY_TYPE_SHARED:
        mc = HURRAY_MEMORY_UNIFIED;
        break;
      default:
        continue;  // not memory of this context
    }
    int32_t dev = -1;
    for (auto &d : s->devices)
      if (d->driver == drv.get() && owner != nullptr && d->handle == owner) dev = d->ordinal;
    if (dev < 0 && own_device >= 0 &&
        s->devices[static_cast<size_t>(own_device)]->driver == drv.get())
      dev = own_device;
    for (auto &d : s->devices)
      if (dev < 0 && d->driver == drv.get()) dev = d->ordinal;
    if (dev < 0) continue;  // a driver without a usable device
    if (device != nullptr) *device = dev;
    if (memory_class != nullptr) *memory_class = mc;
    return HURRAY_OK;
  }
  if (!failures.empty())
    return fail(err, HURRAY_E_BACKEND, "[zeMemGetAllocProperties] %s: %p", failures.c_str(), ptr);
  return fail(err, HURRAY_E_INVALID_ARGUMENT,
              "[zeMemGetAllocProperties] ZE_MEMORY_TYPE_UNKNOWN: %p is not memory of a Level "
              "Zero context of this plugin",
              ptr);
}

}  // namespace hurray::level_zero
