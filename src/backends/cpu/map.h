// The one aligned shared mapping of the CPU backend (map.cpp), used by a
// shareable allocation (cpu.cpp) and an import (ipc.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace hurray::detail {

// `len` bytes (a whole number of pages) of fd at `offset`, at an address
// aligned to `alignment` (a power of two; a page or less needs no more than
// mmap's own), with `prot`. nullptr and *error = errno on failure.
void *map_aligned(int fd, uint64_t offset, size_t len, uint32_t alignment, int prot,
                  int *error) noexcept;

}  // namespace hurray::detail
