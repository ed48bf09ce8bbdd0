// The GPU stream driver: allocation (over-allocated and aligned inside when
// the runtime's base alignment is not enough), free and classify.
#include <algorithm>
#include <new>

#include "driver.h"

namespace hurray::gpu_stream {

using hurray::kit::AllocResult;

namespace {

// Enable access to device d's memory from every peer, once.
hurray_status enable_peers(State *s, Device *d, hurray_error *err) noexcept {
  std::lock_guard<std::mutex> lock(d->peer_mu);
  if (d->peers_enabled) return HURRAY_OK;
  const Api &api = s->api;
  for (int32_t p : d->peers) {
    const Device &peer = *s->devices[static_cast<size_t>(p)];
    rt::Current cur(api, peer.ref);
    Result r = cur.result();
    if (r == rt::kSuccess) r = rt::enable_peer_access(api, *d);
    if (r != rt::kSuccess)
      return rt_fail(err, api, HURRAY_OK, rt::kEnablePeer, r, "device %d '%s' to the memory of '%s'",
                     static_cast<int>(p), peer.name.c_str(), d->name.c_str());
  }
  d->peers_enabled = true;
  return HURRAY_OK;
}

// Give back what alloc() or ipc_import_memory() made for `a` (not the record).
void release_memory(const State *s, const Allocation *a) noexcept {
  const Api &api = s->api;
  const Device &d = *s->devices[static_cast<size_t>(a->device)];
  rt::Current cur(api, d.ref);
  if (a->vmm_handle != 0)
    vmm_give_back(s, *a);
  else if (a->imported)
    close_handle(s, a->device, a->base);
  else
    rt::free_block(api, a->memory_class, a->base);
}

hurray_status check_class(const Device &d, int32_t device, uint8_t mc, uint32_t flags,
                          size_t n_devices, hurray_error *err) noexcept {
  if (mc > HURRAY_MEMORY_PEER)
    return refuse(err, HURRAY_E_MEMORY_CLASS,
                  "memory class %s (0x%02x) is not one %s serves (STANDARD, HOST_PINNED, "
                  "UNIFIED, PEER)",
                  class_name(mc), mc, rt::kVendor);
  const char *why = nullptr;
  if (mc == HURRAY_MEMORY_HOST_PINNED && !d.map_host)
    why = rt::kNoMapHost;
  else if (mc == HURRAY_MEMORY_UNIFIED && !d.managed)
    why = rt::kNoManaged;
  if (why != nullptr)
    return refuse(err, HURRAY_E_DEVICE_UNAVAILABLE,
                  "memory class %s (0x%02x) is not available on device %d '%s': %s", class_name(mc),
                  mc, static_cast<int>(device), d.name.c_str(), why);
  if (mc == HURRAY_MEMORY_PEER && d.peers.empty())
    return refuse(err, HURRAY_E_DEVICE_UNAVAILABLE,
                  "memory class PEER (0x03) is not available on device %d '%s': no other %s "
                  "device can access its memory (%s; %zu device(s))",
                  static_cast<int>(device), d.name.c_str(), rt::kVendor, rt::kCanAccessPeer,
                  n_devices);
  if ((flags & HURRAY_ALLOC_SHAREABLE) != 0 && host_visible(mc))
    return refuse(err, HURRAY_E_UNSUPPORTED, "HURRAY_ALLOC_SHAREABLE: %s (STANDARD, PEER), not %s",
                  rt::kIpcExports, class_name(mc));
  return HURRAY_OK;
}

}  // namespace

hurray_status alloc(void *state, int32_t device, uint8_t memory_class, uint64_t byte_size,
                    uint32_t alignment, uint32_t flags, hurray_backend_allocation *out,
                    hurray_error *err) {
  auto [refused, s, d] = kit::enter_out<State>(state, device, out, err, "alloc: out");
  if (refused != HURRAY_OK) return refused;
  if (const hurray_status st = check_class(*d, device, memory_class, flags, s->devices.size(), err))
    return st;
  // Always an address: no flags.
  if (const hurray_status st = hurray::kit::begin_alloc(
          {device, memory_class, byte_size, alignment, flags}, rt::kBaseAlignment, 0,
          SIZE_MAX / 2, out, err))
    return st;
  const uint32_t align = out->alignment;
  if (byte_size == 0) return HURRAY_OK;  // an empty buffer has no memory
  if (memory_class == HURRAY_MEMORY_PEER)
    if (const hurray_status st = enable_peers(s, d, err)) return st;

  const Api &api = s->api;
  const rt::Current current(s->api, d->ref);
  if (const hurray_status st = check_current(current, s->api, *d, err)) return st;
  if (use_vmm(s, *d, memory_class, flags))  // SHAREABLE: a descriptor crosses (vmm.cpp)
    return vmm_alloc(s, d, device, memory_class, byte_size, align, out, err);
  Result code = rt::kSuccess;
  const char *function = rt::kStandardAlloc;
  auto allocate = [&](uint64_t n, uintptr_t *base) {
    code = rt::alloc_block(api, memory_class, n, base, &function);
    return code == rt::kSuccess;
  };
  auto give_back = [&](uintptr_t base) { rt::free_block(api, memory_class, base); };
  uintptr_t base = 0, data = 0;
  switch (hurray::kit::alloc_aligned(byte_size, align, rt::kBaseAlignment, allocate, give_back,
                                     &base, &data)) {
    case AllocResult::kOk:
      break;
    case AllocResult::kFailed:
      return rt_fail(err, api, HURRAY_OK, function, code, "%llu bytes of %s on device %d '%s'",
                     static_cast<unsigned long long>(byte_size), class_name(memory_class),
                     static_cast<int>(device), d->name.c_str());
    case AllocResult::kTooLarge:
      return refuse(err, HURRAY_E_OUT_OF_MEMORY,
                    "%llu bytes aligned to %u cannot be allocated (the size overflows)",
                    static_cast<unsigned long long>(byte_size), align);
    case AllocResult::kMisaligned:
      return refuse(err, HURRAY_E_ALIGNMENT,
                    "%s returned a block not aligned to %u bytes on device %d '%s', so %u "
                    "cannot be had by over-allocating",
                    function, rt::kBaseAlignment, static_cast<int>(device), d->name.c_str(), align);
  }

  uintptr_t device_view = data;
  if (memory_class == HURRAY_MEMORY_HOST_PINNED) {
    uintptr_t view = 0;
    const Result r = rt::host_device_pointer(api, base, &view);
    if (r != rt::kSuccess) {
      give_back(base);
      return rt_fail(err, api, HURRAY_OK, rt::kHostDevicePointer, r, "device %d '%s'",
                     static_cast<int>(device), d->name.c_str());
    }
    device_view = view + (data - base);
  }
  auto *a = new (std::nothrow) Allocation;
  if (a != nullptr) {
    a->device = device;
    a->memory_class = memory_class;
    a->byte_size = byte_size;
    a->base = base;
    a->data = data;
    a->device_view = device_view;
  }
  if (a == nullptr || !s->live.add(a)) {
    delete a;
    give_back(base);
    return refuse(err, HURRAY_E_OUT_OF_MEMORY, "alloc: out of host memory");
  }
  out->data = vptr(data);
  out->host = host_visible(memory_class) ? vptr(data) : nullptr;
  out->plugin_data = a;
  return HURRAY_OK;
}

void free_allocation(State *s, Allocation *a) noexcept {
  s->live.remove(a);
  release_memory(s, a);
  delete a;
}

void free_(void *state, hurray_backend_allocation *allocation) {
  hurray::kit::free_record<State, Allocation>(state, allocation, free_allocation);
}

hurray_status classify(void *state, const void *ptr, int32_t *device, uint8_t *memory_class,
                       hurray_error *err) {
  const auto *s = static_cast<const State *>(state);
  Device *d0 = nullptr;
  if (const hurray_status st = find_device(s, 0, &d0, err)) return st;
  if (ptr == nullptr) return refuse(err, HURRAY_E_INVALID_ARGUMENT, "classify: ptr is NULL");
  uint8_t mc = 0;
  int runtime_device = -1;
  if (const hurray_status st = rt::pointer_class(s, *d0, ptr, &mc, &runtime_device, err)) return st;
  Allocation rec;
  const bool ours = s->live.find(uptr(ptr), &rec);
  if (ours && mc == HURRAY_MEMORY_STANDARD && rec.memory_class == HURRAY_MEMORY_PEER)
    mc = HURRAY_MEMORY_PEER;  // the runtime cannot tell: the plugin remembers
  int32_t index = -1;
  for (size_t i = 0; i < s->devices.size(); ++i)
    if (rt::is_device(s->devices[i]->ref, runtime_device)) index = static_cast<int32_t>(i);
  if (index < 0 && ours) index = rec.device;
  if (index < 0)
    return refuse(err, HURRAY_E_DEVICE_UNAVAILABLE,
                  "%p is %s memory of %s device %d, which this plugin does not serve", ptr,
                  class_name(mc), rt::kVendor, runtime_device);
  if (device != nullptr) *device = index;
  if (memory_class != nullptr) *memory_class = mc;
  return HURRAY_OK;
}

}  // namespace hurray::gpu_stream
