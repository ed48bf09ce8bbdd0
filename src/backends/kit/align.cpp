// See align.h.
#include "align.h"

namespace hurray::kit {

uint32_t alignment_of(uintptr_t p) noexcept {
  constexpr uintptr_t kMax = uintptr_t{1} << 31;
  if (p == 0) return static_cast<uint32_t>(kMax);
  const uintptr_t low = p & (~p + 1);
  return static_cast<uint32_t>(low < kMax ? low : kMax);
}

uintptr_t align_up(uintptr_t p, uint64_t align) noexcept {
  const uintptr_t mask = static_cast<uintptr_t>(align) - 1;
  if (p > UINTPTR_MAX - mask) return 0;
  return (p + mask) & ~mask;
}

bool padded_size(uint64_t size, uint64_t align, uint64_t base_align, uint64_t *out) noexcept {
  const uint64_t extra = base_align >= align ? 0 : align - base_align;
  if (size > UINT64_MAX - extra) return false;
  *out = size + extra;
  return true;
}

uintptr_t place(uintptr_t base, uint64_t block_size, uint64_t size, uint64_t align) noexcept {
  const uintptr_t d = align_up(base, align);
  if (d == 0 || d < base) return 0;
  const uint64_t skip = d - base;
  if (skip > block_size || size > block_size - skip) return 0;
  return d;
}

}  // namespace hurray::kit
