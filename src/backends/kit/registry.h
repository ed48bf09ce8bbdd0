// The plugin's record of one allocation and the registry of the live ones,
// by data address (for classify and for freeing what is left at shutdown).
// Part of the plugin kit; used by the CUDA and HIP plugins.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>

namespace hurray::kit {

// hurray_backend_allocation.plugin_data of a plugin that uses the registry.
struct Allocation {
  int32_t device = 0;
  uint8_t memory_class = 0;
  bool imported = false;  // opened from another process's IPC handle
  uint64_t byte_size = 0;
  uintptr_t base = 0;         // what the runtime frees (or closes, when imported)
  uintptr_t data = 0;         // what was handed out: base + placement offset
  uintptr_t device_view = 0;  // HOST_PINNED: the device's address of data; else data
  // Virtual memory management (CUDA cuMemCreate): the physical allocation's
  // handle, mapped at base for vmm_size bytes (made here, or imported from a
  // descriptor); 0 for memory of the runtime's ordinary allocator.
  uint64_t vmm_handle = 0;
  uint64_t vmm_size = 0;
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

}  // namespace hurray::kit
