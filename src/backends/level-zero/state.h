// libhurray-level-zero.so, the Level Zero device plugin (device tag 0x07),
// plugin ABI hurray_backend_v1: this header holds its state (drivers,
// devices, allocations, event pools) and the helpers every file of
// src/backends/level-zero uses; one file a concern: device (probe), memory
// (allocation, copies, classify), sync (events), ipc (export and import,
// dma-buf descriptors), plugin (native handles and the table). It links no
// Level Zero library: probe() dlopens libze_loader.so.1. The user reference
// (native handle slots, classes, events, IPC kinds, threads) is
// docs/backends/level-zero.md.
#pragma once

#include <dlfcn.h>
#include <fcntl.h>
#include <hurray_backend.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "api.h"
#include "class_name.h"
#include "kit/align.h"
#include "kit/enter.h"
#include "kit/entry.h"
#include "kit/errors.h"
#include "kit/ipc.h"
#include "kit/library.h"
#include "kit/table.h"

namespace hurray::level_zero {


constexpr const char *kLibrary = "libze_loader.so.1";
constexpr uint32_t kEventsPerPool = 64;
constexpr uint32_t kIpcMemoryKind = hurray::kit::fourcc('Z', 'E', 'M', '1');  // ze_ipc_mem_handle_t
constexpr uint32_t kIpcEventKind = hurray::kit::fourcc('Z', 'E', 'E', '1');   // an event pool's
constexpr uint64_t kMaxAlignment = 1ull << 31;    // a u32 alignment
inline constexpr const char *kSonames[] = {kLibrary, nullptr};
inline constexpr hurray::kit::Library kLoader{nullptr, kSonames,
                                              "a Level Zero 1.0 or later loader is needed"};

// ---- errors ---------------------------------------------------------------

inline hurray_status status_of(ze_result_t r) noexcept {
  switch (r) {
    case ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY:
    case ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY:
    case ZE_RESULT_ERROR_UNSUPPORTED_SIZE:
      return HURRAY_E_OUT_OF_MEMORY;
    case ZE_RESULT_ERROR_UNINITIALIZED:
    case ZE_RESULT_ERROR_DEVICE_LOST:
    case ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET:
    case ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE:
    case ZE_RESULT_ERROR_UNSUPPORTED_VERSION:
    case ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE:
    case ZE_RESULT_ERROR_NOT_AVAILABLE:
      return HURRAY_E_DEVICE_UNAVAILABLE;
    case ZE_RESULT_ERROR_UNSUPPORTED_FEATURE:
      return HURRAY_E_UNSUPPORTED;
    case ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT:
      return HURRAY_E_ALIGNMENT;
    case ZE_RESULT_ERROR_INVALID_ARGUMENT:
    case ZE_RESULT_ERROR_INVALID_NULL_HANDLE:
    case ZE_RESULT_ERROR_INVALID_NULL_POINTER:
    case ZE_RESULT_ERROR_INVALID_SIZE:
    case ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT:
    case ZE_RESULT_ERROR_INVALID_ENUMERATION:
    case ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE:
      return HURRAY_E_INVALID_ARGUMENT;
    default:
      return HURRAY_E_BACKEND;
  }
}

// "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", or "ze_result_t 0x7abcdef0".
template <size_t N>
const char *result_text(ze_result_t r, char (&buf)[N]) noexcept {
  if (const char *known = hurray::level_zero::result_name(r)) return known;
  std::snprintf(buf, N, "ze_result_t 0x%08x", static_cast<unsigned>(r));
  return buf;
}

// A ze_result_t for kit::code_fail: "[zeMemAllocDevice]
// ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY: <details>"; the status follows the
// result unless the call gives one.
inline hurray::kit::VendorCode ze_code(ze_result_t r) noexcept {
  hurray::kit::VendorCode c{status_of(r), hurray::level_zero::result_name(r), {}};
  if (c.name == nullptr) result_text(r, c.number);
  return c;
}
using hurray::kit::code_fail;
using hurray::kit::fail;
using hurray::kit::refuse;

using hurray::plugin::class_name;

inline bool is_device_class(uint8_t mc) noexcept {
  return mc == HURRAY_MEMORY_STANDARD || mc == HURRAY_MEMORY_PEER;
}
// ---- state ----------------------------------------------------------------

struct Driver {
  ze_driver_handle_t handle = nullptr;
  ze_context_handle_t context = nullptr;
  uint32_t index = 0;          // in zeDriverGet order
  uint32_t version = 0;        // ze_driver_properties_t.driverVersion
  ze_api_version_t api = ZE_API_VERSION_1_0;
  ze_ipc_property_flags_t ipc = 0;
  bool ipc_memory() const noexcept { return (ipc & ZE_IPC_PROPERTY_FLAG_MEMORY) != 0; }
  bool ipc_events() const noexcept { return (ipc & ZE_IPC_PROPERTY_FLAG_EVENT_POOL) != 0; }
};

// Where an event of event_record lives.
struct Slot {
  size_t pool = 0;
  uint32_t index = 0;
};

struct Pool {
  ze_event_pool_handle_t handle = nullptr;
  ze_event_handle_t events[kEventsPerPool] = {};  // made on first use, kept
};

// An event opened by ipc_import_event.
struct ImportedEvent {
  ze_event_pool_handle_t pool = nullptr;
  int fd = -1;  // the dup given to the driver, or -1
};

struct Device {
  int32_t ordinal = 0;
  Driver *driver = nullptr;
  ze_device_handle_t handle = nullptr;
  ze_device_properties_t props{};
  std::string name;
  uint32_t group = 0;  // command queue group ordinal of `list`
  bool unified = false;
  std::string unified_why;     // why UNIFIED is not served
  std::vector<int32_t> peers;  // ordinals of devices that can access this one's memory
  std::string peer_why;        // why PEER is not served

