// The GPU stream driver: memory the plugin did not allocate, across
// processes (ipc_export_pointer), and the per-process table of opened IPC
// memory handles. A wrapped pointer is exported as the runtime allocation
// that holds it: a VMM allocation (CUDA cuMemRetainAllocationHandle finds
// one) as a file descriptor (vmm.cpp), else the block cuMemGetAddressRange
// names by its cuIpcGetMemHandle, with the pointer's offset in it. A
// consumer opens each such handle once per device and process, however many
// buffers of the allocation (a caching allocator's pieces) arrive, and
// closes it when the last of them is freed.
#include "driver.h"

namespace hurray::gpu_stream {

hurray_status open_handle(State *s, const Device &d, int32_t device, const rt::IpcMemHandle &h,
                          uintptr_t *base, hurray_error *err) noexcept {
  std::array<uint8_t, 64> key{};
  static_assert(sizeof h <= sizeof key, "an IPC memory handle is 64 bytes");
  std::memcpy(key.data(), &h, sizeof h);
  OpenedHandles &o = *s->opened;
  std::lock_guard<std::mutex> lock(o.mu);
  try {
    auto [it, fresh] = o.by_handle.try_emplace({device, key});
    if (!fresh) {
      ++it->second.refs;
      *base = it->second.base;
      return HURRAY_OK;
    }
    const Result r = rt::ipc_open_mem(s->api, base, h);
    if (r != rt::kSuccess) {
      o.by_handle.erase(it);
      return rt_fail(err, s->api, HURRAY_OK, rt::kIpcOpenMem, r, "on '%s'%s", d.name.c_str(),
                     rt::open_mem_hint(r));
    }
    it->second.base = *base;
    it->second.refs = 1;
    return HURRAY_OK;
  } catch (...) {
    return refuse(err, HURRAY_E_OUT_OF_MEMORY, "ipc_import_memory: out of host memory");
  }
}

void close_handle(const State *s, int32_t device, uintptr_t base) noexcept {
  OpenedHandles &o = *s->opened;
  std::lock_guard<std::mutex> lock(o.mu);
  for (auto it = o.by_handle.begin(); it != o.by_handle.end(); ++it) {
    if (it->first.first != device || it->second.base != base) continue;
    if (--it->second.refs == 0) {
      rt::ipc_close_mem(s->api, base);
      o.by_handle.erase(it);
    }
    return;
  }
}

hurray_status ipc_export_pointer(void *state, int32_t device, uint8_t memory_class,
                                 const void *data, uint64_t byte_size,
                                 hurray_backend_ipc_handle *out, hurray_error *err) {
  auto [refused, s, d] = kit::enter_out<const State>(state, device, out, err,
                                                     "ipc_export_pointer: data and out", data);
  if (refused != HURRAY_OK) return refused;
  out->fd = -1;
  if (host_visible(memory_class))
    return refuse(err, HURRAY_E_UNSUPPORTED, "ipc_export_pointer: %s (STANDARD, PEER), not %s",
                  rt::kIpcExports, class_name(memory_class));
  if (byte_size == 0)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT, "ipc_export_pointer: a buffer of 0 bytes");
  const Api &api = s->api;
  const rt::Current current(s->api, d->ref);
  if (const hurray_status st = check_current(current, s->api, *d, err)) return st;
  const uintptr_t p = uptr(data);
  uintptr_t base = 0;
  size_t size = 0;
  if (!rt::mem_range(api, p, &base, &size))
    return refuse(err, HURRAY_E_INVALID_ARGUMENT,
                  "ipc_export_pointer: %p is not in an allocation of the %s runtime on '%s' "
                  "(%s knows no range that holds it)",
                  data, rt::kVendor, d->name.c_str(), rt::kAddressRange);
  const uint64_t offset = p - base;
  if (offset > size || byte_size > size - offset)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT,
                  "ipc_export_pointer: %llu bytes at %p run past the end of the %zu-byte "
                  "allocation that holds it (at offset %llu)",
                  static_cast<unsigned long long>(byte_size), data, size,
                  static_cast<unsigned long long>(offset));
  uint64_t vmm = 0;
  if (rt::kHasVmm && rt::vmm_retain(api, p, &vmm) == rt::kSuccess) {
    // VMM memory: cuIpcGetMemHandle cannot export it; its descriptor can
    const hurray_status st = vmm_export(s, *d, vmm, size, byte_size, offset, out, err);
    rt::vmm_release(api, vmm);  // the retain's reference (the descriptor holds its own)
    return st;
  }
  rt::IpcMemHandle h;
  std::memset(&h, 0, sizeof h);
  const Result r = rt::ipc_get_mem(api, &h, base);
  if (r != rt::kSuccess)
    return rt_fail(err, api, HURRAY_OK, rt::kIpcGetMem, r,
                   "the %zu-byte allocation that holds %p on '%s'", size, data, d->name.c_str());
  hurray::kit::pack_ipc(rt::kIpcMemoryKind, &h, sizeof h, byte_size, offset, out);
  return HURRAY_OK;
}

}  // namespace hurray::gpu_stream
