// What the CUDA and HIP plugins share: the pieces that really have the same
// shape in both runtimes. Compiled into each plugin (gpu_common.cpp is a
// source of both targets, never a library of its own); not installed.
//
//  - error reporting: filling a hurray_error, and the one format every vendor
//    error takes: "[cuMemAlloc] CUDA_ERROR_OUT_OF_MEMORY: out of memory";
//  - opening the vendor library, from an environment override or a list of
//    sonames, with the dlerror() text of each failure;
//  - alignment arithmetic: both runtimes give a fixed base alignment, and a
//    larger one is had by over-allocating and aligning inside;
//  - the record of one allocation and the registry of live ones (for
//    classify and shutdown);
//  - packing a 64-byte vendor IPC handle into hurray_backend_ipc_handle.
//
// Everything here is pure logic or libc, so tests/backends/{cuda,hip}
// unit-test it without a device.
#pragma once

#include <hurray_backend.h>

#include "../class_name.h"

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace hurray::gpu {

// ---- errors -----------------------------------------------------------------

// Fill *err (when not NULL) with status and the printf-style message; returns
// status. The message is cut to fit hurray_error.message.
__attribute__((format(printf, 3, 4))) hurray_status fail(hurray_error *err, hurray_status status,
                                                         const char *fmt, ...) noexcept;
__attribute__((format(printf, 3, 0))) hurray_status vfail(hurray_error *err, hurray_status status,
                                                          const char *fmt, va_list ap) noexcept;

// "[function] name: description (details)": the message of a vendor error.
// description may be NULL or empty (then "[function] name (details)"), and
// so may details_fmt.
__attribute__((format(printf, 6, 7))) hurray_status vendor_fail(
    hurray_error *err, hurray_status status, const char *function, const char *name,
    const char *description, const char *details_fmt, ...) noexcept;
__attribute__((format(printf, 6, 0))) hurray_status vendor_vfail(
    hurray_error *err, hurray_status status, const char *function, const char *name,
    const char *description, const char *details_fmt, va_list ap) noexcept;

// "STANDARD", "HOST_PINNED", "UNIFIED", "PEER", else "reserved"/"private"/"invalid".
using hurray::plugin::class_name;

// ---- the vendor library -------------------------------------------------------

// dlopen (RTLD_NOW | RTLD_LOCAL) the file named by the environment variable
// `env_var` when it is set and not empty, else the first of `sonames` (a
// NULL-terminated list) that loads. On failure returns NULL and sets *why to
// the dlerror() text (of each name tried, joined with "; "). *opened receives
// the name that was loaded.
void *open_library(const char *env_var, const char *const *sonames, std::string *opened,
                   std::string *why);

// ---- alignment ----------------------------------------------------------------

constexpr bool is_pow2(uint64_t v) noexcept { return v != 0 && (v & (v - 1)) == 0; }

// The largest power of two that divides p, at most 2^31 (a u32 alignment).
uint32_t alignment_of(uintptr_t p) noexcept;

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

// ---- allocations ----------------------------------------------------------------

// The plugin's record of one allocation: hurray_backend_allocation.plugin_data.
struct Allocation {
  int32_t device = 0;
  uint8_t memory_class = 0;
  bool imported = false;  // opened from another process's IPC handle
  uint64_t byte_size = 0;
  uintptr_t base = 0;         // what the runtime frees (or closes, when imported)
  uintptr_t data = 0;         // what was handed out: base + placement offset
  uintptr_t device_view = 0;  // HOST_PINNED: the device's address of data; else data
};

// The live allocations of a plugin, by data address. Thread-safe.
class Registry {
 public:
  // False when out of memory (the allocation is then not recorded).
  bool add(Allocation *a) noexcept;
  void remove(const Allocation *a) noexcept;
  // The allocation whose [data, data + byte_size) holds p, copied to *out.
  bool find(uintptr_t p, Allocation *out) const noexcept;
  // Remove and return any recorded allocation, NULL when there is none.
  Allocation *take_any() noexcept;

 private:
  mutable std::mutex mu_;
  std::map<uintptr_t, Allocation *> by_data_;
};

// ---- IPC handles --------------------------------------------------------------------

constexpr uint32_t fourcc(char a, char b, char c, char d) noexcept {
  return static_cast<uint32_t>(static_cast<unsigned char>(a)) |
         static_cast<uint32_t>(static_cast<unsigned char>(b)) << 8 |
         static_cast<uint32_t>(static_cast<unsigned char>(c)) << 16 |
         static_cast<uint32_t>(static_cast<unsigned char>(d)) << 24;
}

// Fill *out: kind, fd -1, byte_size, offset, and the n vendor bytes (n <= 64)
// at the start of out->bytes, zeros after them.
void pack_ipc(uint32_t kind, const void *vendor, size_t n, uint64_t byte_size, uint64_t offset,
              hurray_backend_ipc_handle *out) noexcept;

// Check that *h is of `kind` and copy its first n vendor bytes (n <= 64) to
// `vendor`. On failure returns false and *why says what is wrong.
bool unpack_ipc(const hurray_backend_ipc_handle *h, uint32_t kind, void *vendor, size_t n,
                const char **why) noexcept;

}  // namespace hurray::gpu
