// The GPU stream driver: virtual memory management (VMM) memory across
// processes. A SHAREABLE STANDARD allocation is made with the runtime's VMM
// calls where the device exports such memory as a POSIX file descriptor
// (CUDA: cuMemCreate with CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR; HIP: hipMemCreate,
// where HURRAY_HIP_SHAREABLE=vmm), and any
// VMM allocation (made here, or the caller's, wrapped) is exported as a
// descriptor that travels with SCM_RIGHTS, imported with
// cuMemImportFromShareableHandle, mapped into a range of its own and opened
// to the device. Each import is unmapped and released exactly once, when its
// allocation is freed; a peer that dies loses its mappings with its address
// space. docs/backends/cuda.md, "Memory across processes", says why VMM is
// preferred for SHAREABLE memory.
#include <unistd.h>

#include <cstdlib>
#include <new>

#include "driver.h"
#include "ipc_parse.h"

namespace hurray::gpu_stream {

namespace {

uint64_t round_up(uint64_t n, uint64_t to) noexcept { return (n + to - 1) / to * to; }

void give_back_vmm(const State *s, const Allocation &a) noexcept { vmm_give_back(s, a); }

}  // namespace

bool use_vmm(const State *s, const Device &d, uint8_t memory_class, uint32_t flags) noexcept {
  return rt::kHasVmm && s->shareable_vmm && d.vmm_granularity != 0 &&
         memory_class == HURRAY_MEMORY_STANDARD && (flags & HURRAY_ALLOC_SHAREABLE) != 0;
}

void vmm_give_back(const State *s, const Allocation &a) noexcept {
  rt::vmm_unmap(s->api, a.base, a.vmm_size);
  rt::vmm_release(s->api, a.vmm_handle);
}

hurray_status vmm_alloc(State *s, Device *d, int32_t device, uint8_t memory_class, uint64_t n,
                        uint32_t align, hurray_backend_allocation *out,
                        hurray_error *err) noexcept {
  const Api &api = s->api;
  const uint64_t g = d->vmm_granularity;
  if (n > UINT64_MAX - g)
    return refuse(err, HURRAY_E_OUT_OF_MEMORY, "%llu bytes cannot be allocated",
                  static_cast<unsigned long long>(n));
  const uint64_t size = round_up(n, g);
  uint64_t handle = 0;
  Result r = rt::vmm_create(api, d->ref, size, &handle);
  if (r != rt::kSuccess)
    return rt_fail(err, api, HURRAY_OK, rt::kVmmCreate, r,
                   "%llu bytes of VMM memory (SHAREABLE %s) on device %d '%s'",
                   static_cast<unsigned long long>(size), class_name(memory_class),
                   static_cast<int>(device), d->name.c_str());
  uintptr_t base = 0;
  const char *function = nullptr;
  r = rt::vmm_map(api, d->ref, handle, size, align > g ? align : g, &base, &function);
  if (r != rt::kSuccess) {
    rt::vmm_release(api, handle);
    return rt_fail(err, api, HURRAY_OK, function, r, "%llu bytes of VMM memory on device %d '%s'",
                   static_cast<unsigned long long>(size), static_cast<int>(device),
                   d->name.c_str());
  }
  Allocation a;
  a.device = device;
  a.memory_class = memory_class;
  a.byte_size = n;
  a.base = a.data = a.device_view = base;
  a.vmm_handle = handle;
  a.vmm_size = size;
  return record(s, a, give_back_vmm, out, err);
}

hurray_status vmm_export(const State *s, const Device &d, uint64_t handle, uint64_t vmm_size,
                         uint64_t byte_size, uint64_t offset, hurray_backend_ipc_handle *out,
                         hurray_error *err) noexcept {
  int fd = -1;
  const Result r = rt::vmm_export(s->api, handle, &fd);
  if (r != rt::kSuccess || fd < 0)
    return rt_fail(err, s->api, HURRAY_OK, rt::kVmmExport, r,
                   "a %llu-byte VMM allocation on '%s' as a POSIX file descriptor (it must be "
                   "made with %s)",
                   static_cast<unsigned long long>(vmm_size), d.name.c_str(), rt::kVmmFdType);
  const VmmWire w{vmm_size};
  hurray::kit::pack_ipc(rt::kIpcVmmKind, &w, sizeof w, byte_size, offset, out);
  out->fd = fd;
  return HURRAY_OK;
}

hurray_status vmm_import(State *s, Device *d, int32_t device,
                         const hurray_backend_ipc_handle *handle, uint8_t memory_class,
                         hurray_backend_allocation *out, hurray_error *err) noexcept {
  if (!rt::kHasVmm || d->vmm_granularity == 0)
    return refuse(err, HURRAY_E_UNSUPPORTED,
                  "ipc_import_memory: device %d '%s' cannot import VMM memory descriptors (no "
                  "virtual memory management with POSIX file descriptors)",
                  static_cast<int>(device), d->name.c_str());
  uint64_t size = 0;  // what the peer sent, checked before any vendor call (ipc_parse.cpp)
  if (const hurray_status st = parse_vmm(handle, rt::kIpcVmmKind, rt::kIpcMeaningVmm,
                                         d->vmm_granularity, &size, err))
    return st;
  const Api &api = s->api;
  const rt::Current current(s->api, d->ref);
  if (const hurray_status st = check_current(current, s->api, *d, err)) return st;
  uint64_t h = 0;
  Result r = rt::vmm_import(api, handle->fd, &h);
  if (r != rt::kSuccess)  // the peer's descriptor is no VMM export: its refusal
    return name_devmem_rule(
        err, rt_fail(err, api, HURRAY_OK, rt::kVmmImport, r,
                     "a descriptor on '%s' (not one %s made?)", d->name.c_str(),
                     rt::kVmmExport));
  uintptr_t base = 0;
  const char *function = nullptr;
  r = rt::vmm_map(api, d->ref, h, size, d->vmm_granularity, &base, &function);
  if (r != rt::kSuccess) {
    rt::vmm_release(api, h);
    // the size the peer named does not map (larger than what it sent?)
    return name_devmem_rule(
        err, rt_fail(err, api, HURRAY_OK, function, r,
                     "the %llu-byte VMM allocation of a descriptor on '%s'",
                     static_cast<unsigned long long>(size), d->name.c_str()));
  }
  Allocation a = imported_at(device, memory_class, *handle, base);
  a.vmm_handle = h;
  a.vmm_size = size;
  return record(s, a, give_back_vmm, out, err);
}

}  // namespace hurray::gpu_stream
