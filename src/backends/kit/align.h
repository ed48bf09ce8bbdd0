// Alignment arithmetic shared by the plugins: powers of two, the alignment
// an address has, and the over-allocate-and-align loop of runtimes that give
// a fixed base alignment (CUDA, HIP: one try, then a padded block). Part of
// the plugin kit; pure logic, unit-tested without a device.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hurray::kit {

constexpr bool is_pow2(uint64_t v) noexcept { return v != 0 && (v & (v - 1)) == 0; }

// The largest power of two that divides p, at most 2^31 (a u32 alignment).
uint32_t alignment_of(uintptr_t p) noexcept;
template <class T>
uint32_t alignment_of(T *p) noexcept {
  return alignment_of(reinterpret_cast<uintptr_t>(p));
}

inline bool is_aligned(const void *p, uint64_t alignment) noexcept {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

// The first multiple of `align` (a power of two) at or above p; 0 when that
// does not fit in uintptr_t.
uintptr_t align_up(uintptr_t p, uint64_t align) noexcept;

// How many bytes to ask for so that `size` bytes aligned to `align` fit in
// any block the runtime returns aligned to `base_align` (both powers of two):
// size when base_align >= align, else size + align - base_align. False on
// overflow.
bool padded_size(uint64_t size, uint64_t align, uint64_t base_align, uint64_t *out) noexcept;

// Where `size` bytes aligned to `align` start inside the block
// [base, base + block_size): the aligned address, or 0 if they do not fit.
uintptr_t place(uintptr_t base, uint64_t block_size, uint64_t size, uint64_t align) noexcept;

// Allocate `size` bytes aligned to `align` with `alloc(bytes, &base)` (true on
// success; it records its own vendor error) and `release(base)`. The first
// block is kept when it happens to be aligned; otherwise it is given back and
// a block padded for the worst case (padded_size with the runtime's
// guaranteed `base_align`) is placed instead. *base is what the runtime must
// free, *data the aligned address handed out. kFailed: alloc() failed (it
// knows why); kTooLarge: the padded size overflows; kMisaligned: the padded
// block was not aligned to base_align either (the runtime broke its promise).
enum class AllocResult { kOk, kFailed, kTooLarge, kMisaligned };
template <class Alloc, class Release>
AllocResult alloc_aligned(uint64_t size, uint64_t align, uint64_t base_align, Alloc &&alloc,
                          Release &&release, uintptr_t *base, uintptr_t *data) {
  uintptr_t b = 0;
  if (!alloc(size, &b)) return AllocResult::kFailed;
  if (b % align == 0) {
    *base = *data = b;
    return AllocResult::kOk;
  }
  release(b);
  uint64_t padded = 0;
  if (!padded_size(size, align, base_align, &padded) || padded > SIZE_MAX)
    return AllocResult::kTooLarge;
  if (!alloc(padded, &b)) return AllocResult::kFailed;
  const uintptr_t d = place(b, padded, size, align);
  if (d == 0) {
    release(b);
    return AllocResult::kMisaligned;
  }
  *base = b;
  *data = d;
  return AllocResult::kOk;
}

}  // namespace hurray::kit
