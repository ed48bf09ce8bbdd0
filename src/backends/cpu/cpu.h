// The built-in CPU backend: aligned host allocations and shareable (memfd)
// allocations that another process can map.
#pragma once

#include <hurray.h>

#include <cstddef>
#include <cstdint>

namespace hurray::detail {

struct CpuAllocation {
  void *data = nullptr;      // aligned base address; nullptr for 0 bytes
  int fd = -1;               // memfd of a shareable allocation
  void *map_base = nullptr;  // what to munmap (shareable) or free (heap)
  size_t map_len = 0;        // 0: heap allocation
};

// alignment: a power of two >= 64 (the caller checked).
hurray_status cpu_alloc(uint64_t byte_size, uint32_t alignment, bool shareable,
                        CpuAllocation *out, hurray_error *err) noexcept;
void cpu_free(const CpuAllocation &a) noexcept;

}  // namespace hurray::detail
