// libhurray-vulkan.so, the Vulkan device plugin (device tag 0x04), plugin
// ABI hurray_backend_v1: this header holds its state (instance, devices,
// memory types, timelines, allocations) and the helpers every file of
// src/backends/vulkan uses; one file a concern: functions (the tables of
// Vulkan functions), device (probe), memory, copy, sync (queue helpers,
// events), ipc, plugin (the entry points and the table). It links no Vulkan
// library: probe() dlopens the loader. Memory classes map to memory types (STANDARD is never
// mapped: data is the VkDeviceMemory handle), events are timeline
// semaphores, IPC is OPAQUE_FD. The user reference (native handle slots,
// classes, events, IPC kinds, threads) is docs/backends/vulkan.md.
#pragma once

#include <hurray_backend.h>

#include "class_name.h"
#include "functions.h"
#include "kit/enter.h"
#include "kit/entry.h"
#include "kit/errors.h"
#include "kit/ipc.h"
#include "kit/table.h"
#include <vulkan/vulkan.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

static_assert(sizeof(void *) == 8,
              "the Vulkan plugin needs a 64-bit host: Vulkan handles travel in "
              "pointer-sized fields");

namespace hurray::vulkan {

// ------------------------------------------------------------- errors ----

using hurray::kit::fail;
using hurray::kit::refuse;

// The VkResult codes of the Vulkan 1.3 headers and the common extensions.
inline constexpr hurray::kit::CodeText kVkResultNames[] = {
    {VK_SUCCESS, "VK_SUCCESS"},
    {VK_NOT_READY, "VK_NOT_READY"},
    {VK_TIMEOUT, "VK_TIMEOUT"},
    {VK_EVENT_SET, "VK_EVENT_SET"},
    {VK_EVENT_RESET, "VK_EVENT_RESET"},
    {VK_INCOMPLETE, "VK_INCOMPLETE"},
    {VK_ERROR_OUT_OF_HOST_MEMORY, "VK_ERROR_OUT_OF_HOST_MEMORY"},
    {VK_ERROR_OUT_OF_DEVICE_MEMORY, "VK_ERROR_OUT_OF_DEVICE_MEMORY"},
    {VK_ERROR_INITIALIZATION_FAILED, "VK_ERROR_INITIALIZATION_FAILED"},
    {VK_ERROR_DEVICE_LOST, "VK_ERROR_DEVICE_LOST"},
    {VK_ERROR_MEMORY_MAP_FAILED, "VK_ERROR_MEMORY_MAP_FAILED"},
    {VK_ERROR_LAYER_NOT_PRESENT, "VK_ERROR_LAYER_NOT_PRESENT"},
    {VK_ERROR_EXTENSION_NOT_PRESENT, "VK_ERROR_EXTENSION_NOT_PRESENT"},
    {VK_ERROR_FEATURE_NOT_PRESENT, "VK_ERROR_FEATURE_NOT_PRESENT"},
    {VK_ERROR_INCOMPATIBLE_DRIVER, "VK_ERROR_INCOMPATIBLE_DRIVER"},
    {VK_ERROR_TOO_MANY_OBJECTS, "VK_ERROR_TOO_MANY_OBJECTS"},
    {VK_ERROR_FORMAT_NOT_SUPPORTED, "VK_ERROR_FORMAT_NOT_SUPPORTED"},
    {VK_ERROR_FRAGMENTED_POOL, "VK_ERROR_FRAGMENTED_POOL"},
    {VK_ERROR_UNKNOWN, "VK_ERROR_UNKNOWN"},
    {VK_ERROR_OUT_OF_POOL_MEMORY, "VK_ERROR_OUT_OF_POOL_MEMORY"},
    {VK_ERROR_INVALID_EXTERNAL_HANDLE, "VK_ERROR_INVALID_EXTERNAL_HANDLE"},
    {VK_ERROR_FRAGMENTATION, "VK_ERROR_FRAGMENTATION"},
    {VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS, "VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS"},
    {VK_PIPELINE_COMPILE_REQUIRED, "VK_PIPELINE_COMPILE_REQUIRED"},
    {VK_ERROR_SURFACE_LOST_KHR, "VK_ERROR_SURFACE_LOST_KHR"},
    {VK_ERROR_NATIVE_WINDOW_IN_USE_KHR, "VK_ERROR_NATIVE_WINDOW_IN_USE_KHR"},
    {VK_SUBOPTIMAL_KHR, "VK_SUBOPTIMAL_KHR"},
    {VK_ERROR_OUT_OF_DATE_KHR, "VK_ERROR_OUT_OF_DATE_KHR"},
    {VK_ERROR_INCOMPATIBLE_DISPLAY_KHR, "VK_ERROR_INCOMPATIBLE_DISPLAY_KHR"},
    {VK_ERROR_VALIDATION_FAILED_EXT, "VK_ERROR_VALIDATION_FAILED_EXT"},
    {VK_ERROR_INVALID_SHADER_NV, "VK_ERROR_INVALID_SHADER_NV"},
    {VK_ERROR_NOT_PERMITTED_KHR, "VK_ERROR_NOT_PERMITTED_KHR"},
    {VK_THREAD_IDLE_KHR, "VK_THREAD_IDLE_KHR"},
    {VK_THREAD_DONE_KHR, "VK_THREAD_DONE_KHR"},
    {VK_OPERATION_DEFERRED_KHR, "VK_OPERATION_DEFERRED_KHR"},
    {VK_OPERATION_NOT_DEFERRED_KHR, "VK_OPERATION_NOT_DEFERRED_KHR"},
    {VK_ERROR_COMPRESSION_EXHAUSTED_EXT, "VK_ERROR_COMPRESSION_EXHAUSTED_EXT"},
};

inline const char *vk_result_name(VkResult r) noexcept {
  const char *name = hurray::kit::lookup(kVkResultNames, static_cast<int>(r));
  return name ? name : "VK_RESULT_UNKNOWN";
}

inline hurray_status status_of(VkResult r) noexcept {
  switch (r) {
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    case VK_ERROR_OUT_OF_POOL_MEMORY:
    case VK_ERROR_TOO_MANY_OBJECTS:
    case VK_ERROR_FRAGMENTATION:
      return HURRAY_E_OUT_OF_MEMORY;
    case VK_ERROR_DEVICE_LOST:
    case VK_ERROR_INCOMPATIBLE_DRIVER:
      return HURRAY_E_DEVICE_UNAVAILABLE;
    default:
      return HURRAY_E_BACKEND;
  }
}

// "[vkAllocateMemory] VK_ERROR_OUT_OF_DEVICE_MEMORY (what was being done)".
inline __attribute__((format(printf, 5, 6))) hurray_status vk_fail(
    hurray_error *err, hurray_status status, const char *function, VkResult r,
    const char *fmt, ...) noexcept {
  if (!err) return status;
  char what[192];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (what[0])
    return fail(err, status, "[%s] %s (%s)", function, vk_result_name(r), what);
  return fail(err, status, "[%s] %s", function, vk_result_name(r));
}
template <class Handle>
void *to_ptr(Handle h) noexcept {
  return reinterpret_cast<void *>(h);
}
template <class Handle>
Handle from_ptr(const void *p) noexcept {
  return reinterpret_cast<Handle>(const_cast<void *>(p));
}
// ------------------------------------------------------------ helpers ----

constexpr uint64_t round_up(uint64_t v, uint64_t a) noexcept {
  return (v + a - 1) / a * a;
}
constexpr uint64_t round_down(uint64_t v, uint64_t a) noexcept {
  return v / a * a;
}
inline uint64_t pow2_ceil(uint64_t v) noexcept {
  uint64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

constexpr int kClassCount = 3;  // STANDARD, HOST_PINNED, UNIFIED
using hurray::plugin::class_name;
inline bool class_mapped(unsigned c) noexcept { return c != HURRAY_MEMORY_STANDARD; }

constexpr VkMemoryPropertyFlags kDL = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
constexpr VkMemoryPropertyFlags kHV = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
constexpr VkMemoryPropertyFlags kHC = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
constexpr VkMemoryPropertyFlags kHCached = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
// Types the plugin never uses: they need features it does not enable.
constexpr VkMemoryPropertyFlags kNever =
    VK_MEMORY_PROPERTY_PROTECTED_BIT | VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT |
    VK_MEMORY_PROPERTY_DEVICE_COHERENT_BIT_AMD |
    VK_MEMORY_PROPERTY_DEVICE_UNCACHED_BIT_AMD;

constexpr int kStaging = -1;  // pseudo class: host-visible staging memory

inline bool type_serves(int cls, VkMemoryPropertyFlags f) noexcept {
  if (f & kNever) return false;
  switch (cls) {
    case HURRAY_MEMORY_STANDARD:
      return (f & kDL) != 0;
    case HURRAY_MEMORY_HOST_PINNED:
      return (f & kHV) && !(f & kDL);
    case HURRAY_MEMORY_UNIFIED:
      return (f & kDL) && (f & kHV);
    case kStaging:
      return (f & kHV) != 0;
    default:
      return false;
  }
}
inline int type_score(int cls, VkMemoryPropertyFlags f) noexcept {
  if (cls == HURRAY_MEMORY_STANDARD) return (f & kHV) ? 0 : 8;
  int s = ((f & kHC) ? 8 : 0) + ((f & kHCached) ? 4 : 0);
  if (cls == kStaging && !(f & kDL)) s += 1;
  return s;
}
inline const char *class_needs(unsigned c) noexcept {
  static_assert(HURRAY_MEMORY_STANDARD == 0 && HURRAY_MEMORY_HOST_PINNED == 1 &&
                HURRAY_MEMORY_UNIFIED == 2);
  static constexpr const char *kNeeds[] = {
      "a DEVICE_LOCAL memory type",                           // STANDARD
      "a HOST_VISIBLE memory type that is not DEVICE_LOCAL",  // HOST_PINNED
      "a DEVICE_LOCAL + HOST_VISIBLE memory type",            // UNIFIED
  };
  return c < std::size(kNeeds) ? kNeeds[c] : "nothing Vulkan offers";
}

inline std::string flag_text(VkMemoryPropertyFlags f) {
  std::string s;
  auto add = [&](VkMemoryPropertyFlags bit, const char *n) {
    if (!(f & bit)) return;
    if (!s.empty()) s += '|';
    s += n;
  };
  add(kDL, "DL");
  add(kHV, "HV");
  add(kHC, "HC");
  add(kHCached, "HCa");
  if (s.empty()) s = "none";
  return s;
}

// Closes an fd on scope exit unless released.
struct FdGuard {
  int fd = -1;
  ~FdGuard() {
    if (fd >= 0) ::close(fd);
  }
  int release() noexcept {
    int f = fd;
    fd = -1;
    return f;
  }
};
// --------------------------------------------------------------- state ----

struct Timeline {
  VkQueue queue = VK_NULL_HANDLE;
  VkSemaphore semaphore = VK_NULL_HANDLE;
  uint64_t value = 0;  // last value submitted for signalling
};

// release_after's waiter thread (release.cpp), stopped and joined first
// when its device goes.
struct ReleaseWaiter;
struct WaiterDelete {
  void operator()(ReleaseWaiter *w) const noexcept;
};

struct Device {
  int32_t ordinal = 0;
  VkPhysicalDevice phys = VK_NULL_HANDLE;
  VkDevice dev = VK_NULL_HANDLE;
  DeviceFns fn;
  VkPhysicalDeviceProperties props{};
  VkPhysicalDeviceMemoryProperties mem{};
  uint8_t device_uuid[VK_UUID_SIZE]{};
  uint8_t driver_uuid[VK_UUID_SIZE]{};
  VkDeviceSize max_alloc = 0;
  VkDeviceSize atom = 1;       // nonCoherentAtomSize
  VkDeviceSize map_align = 64;  // pow2 >= minMemoryMapAlignment, >= 64
  uint32_t family = 0;
  std::vector<uint32_t> families;  // every family with a queue (sharing)
  VkQueue queue = VK_NULL_HANDLE;
  int class_type[kClassCount] = {-1, -1, -1};
  bool ipc_memory = false;         // OPAQUE_FD export + import of buffers
  bool export_dedicated = false;   // exportable memory must be dedicated
  bool ipc_events = false;         // OPAQUE_FD export + import of timelines
  std::string ipc_memory_why;      // why ipc_memory is false
  std::string ipc_events_why;      // why ipc_events is false
  std::string label;               // "vulkan device 0 (llvmpipe ...)"
  std::string detail;

  std::mutex mu;  // queue submissions, timelines, imported
  VkCommandPool barrier_pool = VK_NULL_HANDLE;
  VkCommandBuffer host_barrier = VK_NULL_HANDLE;  // ALL_COMMANDS -> HOST
  std::deque<Timeline> timelines;                 // [0]: the plugin's queue
  std::vector<VkSemaphore> imported;              // from ipc_import_event
  std::unique_ptr<ReleaseWaiter, WaiterDelete> waiter;  // release_after, under mu

  Device() = default;
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;
  ~Device() {
    waiter.reset();
    if (!dev) return;
    if (fn.vkDeviceWaitIdle) fn.vkDeviceWaitIdle(dev);
    if (fn.vkDestroySemaphore) {
      for (VkSemaphore s : imported) fn.vkDestroySemaphore(dev, s, nullptr);
      for (Timeline &t : timelines) fn.vkDestroySemaphore(dev, t.semaphore, nullptr);
    }
    if (barrier_pool && fn.vkDestroyCommandPool)
      fn.vkDestroyCommandPool(dev, barrier_pool, nullptr);
    if (fn.vkDestroyDevice) fn.vkDestroyDevice(dev, nullptr);
  }

  int pick_type(int cls, uint32_t allowed) const noexcept {
    int best = -1, best_score = -1;
    VkDeviceSize best_heap = 0;
    for (uint32_t i = 0; i < mem.memoryTypeCount; ++i) {
      if (!(allowed & (1u << i))) continue;
      const VkMemoryPropertyFlags f = mem.memoryTypes[i].propertyFlags;
      if (!type_serves(cls, f)) continue;
      const int s = type_score(cls, f);
      const VkDeviceSize heap = mem.memoryHeaps[mem.memoryTypes[i].heapIndex].size;
      if (s > best_score || (s == best_score && heap > best_heap)) {
        best = static_cast<int>(i);
        best_score = s;
        best_heap = heap;
      }
    }
    return best;
  }
  VkSharingMode sharing() const noexcept {
    return families.size() > 1 ? VK_SHARING_MODE_CONCURRENT : VK_SHARING_MODE_EXCLUSIVE;
  }
};

// One allocation: hurray_backend_allocation::plugin_data.
struct Allocation {
  Device *dev = nullptr;
  uint8_t cls = 0;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkBuffer buffer = VK_NULL_HANDLE;  // over the whole memory
  VkDeviceSize size = 0;             // allocationSize
  VkDeviceSize buffer_size = 0;      // size the VkBuffer was created with
  VkDeviceSize offset = 0;           // of data in the memory / buffer
  uint64_t byte_size = 0;
  uint32_t type = 0;
  uint32_t alignment = 0;
  bool coherent = true;
  bool exportable = false;
  bool dedicated = false;
  void *base = nullptr;  // mapping of the whole memory, or null
  uintptr_t key = 0;     // registry key

  void destroy() noexcept {
    if (!dev) return;
    if (base) dev->fn.vkUnmapMemory(dev->dev, memory);
    if (buffer) dev->fn.vkDestroyBuffer(dev->dev, buffer, nullptr);
    if (memory) dev->fn.vkFreeMemory(dev->dev, memory, nullptr);
    base = nullptr;
    buffer = VK_NULL_HANDLE;
    memory = VK_NULL_HANDLE;
  }
};

struct RegEntry {
  uintptr_t end;
  Allocation *allocation;
};

struct State {
  void *lib = nullptr;
  LoaderFns loader;
  VkInstance instance = VK_NULL_HANDLE;
  InstanceFns fn;
  std::vector<std::unique_ptr<Device>> devices;
  std::mutex reg_mu;
  std::multimap<uintptr_t, RegEntry> registry;  // by data (or handle)

  State() = default;
  State(const State &) = delete;
  State &operator=(const State &) = delete;
  ~State() {
    for (auto &d : devices)
      if (d->fn.vkDeviceWaitIdle) d->fn.vkDeviceWaitIdle(d->dev);
    for (auto &e : registry) {
      e.second.allocation->destroy();
      delete e.second.allocation;
    }
    registry.clear();
    devices.clear();
    if (instance && fn.vkDestroyInstance) fn.vkDestroyInstance(instance, nullptr);
    if (lib) dlclose(lib);
  }

  void add(Allocation *a, uintptr_t start, uintptr_t end) {
    std::lock_guard<std::mutex> lock(reg_mu);
    a->key = start;
    registry.emplace(start, RegEntry{end, a});
  }
  void remove(Allocation *a) noexcept {
    std::lock_guard<std::mutex> lock(reg_mu);
    auto range = registry.equal_range(a->key);
    for (auto it = range.first; it != range.second; ++it)
      if (it->second.allocation == a) {
        registry.erase(it);
        return;
      }
  }
};

inline State *state_of(void *s) noexcept { return static_cast<State *>(s); }

// A Vulkan structure of type T with its sType and pNext set, the rest zero.
template <class T>
T vk_struct(VkStructureType type, const void *next = nullptr) noexcept {
  T s{};
  s.sType = type;
  s.pNext = const_cast<void *>(next);
  return s;
}

// What makes a semaphore a timeline (initial value 0); next as pNext.
inline VkSemaphoreTypeCreateInfo timeline_type(const void *next = nullptr) noexcept {
  auto type =
      vk_struct<VkSemaphoreTypeCreateInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, next);
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  return type;
}

// The usage of every buffer the plugin creates.
constexpr VkBufferUsageFlags kBufferUsage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                            VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                            VK_BUFFER_USAGE_TRANSFER_DST_BIT;

// ---- defined in the other files of the plugin ------------------------------

hurray_status probe_impl(void **out_state, hurray_error *err);
VkResult create_buffer(Device &d, uint64_t size, VkBufferUsageFlags usage, bool external,
                       VkBuffer *out) noexcept;
hurray_status make_memory(Device &d, Allocation &a, uint64_t size, bool external,
                          int import_fd, uint64_t import_size, int forced_type,
                          hurray_error *err);
void fill_out(const Allocation &a, int32_t device, hurray_backend_allocation *out);
void register_allocation(State &s, Allocation *a, const hurray_backend_allocation &out);
hurray_status check_class(const Device &d, uint8_t cls, hurray_error *err);
hurray_status alloc_impl(State &s, Device *d, uint8_t cls, uint64_t byte_size, uint32_t alignment,
                         uint32_t flags, hurray_backend_allocation *out, hurray_error *err);
hurray_status copy_impl(const hurray_backend_allocation *alloc, uint64_t offset, void *host,
                        uint64_t n, bool to_host, hurray_error *err);
VkResult submit_locked(Device &d, VkQueue queue, VkCommandBuffer cb,
                       VkSemaphore wait, uint64_t wait_value, VkSemaphore signal,
                       uint64_t signal_value, VkFence fence) noexcept;
VkResult create_timeline(Device &d, VkSemaphore *out) noexcept;
hurray_status drain_plugin_queue(Device &d, hurray_error *err);
hurray_status sync_mapping(Device &d, VkDeviceMemory memory, VkDeviceSize alloc_size,
                           uint64_t start, uint64_t n, bool flush,
                           hurray_error *err);
hurray_status event_record_impl(Device *d, void *stream, void **event, uint64_t *value,
                                hurray_error *err);
hurray_status event_wait_impl(Device *d, void *event, uint64_t value, void *stream,
                              hurray_error *err);
void event_release_impl(State &s, int32_t device, void *event) noexcept;
hurray_status ipc_export_memory_impl(State &, const hurray_backend_allocation *alloc,
                                     hurray_backend_ipc_handle *out, hurray_error *err);
hurray_status ipc_import_memory_impl(State &s, Device *d, const hurray_backend_ipc_handle *h,
                                     uint8_t cls, hurray_backend_allocation *out,
                                     hurray_error *err);
hurray_status ipc_export_event_impl(Device *d, void *event, hurray_backend_ipc_handle *out,
                                    hurray_error *err);
hurray_status ipc_import_event_impl(Device *d, const hurray_backend_ipc_handle *h, void **event,
                                    hurray_error *err);

// The entry points and the table (src/backends/kit/entries.h).
#include "kit/entries.h"

}  // namespace hurray::vulkan
