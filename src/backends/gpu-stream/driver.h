// The one driver of the CUDA and HIP plugins (src/backends/gpu-stream):
// stream-ordered GPU runtimes with a fixed base alignment, binary events,
// 64-byte IPC handles and one plugin stream per device. Compiled into both
// plugins; each plugin's folder holds the runtime.h (types, names, making a
// device current) and runtime.cpp (the calls whose shape differs) this file
// declares. docs/backends/cuda.md and docs/backends/hip.md are the user
// references.
#pragma once

#include <hurray_backend.h>

#include <array>
#include <cstdarg>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "class_name.h"
#include "kit/align.h"
#include "kit/enter.h"
#include "kit/entry.h"
#include "kit/errors.h"
#include "kit/ipc.h"
#include "kit/library.h"
#include "kit/registry.h"
#include "kit/table.h"
#include "runtime.h"  // the plugin's own: src/backends/cuda or src/backends/hip
#include "runtime_vmm.h"  // after it: what its vmm.cpp defines

namespace hurray::gpu_stream {

using hurray::kit::Allocation;
using hurray::kit::fail;
using hurray::kit::refuse;
using hurray::plugin::class_name;
using rt::Api;
using rt::Result;

// ---- state ----------------------------------------------------------------

struct Device {
  rt::DeviceRef ref;             // the runtime's device (and context)
  rt::Stream stream = nullptr;   // the plugin's, non-blocking
  std::string name;
  uint64_t total_mem = 0;
  bool map_host = false;       // the device can map host memory (HOST_PINNED)
  bool managed = false;        // the device has managed memory (UNIFIED)
  bool ipc_events = false;     // an interprocess event could be made and exported
  std::vector<int32_t> peers;  // devices that can access this device's memory

  uint64_t vmm_granularity = 0;  // non-zero: VMM memory exportable as descriptors (vmm.cpp)

  std::mutex peer_mu;          // guards peers_enabled
  bool peers_enabled = false;  // peer access enabled from every peer
};

// release_after's worker (release.cpp), stopped and joined first at shutdown.
struct Releaser;
struct ReleaserDelete {
  void operator()(Releaser *r) const noexcept;
};

// The runtime's IPC memory handles this process has opened (ipc_wrapped.cpp):
// each once per device, however many buffers of its allocation arrive,
// closed when the last import of it is freed.
struct OpenedHandles {
  struct Entry {
    uintptr_t base = 0;
    uint64_t refs = 0;
  };
  std::mutex mu;
  std::map<std::pair<int32_t, std::array<uint8_t, 64>>, Entry> by_handle;
};

struct State {
  void *lib = nullptr;
  std::string lib_name;
  Api api;
  int version = 0;  // the driver's or runtime's, as the runtime numbers it
  std::vector<std::unique_ptr<Device>> devices;  // fixed after probe
  hurray::kit::Registry live;                    // every allocation not yet freed

  bool shareable_vmm = true;  // SHAREABLE device memory by VMM where it can be (vmm.cpp)
  std::unique_ptr<OpenedHandles> opened = std::make_unique<OpenedHandles>();