  std::mutex mu;  // guards what follows
  ze_command_list_handle_t list = nullptr;
  ze_event_pool_handle_t copy_pool = nullptr;
  ze_event_handle_t copy_event = nullptr;
  std::vector<Pool> pools;
  std::vector<Slot> free_slots;
  std::unordered_map<ze_event_handle_t, Slot> lent;
  std::unordered_map<ze_event_handle_t, ImportedEvent> imported;
  bool ipc_pools = false;  // the pools carry ZE_EVENT_POOL_FLAG_IPC

  uint32_t memory_classes() const noexcept {
    return (1u << HURRAY_MEMORY_STANDARD) | (1u << HURRAY_MEMORY_HOST_PINNED) |
           (unified ? 1u << HURRAY_MEMORY_UNIFIED : 0u) |
           (peers.empty() ? 0u : 1u << HURRAY_MEMORY_PEER);
  }
};

// The plugin's record of one allocation: hurray_backend_allocation.plugin_data.
struct Allocation {
  int32_t device = 0;
  uint8_t memory_class = 0;
  uint64_t byte_size = 0;
  void *base = nullptr;  // what zeMemFree / zeMemCloseIpcHandle take
  void *ptr = nullptr;   // data: base, or the first aligned address inside it
  bool imported = false; // from ipc_import_memory
  int ipc_fd = -1;       // imported: the dup given to the driver
};

// release_after's waiter thread (release.cpp), stopped and joined first at
// shutdown.
struct Releaser;
struct ReleaserDelete {
  void operator()(Releaser *r) const noexcept;
};

struct State {
  void *lib = nullptr;
  Api ze;
  std::vector<std::unique_ptr<Driver>> drivers;  // fixed after probe
  std::vector<std::unique_ptr<Device>> devices;  // fixed after probe

  std::mutex mu;                           // guards what follows
  std::map<uintptr_t, Allocation *> live;  // by data address (empty buffers have none)
  std::vector<Allocation *> empties;       // zero-byte allocations have no address
  std::unique_ptr<Releaser, ReleaserDelete> releaser;  // release_after, made under mu
};

using hurray::kit::find_device;

using hurray::kit::alignment_of;
using hurray::kit::is_aligned;

using hurray::kit::note;

// ---- file descriptors in IPC handles -----------------------------------------

// The first int of an IPC handle, when it is an open dma-buf descriptor of
// this process (see "File descriptors" above), else -1.
inline int dmabuf_fd_in(const char (&data)[ZE_MAX_IPC_HANDLE_SIZE]) noexcept {
  int fd = -1;
  std::memcpy(&fd, data, sizeof fd);
  if (fd < 0 || fcntl(fd, F_GETFD) < 0) return -1;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  char target[128] = "";
  const ssize_t n = readlink(path, target, sizeof target - 1);
  if (n <= 0) return -1;
  target[n] = '\0';
  // "/dmabuf:<name>" on current kernels, "anon_inode:dmabuf" on older ones.
  return std::strstr(target, "dmabuf") != nullptr ? fd : -1;
}

// Export side: a close-on-exec dup of the handle's dma-buf fd for the caller,
// or -1 when the handle carries none.
inline hurray_status export_fd(const char (&data)[ZE_MAX_IPC_HANDLE_SIZE], int *out,
                        hurray_error *err) noexcept {
  return hurray::kit::dup_fd(dmabuf_fd_in(data), out,
                             "the IPC handle's descriptor", err);
}

// Import side: with fd >= 0, dup it and write the dup's number into the
// handle's first int. *dup_out is the dup (or -1), owned by the caller.
inline hurray_status import_fd(int fd, char (&data)[ZE_MAX_IPC_HANDLE_SIZE], int *dup_out,
                        const char *what, hurray_error *err) noexcept {
  if (const hurray_status st = hurray::kit::dup_fd(fd, dup_out, what, err))
    return st;
  if (*dup_out >= 0) std::memcpy(data, dup_out, sizeof *dup_out);
  return HURRAY_OK;
}

// ---- defined in the other files of the plugin ------------------------------

void release_memory(State *s, Allocation *a) noexcept;
void register_allocation(State *s, Allocation *a);
void fill_out(const Allocation &a, uint32_t alignment, hurray_backend_allocation *out) noexcept;
hurray_status check_class(const Device &d, uint8_t mc, hurray_error *err) noexcept;
// What shared memory needs, for `what` (HURRAY_ALLOC_SHAREABLE,
// ipc_import_memory): a device class (STANDARD, PEER: Level Zero 1.4 shares
// device allocations only) and a driver that shares memory between
// processes; HURRAY_E_UNSUPPORTED otherwise.
hurray_status check_shareable(const Device &d, uint8_t mc, const char *what,
                              hurray_error *err) noexcept;

// The entry points and the table (src/backends/kit/entries.h).
#include "kit/entries.h"

}  // namespace hurray::level_zero
