// The GPU stream driver: what the CUDA and HIP plugins read from a memory
// handle another process sent (ipc_import_memory), before any vendor call.
// Vendor-free (no cuda.h, no HIP header), so that tests/fuzz compiles it on
// its own (fuzz_gpu_ipc_parse). Every refusal is HURRAY_E_INVALID_ARGUMENT
// (the channel stays open and gives the handoff back) with a message that
// starts with BP-IPC-DEVMEM (docs/spec/ipc.md, "Hostile peers").
#pragma once

#include <hurray_backend.h>

#include <cstddef>
#include <cstdint>

namespace hurray::gpu_stream {

inline constexpr const char *kRuleDevMem = "BP-IPC-DEVMEM";

// What crosses beside a VMM descriptor, in the handle's first 8 vendor bytes:
// the size of the physical allocation (what the consumer maps); zeros after.
struct VmmWire {
  uint64_t size;
};

// A VMM descriptor handoff (kind `kind`, meaning e.g. "a CUDA VMM memory
// descriptor"): its descriptor is there and is no folder, pipe or socket;
// the allocation's size (*size) is a non-zero multiple of the device's
// granularity; [offset, offset + byte_size) is non-empty and inside it.
hurray_status parse_vmm(const hurray_backend_ipc_handle *h, uint32_t kind, const char *meaning,
                        uint64_t granularity, uint64_t *size, hurray_error *err) noexcept;

// A runtime IPC memory handle (kind `kind`): no descriptor, a non-empty
// buffer; its n vendor bytes copied to `vendor`.
hurray_status parse_memory(const hurray_backend_ipc_handle *h, uint32_t kind, const char *meaning,
                           void *vendor, size_t n, hurray_error *err) noexcept;

// Once the handle is open: it maps a block of block_size bytes whose start
// is `at` bytes before the opened base; offset + byte_size must lie in it.
hurray_status check_in_block(const hurray_backend_ipc_handle &h, uint64_t at,
                             uint64_t block_size, hurray_error *err) noexcept;

// Prefix err's message with "BP-IPC-DEVMEM: " (a refusal of what the peer
// sent that a vendor call or the kit worded); returns status.
hurray_status name_devmem_rule(hurray_error *err, hurray_status status) noexcept;

}  // namespace hurray::gpu_stream