  std::mutex mu;                                       // guards releaser
  std::unique_ptr<Releaser, ReleaserDelete> releaser;  // made on first release_after
};

// rt_fail.cpp: "[cuMemAlloc] CUDA_ERROR_OUT_OF_MEMORY: out of memory (details)"; the
// status follows the code unless `status` is given.
__attribute__((format(printf, 6, 7))) hurray_status rt_fail(hurray_error *err, const Api &api,
                                                            hurray_status status,
                                                            const char *function, Result code,
                                                            const char *fmt, ...) noexcept;

// In an entry point, after `const rt::Current current(s->api, d->ref);`
// (device d current until the end of the enclosing scope): OK when that
// worked, else its error "[<push function>] NAME: ... '<device>'". Called as
// `if (const hurray_status st = check_current(current, s->api, *d, err)) return st;`.
inline hurray_status check_current(const rt::Current &current, const Api &api, const Device &d,
                                   hurray_error *err) noexcept {
  if (current.result() == rt::kSuccess) return HURRAY_OK;
  return rt_fail(err, api, HURRAY_OK, rt::Current::kFunction, current.result(), "%s '%s'",
                 rt::Current::kWhat, d.name.c_str());
}

using hurray::kit::find_device;

inline void *vptr(uintptr_t p) noexcept { return reinterpret_cast<void *>(p); }
inline uintptr_t uptr(const void *p) noexcept { return reinterpret_cast<uintptr_t>(p); }

inline bool host_visible(uint8_t mc) noexcept {
  return mc == HURRAY_MEMORY_HOST_PINNED || mc == HURRAY_MEMORY_UNIFIED;
}

using hurray::kit::note;

void free_allocation(State *s, Allocation *a) noexcept;

// ---- IPC of memory the plugin did not allocate, and of VMM memory ---------

// ipc_wrapped.cpp: open a runtime IPC memory handle on device d (current),
// or take one more reference to it where this process opened it already;
// close_handle drops one, closing it with the last.
hurray_status open_handle(State *s, const Device &d, int32_t device, const rt::IpcMemHandle &h,
                          uintptr_t *base, hurray_error *err) noexcept;
void close_handle(const State *s, int32_t device, uintptr_t base) noexcept;
// record.cpp: the record of an allocation made or imported here, in the registry, and
// *out filled for it; on failure (out of host memory) give_back runs.
hurray_status record(State *s, const Allocation &a, void (*give_back)(const State *, const Allocation &),
                     hurray_backend_allocation *out, hurray_error *err) noexcept;

// The record of an import: handle.byte_size bytes at handle.offset of what
// is mapped at base.
inline Allocation imported_at(int32_t device, uint8_t memory_class,
                              const hurray_backend_ipc_handle &handle, uintptr_t base) noexcept {
  Allocation a;
  a.device = device;
  a.memory_class = memory_class;
  a.imported = true;
  a.byte_size = handle.byte_size;
  a.base = base;
  a.data = a.device_view = base + static_cast<uintptr_t>(handle.offset);
  return a;
}

// vmm.cpp: VMM (cuMemCreate) memory, made for SHAREABLE STANDARD allocations
// where the device can export it as a descriptor, exported and imported
// with a POSIX file descriptor, unmapped and released once.
bool use_vmm(const State *s, const Device &d, uint8_t memory_class, uint32_t flags) noexcept;
hurray_status vmm_alloc(State *s, Device *d, int32_t device, uint8_t memory_class, uint64_t n,
                        uint32_t align, hurray_backend_allocation *out, hurray_error *err) noexcept;
// Export the VMM allocation `handle` (vmm_size bytes); the buffer is
// byte_size bytes at offset. Device d is current.
hurray_status vmm_export(const State *s, const Device &d, uint64_t handle, uint64_t vmm_size,
                         uint64_t byte_size, uint64_t offset, hurray_backend_ipc_handle *out,
                         hurray_error *err) noexcept;
hurray_status vmm_import(State *s, Device *d, int32_t device,
                         const hurray_backend_ipc_handle *handle, uint8_t memory_class,
                         hurray_backend_allocation *out, hurray_error *err) noexcept;
void vmm_give_back(const State *s, const Allocation &a) noexcept;  // the device current

// ---- what each runtime does its own way (<plugin>/runtime.cpp) ------------

namespace rt {

// After the library is loaded and its functions resolved: start the runtime
// (CUDA: cuInit) and count its devices into *count, with the messages of
// each runtime. Sets s->version.
hurray_status start(State *s, int *count, hurray_error *err);
// Open runtime device `ordinal` into *d (its name, attributes, the plugin's
// stream, whether interprocess events work); false, with the reason noted in
// *why, to leave it out. close_device gives back what open_device took.
bool open_device(const Api &api, int ordinal, Device *d, std::string *why);
void close_device(const Api &api, Device &d) noexcept;
// Can `from` access the memory of `to`?
bool can_access_peer(const Api &api, const Device &from, const Device &to) noexcept;
// Enable access from the current device (peer) to d's memory; already
// enabled is success.
Result enable_peer_access(const Api &api, const Device &d) noexcept;

// One block of n bytes of class mc (STANDARD/PEER: device memory,
// HOST_PINNED: mapped pinned host memory, UNIFIED: managed memory), on the
// current device; *function names the call for the message.
Result alloc_block(const Api &api, uint8_t mc, uint64_t n, uintptr_t *base,
                   const char **function) noexcept;
void free_block(const Api &api, uint8_t mc, uintptr_t base) noexcept;
// The device's address of pinned host memory at base.
Result host_device_pointer(const Api &api, uintptr_t base, uintptr_t *view) noexcept;

// The class and runtime device of ptr (which must be memory the runtime
// knows as a linear buffer), or the error.
hurray_status pointer_class(const State *s, const Device &d0, const void *ptr, uint8_t *mc,
                            int *runtime_device, hurray_error *err);

}  // namespace rt

// ---- the entry points (src/backends/kit/entries.h; one file each concern) ----

#include "kit/entries.h"
hurray_status ipc_export_pointer(void *state, int32_t device, uint8_t memory_class,
                                 const void *data, uint64_t byte_size,
                                 hurray_backend_ipc_handle *out, hurray_error *err);

}  // namespace hurray::gpu_stream
