// Virtual memory management with POSIX file descriptors, declared once for
// both runtimes and defined once over their calls (cuMemCreate,
// hipMemCreate) in gpu-stream/runtime_vmm.cpp, except vmm_device_can: each
// runtime's vmm.cpp (src/backends/cuda, src/backends/hip). gpu-stream/vmm.cpp
// decides when they are used (rt::kHasVmm, runtime.h). Included by driver.h
// after the runtime's own runtime.h (Api, DeviceRef, Result). Handles are
// the runtime's generic allocation handles, carried as integers.
#pragma once

#include <cstdint>

namespace hurray::gpu_stream::rt {

// The device makes VMM memory exportable as a file descriptor (the runtime
// has the calls and says the device can); *granularity: the size every
// allocation is a multiple of.
bool vmm_probe(const Api &api, const DeviceRef &d, uint64_t *granularity) noexcept;
// What the runtime asks besides the calls and the granularity (CUDA: the
// device's attributes; HIP: the runtime's major version).
bool vmm_device_can(const Api &api, const DeviceRef &d) noexcept;
Result vmm_create(const Api &api, const DeviceRef &d, uint64_t size, uint64_t *handle) noexcept;
// Reserve size bytes aligned to align, map the handle there and give device
// d read-write access; on failure what was done is undone and *function
// names the call that failed.
Result vmm_map(const Api &api, const DeviceRef &d, uint64_t handle, uint64_t size, uint64_t align,
               uintptr_t *base, const char **function) noexcept;
void vmm_unmap(const Api &api, uintptr_t base, uint64_t size) noexcept;  // and free the range
void vmm_release(const Api &api, uint64_t handle) noexcept;
// The VMM allocation mapped at p (retained: vmm_release it), or an error
// when p is not VMM memory.
Result vmm_retain(const Api &api, uintptr_t p, uint64_t *handle) noexcept;
Result vmm_export(const Api &api, uint64_t handle, int *fd) noexcept;  // a new descriptor
Result vmm_import(const Api &api, int fd, uint64_t *handle) noexcept;  // fd stays the caller's

}  // namespace hurray::gpu_stream::rt
