// The built-in CPU backend: aligned host allocations and shareable (memfd)
// allocations that another process can map, exported and imported through
// the backend's own IPC entries (ipc.cpp) like any plugin's.
#pragma once

#include <hurray.h>
#include <hurray_backend.h>

#include <cstddef>
#include <cstdint>

#include "../kit/ipc.h"

namespace hurray::detail {

// The IPC handle kind of a CPU memfd (docs/spec/ipc.md): 'CMFD' as a
// four-character code. bytes[0..3] carry the alignment the mapping needs
// (little-endian u32, 0: a page).
inline constexpr uint32_t kCpuMemfdKind = hurray::kit::fourcc('C', 'M', 'F', 'D');

struct CpuAllocation {
  void *data = nullptr;      // aligned base address; nullptr for 0 bytes
  int fd = -1;               // memfd of a shareable allocation (-1: none kept)
  void *map_base = nullptr;  // what to munmap (shareable) or free (heap)
  size_t map_len = 0;        // 0: heap allocation
};

// alignment: a power of two >= 64 (the caller checked).
hurray_status cpu_alloc(uint64_t byte_size, uint32_t alignment, bool shareable,
                        CpuAllocation *out, hurray_error *err) noexcept;
void cpu_free(const CpuAllocation &a) noexcept;

// A CpuAllocation kept in a hurray_backend_allocation without a heap block:
// plugin_data = the memfd (or -1), reserved[0] = mapping length,
// reserved[1] = what to munmap or free.
CpuAllocation cpu_unpack(const hurray_backend_allocation &a) noexcept;
void cpu_pack(const CpuAllocation &c, hurray_backend_allocation *a) noexcept;

// The IPC entries (ipc.cpp): a shareable allocation's memfd, and mapping a
// memfd another process exported (BP-IPC-SEAL, its size, its kind).
// The memfd handle of a shareable allocation with out->fd the allocation's
// own descriptor, lent: no dup; the caller must not close it and must hold
// the allocation until it stops using out->fd (ipc_export_memory dups it).
hurray_status cpu_ipc_describe_memory(const hurray_backend_allocation *a,
                                      hurray_backend_ipc_handle *out, hurray_error *err);
hurray_status cpu_ipc_export_memory(void *state, const hurray_backend_allocation *a,
                                    hurray_backend_ipc_handle *out, hurray_error *err);
hurray_status cpu_ipc_import_memory(void *state, int32_t device,
                                    const hurray_backend_ipc_handle *h, uint8_t memory_class,
                                    hurray_backend_allocation *out, hurray_error *err);

}  // namespace hurray::detail
