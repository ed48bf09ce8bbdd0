// vulkan.cpp - the Vulkan device plugin of libhurray: libhurray-vulkan.so,
// device tag 0x04 (HURRAY_DEVICE_VULKAN), plugin ABI hurray_backend_v1.
//
// Loading. The plugin links no Vulkan library. probe() dlopen()s the loader
// ("libvulkan.so.1", or the file named by $HURRAY_VULKAN_LOADER), takes
// vkGetInstanceProcAddr from it and resolves every other function through
// it (device functions through vkGetDeviceProcAddr, per device). A missing
// loader is HURRAY_E_DEVICE_UNAVAILABLE with the dlerror() text; a loader
// without a usable driver is HURRAY_E_DEVICE_UNAVAILABLE with e.g.
// "[vkCreateInstance] VK_ERROR_INCOMPATIBLE_DRIVER" (the loader's own
// VK_ICD_FILENAMES / VK_DRIVER_FILES pointing at a file that does not exist
// produces exactly that; the tests use it).
//
// Devices. One instance (API 1.2). Every physical device with Vulkan >= 1.2,
// the timelineSemaphore feature and a compute queue family becomes a device,
// in vkEnumeratePhysicalDevices order; others are skipped (probe fails, with
// the reasons, only when none is left). The VkDevice is created with
// timelineSemaphore and, where offered, VK_KHR_external_memory_fd and
// VK_KHR_external_semaphore_fd, and with queue 0 of every graphics, compute
// or transfer family, plus queue 1 of the plugin's family when that family
// has two queues (so a caller can vkGetDeviceQueue(device, family, 1) for a
// second queue). The plugin's queue is queue 0 of the first graphics+compute
// family (else the first compute family).
//
// Memory classes (TABLES.md §3) and the memory type that serves each:
//   STANDARD    a DEVICE_LOCAL type, preferring one that is not HOST_VISIBLE.
//               Never mapped, even where the type is host-visible (lavapipe):
//               data = the VkDeviceMemory handle, flags
//               HURRAY_HANDOFF_OPAQUE_DATA, host = NULL. Copies go through a
//               staging buffer and vkCmdCopyBuffer on the plugin's queue.
//   HOST_PINNED a HOST_VISIBLE type that is not DEVICE_LOCAL,
//   UNIFIED     a DEVICE_LOCAL + HOST_VISIBLE type; for both, HOST_COHERENT
//               first, then HOST_CACHED. Mapped for the allocation's life:
//               data = host = the mapped address, flags 0; copies are memcpy
//               through the mapping (with flush / invalidate when the type is
//               not coherent).
// Protected, lazily allocated and AMD device-coherent types are never used.
// A class no type can serve is HURRAY_E_DEVICE_UNAVAILABLE naming the class;
// PEER and unknown classes are HURRAY_E_MEMORY_CLASS. device_info.detail
// says which type serves which class.
//
// Sizes and alignment. The allocation size is rounded up to
// nonCoherentAtomSize. The guaranteed alignment of a mapped address is
// max(requested, minMemoryMapAlignment, 64): the memory is over-allocated
// when needed and data is the first suitably aligned address of the mapping
// (checked before alloc() returns). Every allocation has a VkBuffer over the
// whole VkDeviceMemory (usage STORAGE | TRANSFER_SRC | TRANSFER_DST, sharing
// CONCURRENT over the device's queue families when there are several);
// data lies at buffer/memory offset `offset` of the private record (0 for
// STANDARD). A caller that wants its own VkBuffer over a STANDARD
// allocation binds it to the VkDeviceMemory at offset 0.
//
// Copies (copy_to_host / copy_from_host) are synchronous, and ordered after
// every submission made before the call to the plugin's queue (native slot
// 3); work on other queues must be ordered with events first.
//
// Events. One timeline VkSemaphore per VkQueue the plugin signals on; the
// one of the plugin's own queue is "the device's timeline" (native slot 6).
// (A single timeline for all queues would be wrong: signals from two queues
// may execute out of order, and waiting for value N must not be satisfied by
// another queue's N+1.) event_record(stream) submits, on `stream` (a VkQueue
// of this device; NULL = the plugin's queue), an empty batch that signals the
// queue's timeline with its next value: *event = the VkSemaphore, *value =
// that value. On the plugin's own queue the batch also makes all device
// writes available to the host. event_wait(stream NULL) is vkWaitSemaphores
// on the host; with a stream it submits to that VkQueue an empty batch that
// waits for the value at ALL_COMMANDS, so every later submission to that
// queue runs after it. event_release has nothing to free for these shared
// timelines (they live until shutdown); it destroys semaphores made by
// ipc_import_event.
//
// IPC. With HURRAY_ALLOC_SHAREABLE the memory is allocated exportable as
// VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT. ipc_export_memory returns
// kind 1, an fd from vkGetMemoryFdKHR (the caller owns and closes it), the
// offset of data in the memory, and in `bytes` the memory type, allocation
// size, buffer size and device/driver UUIDs that an import must match.
// ipc_import_memory imports a dup() of handle->fd (the caller keeps and
// closes its own) on the device whose UUIDs match, and maps it for
// HOST_PINNED / UNIFIED. Events cross processes (kind 2: the timeline
// semaphore as an OPAQUE_FD) only where the device can export and import
// timeline semaphores as fds (not lavapipe): elsewhere ipc_export_event and
// ipc_import_event are HURRAY_E_UNSUPPORTED with the reason, and
// device_info.ipc lacks HURRAY_BACKEND_IPC_EVENTS.
//
// native() slots:
//   handles[0] VkInstance
//   handles[1] VkPhysicalDevice
//   handles[2] VkDevice
//   handles[3] VkQueue: the plugin's queue (streams are VkQueues)
//   handles[4] the plugin queue's family index, as (void *)(uintptr_t)index
//   handles[5] PFN_vkGetInstanceProcAddr of the loader the plugin opened, so
//              a caller can resolve functions without linking libvulkan
//   handles[6] VkSemaphore: the timeline of the plugin's queue
//   handles[7] NULL
//
// Threads. Every entry point may be called from any thread. Each device has
// a mutex held around every vkQueueSubmit the plugin makes (on any queue of
// the device) and around its timeline bookkeeping; VkQueue is externally
// synchronised, so a caller that submits to the plugin's queue (slot 3) or
// passes its own VkQueue as a stream must not submit to that queue from
// another thread during the call. A registry mutex guards the table of live
// allocations (classify, shutdown). No C++ exception leaves an entry point.
// free() and shutdown() must only run once the device no longer uses the
// memory (BP-REL-AFTER); shutdown() waits for the devices to go idle and
// frees what is still allocated.

#include <hurray_backend.h>

#include "class_name.h"
#include "kit/entry.h"
#include "kit/errors.h"
#include <vulkan/vulkan.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
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

namespace {

// ------------------------------------------------------------- errors ----

using hurray::kit::fail;

const char *vk_result_name(VkResult r) noexcept {
  switch (r) {
#define HVK_RESULT_CASE(x) \
  case x:                  \
    return #x;
    HVK_RESULT_CASE(VK_SUCCESS)
    HVK_RESULT_CASE(VK_NOT_READY)
    HVK_RESULT_CASE(VK_TIMEOUT)
    HVK_RESULT_CASE(VK_EVENT_SET)
    HVK_RESULT_CASE(VK_EVENT_RESET)
    HVK_RESULT_CASE(VK_INCOMPLETE)
    HVK_RESULT_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    HVK_RESULT_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    HVK_RESULT_CASE(VK_ERROR_INITIALIZATION_FAILED)
    HVK_RESULT_CASE(VK_ERROR_DEVICE_LOST)
    HVK_RESULT_CASE(VK_ERROR_MEMORY_MAP_FAILED)
    HVK_RESULT_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    HVK_RESULT_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    HVK_RESULT_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    HVK_RESULT_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    HVK_RESULT_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    HVK_RESULT_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
    HVK_RESULT_CASE(VK_ERROR_FRAGMENTED_POOL)
    HVK_RESULT_CASE(VK_ERROR_UNKNOWN)
    HVK_RESULT_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
    HVK_RESULT_CASE(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    HVK_RESULT_CASE(VK_ERROR_FRAGMENTATION)
    HVK_RESULT_CASE(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
    HVK_RESULT_CASE(VK_PIPELINE_COMPILE_REQUIRED)
    HVK_RESULT_CASE(VK_ERROR_SURFACE_LOST_KHR)
    HVK_RESULT_CASE(VK_ERROR_NATIVE_WINDOW_IN_USE_KHR)
    HVK_RESULT_CASE(VK_SUBOPTIMAL_KHR)
    HVK_RESULT_CASE(VK_ERROR_OUT_OF_DATE_KHR)
    HVK_RESULT_CASE(VK_ERROR_INCOMPATIBLE_DISPLAY_KHR)
    HVK_RESULT_CASE(VK_ERROR_VALIDATION_FAILED_EXT)
    HVK_RESULT_CASE(VK_ERROR_INVALID_SHADER_NV)
    HVK_RESULT_CASE(VK_ERROR_NOT_PERMITTED_KHR)
    HVK_RESULT_CASE(VK_THREAD_IDLE_KHR)
    HVK_RESULT_CASE(VK_THREAD_DONE_KHR)
    HVK_RESULT_CASE(VK_OPERATION_DEFERRED_KHR)
    HVK_RESULT_CASE(VK_OPERATION_NOT_DEFERRED_KHR)
    HVK_RESULT_CASE(VK_ERROR_COMPRESSION_EXHAUSTED_EXT)
#undef HVK_RESULT_CASE
    default:
      break;
  }
  return "VK_RESULT_UNKNOWN";
}

hurray_status status_of(VkResult r) noexcept {
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
__attribute__((format(printf, 5, 6))) hurray_status vk_fail(
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

// ----------------------------------------------------------- functions ----

#define HVK_INSTANCE_FNS(X)                          \
  X(vkDestroyInstance)                               \
  X(vkEnumeratePhysicalDevices)                      \
  X(vkGetPhysicalDeviceProperties)                   \
  X(vkGetPhysicalDeviceProperties2)                  \
  X(vkGetPhysicalDeviceFeatures2)                    \
  X(vkGetPhysicalDeviceMemoryProperties)             \
  X(vkGetPhysicalDeviceQueueFamilyProperties)        \
  X(vkEnumerateDeviceExtensionProperties)            \
  X(vkGetPhysicalDeviceExternalBufferProperties)     \
  X(vkGetPhysicalDeviceExternalSemaphoreProperties)  \
  X(vkCreateDevice)                                  \
  X(vkGetDeviceProcAddr)

#define HVK_DEVICE_FNS(X)          \
  X(vkDestroyDevice)               \
  X(vkGetDeviceQueue)              \
  X(vkDeviceWaitIdle)              \
  X(vkAllocateMemory)              \
  X(vkFreeMemory)                  \
  X(vkMapMemory)                   \
  X(vkUnmapMemory)                 \
  X(vkFlushMappedMemoryRanges)     \
  X(vkInvalidateMappedMemoryRanges) \
  X(vkCreateBuffer)                \
  X(vkDestroyBuffer)               \
  X(vkGetBufferMemoryRequirements) \
  X(vkBindBufferMemory)            \
  X(vkCreateCommandPool)           \
  X(vkDestroyCommandPool)          \
  X(vkAllocateCommandBuffers)      \
  X(vkBeginCommandBuffer)          \
  X(vkEndCommandBuffer)            \
  X(vkCmdPipelineBarrier)          \
  X(vkCmdCopyBuffer)               \
  X(vkQueueSubmit)                 \
  X(vkCreateFence)                 \
  X(vkDestroyFence)                \
  X(vkWaitForFences)               \
  X(vkResetFences)                 \
  X(vkCreateSemaphore)             \
  X(vkDestroySemaphore)            \
  X(vkWaitSemaphores)

// Present only with their extension.
#define HVK_DEVICE_OPT_FNS(X) \
  X(vkGetMemoryFdKHR)         \
  X(vkGetSemaphoreFdKHR)      \
  X(vkImportSemaphoreFdKHR)

#define HVK_MEMBER(name) PFN_##name name = nullptr;
struct InstanceFns {
  HVK_INSTANCE_FNS(HVK_MEMBER)
};
struct DeviceFns {
  HVK_DEVICE_FNS(HVK_MEMBER)
  HVK_DEVICE_OPT_FNS(HVK_MEMBER)
};
#undef HVK_MEMBER

// PFN_vkVoidFunction -> the real type (both are plain function pointers).
template <class Fn>
Fn fn_cast(PFN_vkVoidFunction f) noexcept {
  return reinterpret_cast<Fn>(f);
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
constexpr bool is_pow2(uint64_t v) noexcept { return v && !(v & (v - 1)); }
uint64_t pow2_ceil(uint64_t v) noexcept {
  uint64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

constexpr int kClassCount = 3;  // STANDARD, HOST_PINNED, UNIFIED
using hurray::plugin::class_name;
bool class_mapped(unsigned c) noexcept { return c != HURRAY_MEMORY_STANDARD; }

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

bool type_serves(int cls, VkMemoryPropertyFlags f) noexcept {
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
int type_score(int cls, VkMemoryPropertyFlags f) noexcept {
  if (cls == HURRAY_MEMORY_STANDARD) return (f & kHV) ? 0 : 8;
  int s = ((f & kHC) ? 8 : 0) + ((f & kHCached) ? 4 : 0);
  if (cls == kStaging && !(f & kDL)) s += 1;
  return s;
}
const char *class_needs(unsigned c) noexcept {
  switch (c) {
    case HURRAY_MEMORY_STANDARD:
      return "a DEVICE_LOCAL memory type";
    case HURRAY_MEMORY_HOST_PINNED:
      return "a HOST_VISIBLE memory type that is not DEVICE_LOCAL";
    case HURRAY_MEMORY_UNIFIED:
      return "a DEVICE_LOCAL + HOST_VISIBLE memory type";
    default:
      return "nothing Vulkan offers";
  }
}

std::string flag_text(VkMemoryPropertyFlags f) {
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

  Device() = default;
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;
  ~Device() {
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
  PFN_vkGetInstanceProcAddr gipa = nullptr;
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

  Device *device(int32_t ordinal) const noexcept {
    if (ordinal < 0 || static_cast<size_t>(ordinal) >= devices.size()) return nullptr;
    return devices[static_cast<size_t>(ordinal)].get();
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

State *state_of(void *s) noexcept { return static_cast<State *>(s); }

hurray_status bad_device(hurray_error *err, const State *s, int32_t device) {
  return hurray::kit::check_device(s, device, s ? s->devices.size() : size_t{0}, err);
}

// Runs f, turning any exception into a status: nothing crosses the C ABI.
template <class F>
hurray_status guarded(hurray_error *err, F &&f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc &) {
    return fail(err, HURRAY_E_OUT_OF_MEMORY, "vulkan backend: out of host memory");
  } catch (const std::exception &e) {
    return fail(err, HURRAY_E_INTERNAL, "vulkan backend: %s", e.what());
  } catch (...) {
    return fail(err, HURRAY_E_INTERNAL, "vulkan backend: unknown exception");
  }
}

// ------------------------------------------------------ queue helpers ----

// One batch: optional command buffer, optional timeline wait and signal.
// The caller holds dev.mu.
VkResult submit_locked(Device &d, VkQueue queue, VkCommandBuffer cb,
                       VkSemaphore wait, uint64_t wait_value, VkSemaphore signal,
                       uint64_t signal_value, VkFence fence) noexcept {
  const VkPipelineStageFlags wait_stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
  VkTimelineSemaphoreSubmitInfo tl{};
  tl.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
  tl.waitSemaphoreValueCount = wait ? 1u : 0u;
  tl.pWaitSemaphoreValues = &wait_value;
  tl.signalSemaphoreValueCount = signal ? 1u : 0u;
  tl.pSignalSemaphoreValues = &signal_value;
  VkSubmitInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  si.pNext = &tl;
  si.waitSemaphoreCount = wait ? 1u : 0u;
  si.pWaitSemaphores = &wait;
  si.pWaitDstStageMask = &wait_stage;
  si.commandBufferCount = cb ? 1u : 0u;
  si.pCommandBuffers = &cb;
  si.signalSemaphoreCount = signal ? 1u : 0u;
  si.pSignalSemaphores = &signal;
  return d.fn.vkQueueSubmit(queue, 1, &si, fence);
}

VkResult create_timeline(Device &d, VkSemaphore *out) noexcept {
  VkExportSemaphoreCreateInfo exp{};
  exp.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO;
  exp.handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkSemaphoreTypeCreateInfo type{};
  type.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
  type.pNext = d.ipc_events ? &exp : nullptr;
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  type.initialValue = 0;
  VkSemaphoreCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  ci.pNext = &type;
  return d.fn.vkCreateSemaphore(d.dev, &ci, nullptr, out);
}

// The timeline of `queue` (NULL: the plugin's). The caller holds d.mu.
hurray_status timeline_locked(Device &d, VkQueue queue, Timeline **out,
                              hurray_error *err) {
  if (!queue) queue = d.queue;
  for (Timeline &t : d.timelines)
    if (t.queue == queue) {
      *out = &t;
      return HURRAY_OK;
    }
  Timeline t;
  t.queue = queue;
  const VkResult r = create_timeline(d, &t.semaphore);
  if (r != VK_SUCCESS)
    return vk_fail(err, status_of(r), "vkCreateSemaphore", r,
                   "timeline semaphore for a stream of %s", d.label.c_str());
  d.timelines.push_back(t);
  *out = &d.timelines.back();
  return HURRAY_OK;
}

hurray_status wait_host(Device &d, VkSemaphore sem, uint64_t value,
                        hurray_error *err) {
  VkSemaphoreWaitInfo wi{};
  wi.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
  wi.semaphoreCount = 1;
  wi.pSemaphores = &sem;
  wi.pValues = &value;
  const VkResult r = d.fn.vkWaitSemaphores(d.dev, &wi, UINT64_MAX);
  if (r != VK_SUCCESS)
    return vk_fail(err, status_of(r), "vkWaitSemaphores", r,
                   "host wait for value %llu on %s",
                   static_cast<unsigned long long>(value), d.label.c_str());
  return HURRAY_OK;
}

// Wait on the host until everything submitted so far to the plugin's queue
// has completed, with its writes available to the host.
hurray_status drain_plugin_queue(Device &d, hurray_error *err) {
  VkSemaphore sem;
  uint64_t value;
  {
    std::lock_guard<std::mutex> lock(d.mu);
    Timeline &t = d.timelines.front();
    value = t.value + 1;
    const VkResult r =
        submit_locked(d, d.queue, d.host_barrier, VK_NULL_HANDLE, 0, t.semaphore, value,
                      VK_NULL_HANDLE);
    if (r != VK_SUCCESS)
      return vk_fail(err, status_of(r), "vkQueueSubmit", r,
                     "ordering a copy after the queue of %s", d.label.c_str());
    t.value = value;
    sem = t.semaphore;
  }
  return wait_host(d, sem, value, err);
}

// Flush (to device) or invalidate (from device) the mapped bytes
// [start, start + n) of a non-coherent allocation, widened to whole atoms.
hurray_status sync_mapping(Device &d, VkDeviceMemory memory, VkDeviceSize alloc_size,
                           uint64_t start, uint64_t n, bool flush,
                           hurray_error *err) {
  VkMappedMemoryRange range{};
  range.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE;
  range.memory = memory;
  range.offset = round_down(start, d.atom);
  const uint64_t end = round_up(start + n, d.atom);
  range.size = end >= alloc_size ? VK_WHOLE_SIZE : end - range.offset;
  const VkResult r = flush ? d.fn.vkFlushMappedMemoryRanges(d.dev, 1, &range)
                           : d.fn.vkInvalidateMappedMemoryRanges(d.dev, 1, &range);
  if (r != VK_SUCCESS)
    return vk_fail(err, status_of(r),
                   flush ? "vkFlushMappedMemoryRanges" : "vkInvalidateMappedMemoryRanges",
                   r, "%s", d.label.c_str());
  return HURRAY_OK;
}

// ------------------------------------------------------------- probe ----

VkResult make_host_barrier(Device &d) {
  VkCommandPoolCreateInfo pci{};
  pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pci.queueFamilyIndex = d.family;
  VkResult r = d.fn.vkCreateCommandPool(d.dev, &pci, nullptr, &d.barrier_pool);
  if (r != VK_SUCCESS) return r;
  VkCommandBufferAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  ai.commandPool = d.barrier_pool;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  r = d.fn.vkAllocateCommandBuffers(d.dev, &ai, &d.host_barrier);
  if (r != VK_SUCCESS) return r;
  VkCommandBufferBeginInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  bi.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
  r = d.fn.vkBeginCommandBuffer(d.host_barrier, &bi);
  if (r != VK_SUCCESS) return r;
  VkMemoryBarrier mb{};
  mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  mb.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT;
  d.fn.vkCmdPipelineBarrier(d.host_barrier, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                            VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0,
                            nullptr);
  return d.fn.vkEndCommandBuffer(d.host_barrier);
}

constexpr VkBufferUsageFlags kBufferUsage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                            VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                            VK_BUFFER_USAGE_TRANSFER_DST_BIT;

// memoryTypeBits of a small buffer of `usage` (external OPAQUE_FD if asked).
uint32_t buffer_type_bits(Device &d, VkBufferUsageFlags usage, bool external) {
  VkExternalMemoryBufferCreateInfo ext{};
  ext.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO;
  ext.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkBufferCreateInfo bci{};
  bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bci.pNext = external ? &ext : nullptr;
  bci.size = 65536;
  bci.usage = usage;
  bci.sharingMode = d.sharing();
  bci.queueFamilyIndexCount = static_cast<uint32_t>(d.families.size());
  bci.pQueueFamilyIndices = d.families.data();
  VkBuffer b = VK_NULL_HANDLE;
  if (d.fn.vkCreateBuffer(d.dev, &bci, nullptr, &b) != VK_SUCCESS) return 0;
  VkMemoryRequirements req{};
  d.fn.vkGetBufferMemoryRequirements(d.dev, b, &req);
  d.fn.vkDestroyBuffer(d.dev, b, nullptr);
  return req.memoryTypeBits;
}

std::string describe_type(const Device &d, int t) {
  const VkMemoryType &mt = d.mem.memoryTypes[t];
  char buf[96];
  std::snprintf(buf, sizeof buf, "type %d %s heap %u %lluMiB", t,
                flag_text(mt.propertyFlags).c_str(), mt.heapIndex,
                static_cast<unsigned long long>(d.mem.memoryHeaps[mt.heapIndex].size >> 20));
  return buf;
}

// Set up one physical device. Returns null and appends to *why when it
// cannot serve.
std::unique_ptr<Device> open_device(State &s, VkPhysicalDevice phys, int32_t ordinal,
                                    std::string *why) {
  auto d = std::make_unique<Device>();
  d->phys = phys;
  d->ordinal = ordinal;
  s.fn.vkGetPhysicalDeviceProperties(phys, &d->props);
  char head[200];
  std::snprintf(head, sizeof head, "physical device %d (%.160s)", static_cast<int>(ordinal),
                d->props.deviceName);
  auto skip = [&](const std::string &reason) -> std::unique_ptr<Device> {
    if (!why->empty()) *why += "; ";
    *why += head;
    *why += ": ";
    *why += reason;
    return nullptr;
  };
  const uint32_t api = d->props.apiVersion;
  if (api < VK_API_VERSION_1_2) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "Vulkan %u.%u, the backend needs 1.2",
                  VK_API_VERSION_MAJOR(api), VK_API_VERSION_MINOR(api));
    return skip(buf);
  }

  VkPhysicalDeviceVulkan11Properties p11{};
  p11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES;
  VkPhysicalDeviceProperties2 p2{};
  p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
  p2.pNext = &p11;
  s.fn.vkGetPhysicalDeviceProperties2(phys, &p2);
  std::memcpy(d->device_uuid, p11.deviceUUID, VK_UUID_SIZE);
  std::memcpy(d->driver_uuid, p11.driverUUID, VK_UUID_SIZE);
  d->max_alloc = p11.maxMemoryAllocationSize ? p11.maxMemoryAllocationSize : UINT64_MAX;

  VkPhysicalDeviceVulkan12Features f12{};
  f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  VkPhysicalDeviceFeatures2 f2{};
  f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  f2.pNext = &f12;
  s.fn.vkGetPhysicalDeviceFeatures2(phys, &f2);
  if (!f12.timelineSemaphore) return skip("no timelineSemaphore feature");

  uint32_t nfam = 0;
  s.fn.vkGetPhysicalDeviceQueueFamilyProperties(phys, &nfam, nullptr);
  std::vector<VkQueueFamilyProperties> fams(nfam);
  s.fn.vkGetPhysicalDeviceQueueFamilyProperties(phys, &nfam, fams.data());
  int family = -1;
  for (uint32_t i = 0; i < nfam && family < 0; ++i)
    if ((fams[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) &&
        (fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && fams[i].queueCount)
      family = static_cast<int>(i);
  for (uint32_t i = 0; i < nfam && family < 0; ++i)
    if ((fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && fams[i].queueCount)
      family = static_cast<int>(i);
  if (family < 0) return skip("no compute queue family");
  d->family = static_cast<uint32_t>(family);

  uint32_t next = 0;
  s.fn.vkEnumerateDeviceExtensionProperties(phys, nullptr, &next, nullptr);
  std::vector<VkExtensionProperties> exts(next);
  s.fn.vkEnumerateDeviceExtensionProperties(phys, nullptr, &next, exts.data());
  auto has_ext = [&](const char *name) {
    for (const auto &e : exts)
      if (std::strcmp(e.extensionName, name) == 0) return true;
    return false;
  };
  const bool mem_fd = has_ext(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
  const bool sem_fd = has_ext(VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);

  // Can buffers be exported and imported as OPAQUE_FD?
  if (!mem_fd) {
    d->ipc_memory_why = "no " VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME;
  } else {
    VkPhysicalDeviceExternalBufferInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO;
    bi.usage = kBufferUsage;
    bi.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkExternalBufferProperties ep{};
    ep.sType = VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES;
    s.fn.vkGetPhysicalDeviceExternalBufferProperties(phys, &bi, &ep);
    const VkExternalMemoryFeatureFlags feat =
        ep.externalMemoryProperties.externalMemoryFeatures;
    d->ipc_memory = (feat & VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT) &&
                    (feat & VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT);
    d->export_dedicated = (feat & VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT) != 0;
    if (!d->ipc_memory) d->ipc_memory_why = "OPAQUE_FD buffers are not exportable and importable";
  }
  // Can timeline semaphores be exported and imported as OPAQUE_FD?
  if (!sem_fd) {
    d->ipc_events_why = "no " VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME;
  } else {
    VkSemaphoreTypeCreateInfo type{};
    type.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkPhysicalDeviceExternalSemaphoreInfo si{};
    si.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO;
    si.pNext = &type;
    si.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkExternalSemaphoreProperties sp{};
    sp.sType = VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES;
    s.fn.vkGetPhysicalDeviceExternalSemaphoreProperties(phys, &si, &sp);
    d->ipc_events = (sp.externalSemaphoreFeatures & VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT) &&
                    (sp.externalSemaphoreFeatures & VK_EXTERNAL_SEMAPHORE_FEATURE_IMPORTABLE_BIT);
    if (!d->ipc_events)
      d->ipc_events_why = "timeline semaphores are not exportable and importable as OPAQUE_FD";
  }

  // Queues: 0 of every graphics/compute/transfer family, 1 more in ours.
  const float priorities[2] = {1.0f, 1.0f};
  std::vector<VkDeviceQueueCreateInfo> qcis;
  for (uint32_t i = 0; i < nfam; ++i) {
    const VkQueueFlags useful =
        VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT | VK_QUEUE_TRANSFER_BIT;
    if (!(fams[i].queueFlags & useful) || !fams[i].queueCount) continue;
    VkDeviceQueueCreateInfo q{};
    q.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    q.queueFamilyIndex = i;
    q.queueCount = (i == d->family && fams[i].queueCount >= 2) ? 2u : 1u;
    q.pQueuePriorities = priorities;
    qcis.push_back(q);
    d->families.push_back(i);
  }
  std::vector<const char *> enable;
  if (mem_fd) enable.push_back(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
  if (sem_fd) enable.push_back(VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);
  VkPhysicalDeviceVulkan12Features want12{};
  want12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  want12.timelineSemaphore = VK_TRUE;
  VkDeviceCreateInfo dci{};
  dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  dci.pNext = &want12;
  dci.queueCreateInfoCount = static_cast<uint32_t>(qcis.size());
  dci.pQueueCreateInfos = qcis.data();
  dci.enabledExtensionCount = static_cast<uint32_t>(enable.size());
  dci.ppEnabledExtensionNames = enable.data();
  VkResult r = s.fn.vkCreateDevice(phys, &dci, nullptr, &d->dev);
  if (r != VK_SUCCESS) {
    d->dev = VK_NULL_HANDLE;
    return skip(std::string("[vkCreateDevice] ") + vk_result_name(r));
  }

  // Device functions. vkDestroyDevice first, so that the destructor works.
  const PFN_vkGetDeviceProcAddr gdpa = s.fn.vkGetDeviceProcAddr;
  d->fn.vkDestroyDevice = fn_cast<PFN_vkDestroyDevice>(gdpa(d->dev, "vkDestroyDevice"));
  if (!d->fn.vkDestroyDevice) {
    // Leak rather than call through nothing; this cannot happen on a loader.
    d->dev = VK_NULL_HANDLE;
    return skip("[vkGetDeviceProcAddr] vkDestroyDevice missing");
  }
  std::string missing;
#define HVK_LOAD(name)                                                \
  d->fn.name = fn_cast<PFN_##name>(gdpa(d->dev, #name));              \
  if (!d->fn.name) missing += missing.empty() ? #name : ", " #name;
  HVK_DEVICE_FNS(HVK_LOAD)
#undef HVK_LOAD
  if (!missing.empty()) return skip("[vkGetDeviceProcAddr] missing " + missing);
  if (mem_fd)
    d->fn.vkGetMemoryFdKHR = fn_cast<PFN_vkGetMemoryFdKHR>(gdpa(d->dev, "vkGetMemoryFdKHR"));
  if (sem_fd) {
    d->fn.vkGetSemaphoreFdKHR =
        fn_cast<PFN_vkGetSemaphoreFdKHR>(gdpa(d->dev, "vkGetSemaphoreFdKHR"));
    d->fn.vkImportSemaphoreFdKHR =
        fn_cast<PFN_vkImportSemaphoreFdKHR>(gdpa(d->dev, "vkImportSemaphoreFdKHR"));
  }
  if (!d->fn.vkGetMemoryFdKHR && d->ipc_memory) {
    d->ipc_memory = false;
    d->ipc_memory_why = "vkGetMemoryFdKHR missing";
  }
  if ((!d->fn.vkGetSemaphoreFdKHR || !d->fn.vkImportSemaphoreFdKHR) && d->ipc_events) {
    d->ipc_events = false;
    d->ipc_events_why = "vkGetSemaphoreFdKHR / vkImportSemaphoreFdKHR missing";
  }
  d->fn.vkGetDeviceQueue(d->dev, d->family, 0, &d->queue);

  s.fn.vkGetPhysicalDeviceMemoryProperties(phys, &d->mem);
  const VkPhysicalDeviceLimits &lim = d->props.limits;
  d->atom = lim.nonCoherentAtomSize ? lim.nonCoherentAtomSize : 1;
  d->map_align = std::max<uint64_t>(HURRAY_MIN_ALIGNMENT,
                                    pow2_ceil(lim.minMemoryMapAlignment));

  {
    char buf[192];
    std::snprintf(buf, sizeof buf, "vulkan device %d (%.160s)", static_cast<int>(ordinal),
                  d->props.deviceName);
    d->label = buf;
  }

  r = make_host_barrier(*d);
  if (r != VK_SUCCESS) return skip(std::string("[vkCreateCommandPool] ") + vk_result_name(r));
  Timeline t;
  t.queue = d->queue;
  r = create_timeline(*d, &t.semaphore);
  if (r != VK_SUCCESS) return skip(std::string("[vkCreateSemaphore] ") + vk_result_name(r));
  d->timelines.push_back(t);

  // Which memory type serves which class (for buffers of our usage).
  const uint32_t bits = buffer_type_bits(*d, kBufferUsage, false);
  std::string detail;
  for (int c = 0; c < kClassCount; ++c) {
    d->class_type[c] = d->pick_type(c, bits);
    if (!detail.empty()) detail += "; ";
    detail += class_name(static_cast<unsigned>(c));
    detail += ": ";
    if (d->class_type[c] < 0) {
      detail += "none (no ";
      detail += class_needs(static_cast<unsigned>(c)) + 2;  // skip "a "
      detail += ")";
    } else {
      detail += describe_type(*d, d->class_type[c]);
      detail += class_mapped(static_cast<unsigned>(c)) ? ", mapped" : ", opaque";
    }
  }
  {
    char tail[96];
    std::snprintf(tail, sizeof tail, "; atom %llu, map align %llu",
                  static_cast<unsigned long long>(lim.nonCoherentAtomSize),
                  static_cast<unsigned long long>(lim.minMemoryMapAlignment));
    detail += tail;
  }
  d->detail = detail;
  return d;
}

hurray_status probe_impl(void **out_state, hurray_error *err) {
  if (!out_state) return fail(err, HURRAY_E_INVALID_ARGUMENT, "probe: state is NULL");
  *out_state = nullptr;
  auto s = std::make_unique<State>();
  const char *env = std::getenv("HURRAY_VULKAN_LOADER");
  const char *loader = env && *env ? env : "libvulkan.so.1";
  dlerror();
  s->lib = dlopen(loader, RTLD_NOW | RTLD_LOCAL);
  if (!s->lib) {
    const char *why = dlerror();
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "%s", why ? why : loader);
  }
  void *sym = dlsym(s->lib, "vkGetInstanceProcAddr");
  if (!sym)
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                "%s is not a Vulkan loader: it has no vkGetInstanceProcAddr", loader);
  std::memcpy(&s->gipa, &sym, sizeof sym);

  const auto enumerate_version = fn_cast<PFN_vkEnumerateInstanceVersion>(
      s->gipa(VK_NULL_HANDLE, "vkEnumerateInstanceVersion"));
  uint32_t loader_version = VK_API_VERSION_1_0;
  if (enumerate_version) {
    const VkResult r = enumerate_version(&loader_version);
    if (r != VK_SUCCESS)
      return vk_fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "vkEnumerateInstanceVersion", r, "%s",
                     "");
  }
  if (loader_version < VK_API_VERSION_1_2)
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                "the Vulkan loader %s offers Vulkan %u.%u; the vulkan backend needs 1.2",
                loader, VK_API_VERSION_MAJOR(loader_version),
                VK_API_VERSION_MINOR(loader_version));
  const auto create_instance =
      fn_cast<PFN_vkCreateInstance>(s->gipa(VK_NULL_HANDLE, "vkCreateInstance"));
  if (!create_instance)
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                "[vkGetInstanceProcAddr] vkCreateInstance missing from %s", loader);

  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "libhurray";
  app.applicationVersion = HURRAY_VERSION_NUMBER;
  app.pEngineName = "libhurray";
  app.engineVersion = HURRAY_VERSION_NUMBER;
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo ici{};
  ici.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  ici.pApplicationInfo = &app;
  VkResult r = create_instance(&ici, nullptr, &s->instance);
  if (r != VK_SUCCESS) {
    s->instance = VK_NULL_HANDLE;
    return vk_fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "vkCreateInstance", r, "%s", "");
  }
  std::string missing;
#define HVK_LOAD(name)                                              \
  s->fn.name = fn_cast<PFN_##name>(s->gipa(s->instance, #name));    \
  if (!s->fn.name) missing += missing.empty() ? #name : ", " #name;
  HVK_INSTANCE_FNS(HVK_LOAD)
#undef HVK_LOAD
  if (!missing.empty())
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "[vkGetInstanceProcAddr] missing %s",
                missing.c_str());

  uint32_t n = 0;
  r = s->fn.vkEnumeratePhysicalDevices(s->instance, &n, nullptr);
  std::vector<VkPhysicalDevice> phys(n);
  if (r == VK_SUCCESS && n) r = s->fn.vkEnumeratePhysicalDevices(s->instance, &n, phys.data());
  if (r != VK_SUCCESS && r != VK_INCOMPLETE)
    return vk_fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "vkEnumeratePhysicalDevices", r, "%s",
                   "");
  phys.resize(n);
  if (phys.empty())
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                "[vkEnumeratePhysicalDevices] the Vulkan loader found no physical device");
  std::string why;
  for (VkPhysicalDevice p : phys) {
    auto d = open_device(*s, p, static_cast<int32_t>(s->devices.size()), &why);
    if (d) s->devices.push_back(std::move(d));
  }
  if (s->devices.empty())
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "no usable Vulkan device: %s", why.c_str());
  *out_state = s.release();
  return HURRAY_OK;
}

// -------------------------------------------------------------- alloc ----

// Create a VkBuffer of `size` bytes, allocate memory for it and bind it.
// `import_fd` >= 0 imports the memory instead (the fd is consumed on
// success): then `import_size` is the exporter's allocationSize and
// `forced_type` its memory type, and `size` must be the exporter's buffer
// size (a dedicated import needs an identical buffer).
hurray_status make_memory(Device &d, Allocation &a, uint64_t size, bool external,
                          int import_fd, uint64_t import_size, int forced_type,
                          hurray_error *err) {
  VkExternalMemoryBufferCreateInfo ext{};
  ext.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO;
  ext.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkBufferCreateInfo bci{};
  bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bci.pNext = external ? &ext : nullptr;
  bci.size = size;
  bci.usage = kBufferUsage;
  bci.sharingMode = d.sharing();
  bci.queueFamilyIndexCount = static_cast<uint32_t>(d.families.size());
  bci.pQueueFamilyIndices = d.families.data();
  VkResult r = d.fn.vkCreateBuffer(d.dev, &bci, nullptr, &a.buffer);
  a.buffer_size = size;
  if (r != VK_SUCCESS) {
    a.buffer = VK_NULL_HANDLE;
    return vk_fail(err, status_of(r), "vkCreateBuffer", r, "%llu bytes of %s on %s",
                   static_cast<unsigned long long>(size), class_name(a.cls), d.label.c_str());
  }
  VkMemoryRequirements req{};
  d.fn.vkGetBufferMemoryRequirements(d.dev, a.buffer, &req);
  int type = forced_type;
  if (type < 0) {
    type = d.pick_type(a.cls, req.memoryTypeBits);
    if (type < 0)
      return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                  "%s cannot serve memory class %s%s: no memory type allowed for its "
                  "buffers is %s",
                  d.label.c_str(), class_name(a.cls), external ? " (shareable)" : "",
                  class_needs(a.cls));
  } else if (!(req.memoryTypeBits & (1u << type))) {
    return fail(err, HURRAY_E_UNSUPPORTED,
                "%s cannot bind a buffer to imported memory of type %d", d.label.c_str(),
                type);
  }
  a.type = static_cast<uint32_t>(type);
  a.coherent = (d.mem.memoryTypes[type].propertyFlags & kHC) != 0;
  if (import_fd >= 0) {
    a.size = import_size;
    if (a.size < req.size)
      return fail(err, HURRAY_E_INVALID_ARGUMENT,
                  "importing on %s: %llu bytes of exported memory cannot hold a %llu-byte "
                  "buffer",
                  d.label.c_str(), static_cast<unsigned long long>(a.size),
                  static_cast<unsigned long long>(req.size));
  } else if (a.dedicated) {
    a.size = req.size;  // a dedicated allocation is exactly the buffer's size
  } else {
    a.size = round_up(std::max<uint64_t>(req.size, size), d.atom);
  }

  VkMemoryAllocateInfo mai{};
  mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  mai.allocationSize = a.size;
  mai.memoryTypeIndex = a.type;
  const void *chain = nullptr;
  VkMemoryDedicatedAllocateInfo dedicated{};
  dedicated.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO;
  dedicated.buffer = a.buffer;
  if (a.dedicated) {
    dedicated.pNext = chain;
    chain = &dedicated;
  }
  VkExportMemoryAllocateInfo exp{};
  exp.sType = VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO;
  exp.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkImportMemoryFdInfoKHR imp{};
  imp.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR;
  imp.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  imp.fd = import_fd;
  if (import_fd >= 0) {
    imp.pNext = chain;
    chain = &imp;
  } else if (external) {
    exp.pNext = chain;
    chain = &exp;
  }
  mai.pNext = chain;
  r = d.fn.vkAllocateMemory(d.dev, &mai, nullptr, &a.memory);
  if (r != VK_SUCCESS) {
    a.memory = VK_NULL_HANDLE;
    return vk_fail(err, status_of(r), "vkAllocateMemory", r,
                   "%s%llu bytes of %s (memory type %u) on %s",
                   import_fd >= 0 ? "importing " : "", static_cast<unsigned long long>(a.size),
                   class_name(a.cls), a.type, d.label.c_str());
  }
  r = d.fn.vkBindBufferMemory(d.dev, a.buffer, a.memory, 0);
  if (r != VK_SUCCESS)
    return vk_fail(err, status_of(r), "vkBindBufferMemory", r, "%s", d.label.c_str());
  if (class_mapped(a.cls)) {
    r = d.fn.vkMapMemory(d.dev, a.memory, 0, VK_WHOLE_SIZE, 0, &a.base);
    if (r != VK_SUCCESS) {
      a.base = nullptr;
      return vk_fail(err, status_of(r), "vkMapMemory", r, "%llu bytes of %s on %s",
                     static_cast<unsigned long long>(a.size), class_name(a.cls),
                     d.label.c_str());
    }
  }
  return HURRAY_OK;
}

void fill_out(const Allocation &a, int32_t device, hurray_backend_allocation *out) {
  std::memset(out, 0, sizeof *out);
  out->byte_size = a.byte_size;
  out->alignment = a.alignment;
  out->device = device;
  out->memory_class = a.cls;
  if (a.base) {
    out->data = static_cast<char *>(a.base) + a.offset;
    out->host = out->data;
    out->flags = 0;
  } else {
    out->data = to_ptr(a.memory);
    out->host = nullptr;
    out->flags = HURRAY_HANDOFF_OPAQUE_DATA;
  }
  out->plugin_data = const_cast<Allocation *>(&a);
}

void register_allocation(State &s, Allocation *a, const hurray_backend_allocation &out) {
  const uintptr_t start = reinterpret_cast<uintptr_t>(out.data);
  const uintptr_t end = a->base ? start + std::max<uint64_t>(a->byte_size, 1) : start + 1;
  s.add(a, start, end);
}

hurray_status check_class(const Device &d, uint8_t cls, hurray_error *err) {
  if (cls >= kClassCount)
    return fail(err, HURRAY_E_MEMORY_CLASS,
                "memory class %s (0x%02x) is not a Vulkan memory class (Vulkan serves "
                "STANDARD, HOST_PINNED and UNIFIED)",
                class_name(cls), static_cast<unsigned>(cls));
  if (d.class_type[cls] < 0)
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                "memory class %s is not available on %s: it has no %s", class_name(cls),
                d.label.c_str(), class_needs(cls) + 2);
  return HURRAY_OK;
}

hurray_status alloc_impl(State &s, int32_t device, uint8_t cls, uint64_t byte_size,
                         uint32_t alignment, uint32_t flags, hurray_backend_allocation *out,
                         hurray_error *err) {
  if (!out) return fail(err, HURRAY_E_INVALID_ARGUMENT, "alloc: out is NULL");
  Device *d = s.device(device);
  if (!d) return bad_device(err, &s, device);
  if (const hurray_status st = check_class(*d, cls, err); st != HURRAY_OK) return st;
  if (alignment == 0) alignment = HURRAY_MIN_ALIGNMENT;
  if (!is_pow2(alignment))
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "alloc: alignment %u is not a power of two", alignment);
  alignment = std::max<uint32_t>(alignment, HURRAY_MIN_ALIGNMENT);
  if (flags & ~HURRAY_ALLOC_SHAREABLE)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "alloc: unknown flags 0x%x",
                flags & ~HURRAY_ALLOC_SHAREABLE);
  const bool shareable = (flags & HURRAY_ALLOC_SHAREABLE) != 0;
  if (shareable && !d->ipc_memory)
    return fail(err, HURRAY_E_UNSUPPORTED, "%s cannot share memory with other processes: %s",
                d->label.c_str(), d->ipc_memory_why.c_str());
  const bool mapped = class_mapped(cls);
  const uint64_t guaranteed = mapped ? std::max<uint64_t>(alignment, d->map_align) : alignment;
  if (guaranteed > (1u << 31))
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "alloc: alignment %llu is too large",
                static_cast<unsigned long long>(guaranteed));
  if (byte_size > d->max_alloc)
    return fail(err, HURRAY_E_OUT_OF_MEMORY,
                "%llu bytes of %s exceed maxMemoryAllocationSize (%llu) of %s",
                static_cast<unsigned long long>(byte_size), class_name(cls),
                static_cast<unsigned long long>(d->max_alloc), d->label.c_str());
  if (byte_size == 0) {  // an empty buffer: nothing to allocate
    std::memset(out, 0, sizeof *out);
    out->alignment = static_cast<uint32_t>(guaranteed);
    out->device = device;
    out->memory_class = cls;
    out->flags = mapped ? 0u : HURRAY_HANDOFF_OPAQUE_DATA;
    return HURRAY_OK;
  }

  auto a = std::make_unique<Allocation>();
  a->dev = d;
  a->cls = cls;
  a->byte_size = byte_size;
  a->alignment = static_cast<uint32_t>(guaranteed);
  a->exportable = shareable;
  a->dedicated = shareable && d->export_dedicated;
  // Mappings are aligned to map_align: room to slide data up to `guaranteed`.
  uint64_t need = round_up(byte_size, d->atom);
  if (mapped && guaranteed > d->map_align) need += guaranteed - d->map_align;
  struct Cleanup {
    Allocation *a;
    ~Cleanup() {
      if (a) a->destroy();
    }
  } cleanup{a.get()};
  if (const hurray_status st = make_memory(*d, *a, need, shareable, -1, 0, -1, err);
      st != HURRAY_OK)
    return st;
  if (mapped) {
    const uintptr_t base = reinterpret_cast<uintptr_t>(a->base);
    const uintptr_t data = (base + guaranteed - 1) & ~static_cast<uintptr_t>(guaranteed - 1);
    a->offset = data - base;
    if (a->offset + byte_size > a->buffer_size)
      return fail(err, HURRAY_E_ALIGNMENT,
                  "[vkMapMemory] %s mapped %s memory at %p, not aligned to "
                  "minMemoryMapAlignment %llu: cannot place %u-byte aligned data",
                  d->label.c_str(), class_name(cls), a->base,
                  static_cast<unsigned long long>(d->props.limits.minMemoryMapAlignment),
                  a->alignment);
    if (data % guaranteed != 0)
      return fail(err, HURRAY_E_INTERNAL, "vulkan backend: misaligned data %p",
                  reinterpret_cast<void *>(data));
  }
  fill_out(*a, device, out);
  register_allocation(s, a.get(), *out);
  cleanup.a = nullptr;
  a.release();
  return HURRAY_OK;
}

void free_impl(State &s, hurray_backend_allocation *allocation) noexcept {
  if (!allocation || !allocation->plugin_data) return;
  auto *a = static_cast<Allocation *>(allocation->plugin_data);
  s.remove(a);
  a->destroy();
  delete a;
  allocation->plugin_data = nullptr;
  allocation->data = nullptr;
  allocation->host = nullptr;
}

// -------------------------------------------------------------- copies ----

hurray_status check_range(const hurray_backend_allocation *a, uint64_t offset, const void *host,
                          uint64_t n, const char *what, hurray_error *err) {
  if (!a) return fail(err, HURRAY_E_INVALID_ARGUMENT, "%s: allocation is NULL", what);
  if (offset > a->byte_size || n > a->byte_size - offset)
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "%s: bytes [%llu, %llu + %llu) lie outside the %llu-byte allocation", what,
                static_cast<unsigned long long>(offset), static_cast<unsigned long long>(offset),
                static_cast<unsigned long long>(n),
                static_cast<unsigned long long>(a->byte_size));
  if (n && !host) return fail(err, HURRAY_E_INVALID_ARGUMENT, "%s: host pointer is NULL", what);
  if (n && !a->plugin_data)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "%s: not an allocation of the vulkan backend",
                what);
  return HURRAY_OK;
}

// Copy n bytes between `host` and the allocation through a staging buffer
// and vkCmdCopyBuffer on the plugin's queue.
hurray_status staged_copy(Device &d, Allocation &a, uint64_t offset, void *host, uint64_t n,
                          bool to_host, hurray_error *err) {
  const char *what = to_host ? "copy_to_host" : "copy_from_host";
  const uint64_t chunk = std::min<uint64_t>(n, uint64_t{16} << 20);
  VkBuffer staging = VK_NULL_HANDLE;
  VkDeviceMemory smem = VK_NULL_HANDLE;
  void *sptr = nullptr;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  struct Cleanup {
    Device &d;
    VkBuffer &b;
    VkDeviceMemory &m;
    void *&p;
    VkCommandPool &pool;
    VkFence &fence;
    ~Cleanup() {
      if (fence) d.fn.vkDestroyFence(d.dev, fence, nullptr);
      if (pool) d.fn.vkDestroyCommandPool(d.dev, pool, nullptr);
      if (p) d.fn.vkUnmapMemory(d.dev, m);
      if (b) d.fn.vkDestroyBuffer(d.dev, b, nullptr);
      if (m) d.fn.vkFreeMemory(d.dev, m, nullptr);
    }
  } cleanup{d, staging, smem, sptr, pool, fence};

  VkBufferCreateInfo bci{};
  bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bci.size = chunk;
  bci.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult r = d.fn.vkCreateBuffer(d.dev, &bci, nullptr, &staging);
  if (r != VK_SUCCESS) {
    staging = VK_NULL_HANDLE;
    return vk_fail(err, status_of(r), "vkCreateBuffer", r, "%s staging on %s", what,
                   d.label.c_str());
  }
  VkMemoryRequirements req{};
  d.fn.vkGetBufferMemoryRequirements(d.dev, staging, &req);
  const int type = d.pick_type(kStaging, req.memoryTypeBits);
  if (type < 0)
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                "%s: %s has no host-visible memory type for a staging buffer", what,
                d.label.c_str());
  const bool coherent = (d.mem.memoryTypes[type].propertyFlags & kHC) != 0;
  VkMemoryAllocateInfo mai{};
  mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  mai.allocationSize = round_up(req.size, d.atom);
  mai.memoryTypeIndex = static_cast<uint32_t>(type);
  r = d.fn.vkAllocateMemory(d.dev, &mai, nullptr, &smem);
  if (r != VK_SUCCESS) {
    smem = VK_NULL_HANDLE;
    return vk_fail(err, status_of(r), "vkAllocateMemory", r, "%llu-byte %s staging on %s",
                   static_cast<unsigned long long>(mai.allocationSize), what, d.label.c_str());
  }
  if ((r = d.fn.vkBindBufferMemory(d.dev, staging, smem, 0)) != VK_SUCCESS)
    return vk_fail(err, status_of(r), "vkBindBufferMemory", r, "%s staging", what);
  if ((r = d.fn.vkMapMemory(d.dev, smem, 0, VK_WHOLE_SIZE, 0, &sptr)) != VK_SUCCESS) {
    sptr = nullptr;
    return vk_fail(err, status_of(r), "vkMapMemory", r, "%s staging", what);
  }
  VkCommandPoolCreateInfo pci{};
  pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pci.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT |
              VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = d.family;
  if ((r = d.fn.vkCreateCommandPool(d.dev, &pci, nullptr, &pool)) != VK_SUCCESS) {
    pool = VK_NULL_HANDLE;
    return vk_fail(err, status_of(r), "vkCreateCommandPool", r, "%s", what);
  }
  VkCommandBufferAllocateInfo cai{};
  cai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  cai.commandPool = pool;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  if ((r = d.fn.vkAllocateCommandBuffers(d.dev, &cai, &cb)) != VK_SUCCESS)
    return vk_fail(err, status_of(r), "vkAllocateCommandBuffers", r, "%s", what);
  VkFenceCreateInfo fci{};
  fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  if ((r = d.fn.vkCreateFence(d.dev, &fci, nullptr, &fence)) != VK_SUCCESS) {
    fence = VK_NULL_HANDLE;
    return vk_fail(err, status_of(r), "vkCreateFence", r, "%s", what);
  }

  auto *bytes = static_cast<unsigned char *>(host);
  for (uint64_t done = 0; done < n;) {
    const uint64_t len = std::min(chunk, n - done);
    if (!to_host) {
      std::memcpy(sptr, bytes + done, len);
      if (!coherent)
        if (const hurray_status st = sync_mapping(d, smem, mai.allocationSize, 0, len, true, err);
            st != HURRAY_OK)
          return st;
    }
    VkCommandBufferBeginInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    if ((r = d.fn.vkBeginCommandBuffer(cb, &bi)) != VK_SUCCESS)
      return vk_fail(err, status_of(r), "vkBeginCommandBuffer", r, "%s", what);
    // Order after earlier work on the queue: its writes (to_host) or its
    // reads and writes (from_host) come before the copy.
    VkMemoryBarrier before{};
    before.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    before.srcAccessMask = to_host ? VK_ACCESS_MEMORY_WRITE_BIT
                                   : (VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
    before.dstAccessMask = to_host ? VK_ACCESS_TRANSFER_READ_BIT : VK_ACCESS_TRANSFER_WRITE_BIT;
    d.fn.vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                              VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &before, 0, nullptr, 0,
                              nullptr);
    VkBufferCopy region{};
    region.size = len;
    if (to_host) {
      region.srcOffset = a.offset + offset + done;
      d.fn.vkCmdCopyBuffer(cb, a.buffer, staging, 1, &region);
    } else {
      region.dstOffset = a.offset + offset + done;
      d.fn.vkCmdCopyBuffer(cb, staging, a.buffer, 1, &region);
    }
    VkMemoryBarrier after{};
    after.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    after.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    after.dstAccessMask = to_host ? VK_ACCESS_HOST_READ_BIT
                                  : (VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
    d.fn.vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
                              to_host ? VK_PIPELINE_STAGE_HOST_BIT
                                      : VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                              0, 1, &after, 0, nullptr, 0, nullptr);
    if ((r = d.fn.vkEndCommandBuffer(cb)) != VK_SUCCESS)
      return vk_fail(err, status_of(r), "vkEndCommandBuffer", r, "%s", what);
    {
      std::lock_guard<std::mutex> lock(d.mu);
      r = submit_locked(d, d.queue, cb, VK_NULL_HANDLE, 0, VK_NULL_HANDLE, 0, fence);
    }
    if (r != VK_SUCCESS)
      return vk_fail(err, status_of(r), "vkQueueSubmit", r, "%s on %s", what, d.label.c_str());
    if ((r = d.fn.vkWaitForFences(d.dev, 1, &fence, VK_TRUE, UINT64_MAX)) != VK_SUCCESS)
      return vk_fail(err, status_of(r), "vkWaitForFences", r, "%s on %s", what,
                     d.label.c_str());
    if ((r = d.fn.vkResetFences(d.dev, 1, &fence)) != VK_SUCCESS)
      return vk_fail(err, status_of(r), "vkResetFences", r, "%s", what);
    if (to_host) {
      if (!coherent)
        if (const hurray_status st =
                sync_mapping(d, smem, mai.allocationSize, 0, len, false, err);
            st != HURRAY_OK)
          return st;
      std::memcpy(bytes + done, sptr, len);
    }
    done += len;
  }
  return HURRAY_OK;
}

hurray_status copy_impl(const hurray_backend_allocation *alloc, uint64_t offset, void *host,
                        uint64_t n, bool to_host, hurray_error *err) {
  const char *what = to_host ? "copy_to_host" : "copy_from_host";
  if (const hurray_status st = check_range(alloc, offset, host, n, what, err); st != HURRAY_OK)
    return st;
  if (n == 0) return HURRAY_OK;
  Allocation &a = *static_cast<Allocation *>(alloc->plugin_data);
  Device &d = *a.dev;
  if (!a.base) return staged_copy(d, a, offset, host, n, to_host, err);
  // Mapped: after the plugin's queue is drained, memcpy (+ flush/invalidate).
  if (const hurray_status st = drain_plugin_queue(d, err); st != HURRAY_OK) return st;
  const uint64_t start = a.offset + offset;
  unsigned char *mapped = static_cast<unsigned char *>(a.base) + start;
  if (to_host) {
    if (!a.coherent)
      if (const hurray_status st = sync_mapping(d, a.memory, a.size, start, n, false, err);
          st != HURRAY_OK)
        return st;
    std::memcpy(host, mapped, n);
  } else {
    std::memcpy(mapped, host, n);
    if (!a.coherent)
      if (const hurray_status st = sync_mapping(d, a.memory, a.size, start, n, true, err);
          st != HURRAY_OK)
        return st;
  }
  return HURRAY_OK;
}

// -------------------------------------------------------------- events ----

hurray_status event_record_impl(State &s, int32_t device, void *stream, void **event,
                                uint64_t *value, hurray_error *err) {
  if (!event || !value)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "event_record: event or value is NULL");
  Device *d = s.device(device);
  if (!d) return bad_device(err, &s, device);
  std::lock_guard<std::mutex> lock(d->mu);
  Timeline *t = nullptr;
  if (const hurray_status st = timeline_locked(*d, from_ptr<VkQueue>(stream), &t, err);
      st != HURRAY_OK)
    return st;
  const uint64_t v = t->value + 1;
  const VkCommandBuffer cb = t->queue == d->queue ? d->host_barrier : VK_NULL_HANDLE;
  const VkResult r =
      submit_locked(*d, t->queue, cb, VK_NULL_HANDLE, 0, t->semaphore, v, VK_NULL_HANDLE);
  if (r != VK_SUCCESS)
    return vk_fail(err, status_of(r), "vkQueueSubmit", r,
                   "signalling timeline value %llu on %s", static_cast<unsigned long long>(v),
                   d->label.c_str());
  t->value = v;
  *event = to_ptr(t->semaphore);
  *value = v;
  return HURRAY_OK;
}

hurray_status event_wait_impl(State &s, int32_t device, void *event, uint64_t value,
                              void *stream, hurray_error *err) {
  Device *d = s.device(device);
  if (!d) return bad_device(err, &s, device);
  if (!event) return fail(err, HURRAY_E_INVALID_ARGUMENT, "event_wait: event is NULL");
  const VkSemaphore sem = from_ptr<VkSemaphore>(event);
  if (!stream) return wait_host(*d, sem, value, err);
  std::lock_guard<std::mutex> lock(d->mu);
  const VkResult r = submit_locked(*d, from_ptr<VkQueue>(stream), VK_NULL_HANDLE, sem, value,
                                   VK_NULL_HANDLE, 0, VK_NULL_HANDLE);
  if (r != VK_SUCCESS)
    return vk_fail(err, status_of(r), "vkQueueSubmit", r,
                   "queue wait for timeline value %llu on %s",
                   static_cast<unsigned long long>(value), d->label.c_str());
  return HURRAY_OK;
}

void event_release_impl(State &s, int32_t device, void *event) noexcept {
  Device *d = s.device(device);
  if (!d || !event) return;
  const VkSemaphore sem = from_ptr<VkSemaphore>(event);
  std::lock_guard<std::mutex> lock(d->mu);
  auto it = std::find(d->imported.begin(), d->imported.end(), sem);
  if (it == d->imported.end()) return;  // a shared timeline: nothing to free
  d->fn.vkDestroySemaphore(d->dev, sem, nullptr);
  d->imported.erase(it);
}

// ----------------------------------------------------------------- IPC ----

constexpr uint32_t kIpcMemoryKind = 1;  // OPAQUE_FD VkDeviceMemory
constexpr uint32_t kIpcEventKind = 2;   // OPAQUE_FD timeline VkSemaphore
constexpr uint32_t kIpcMagic = 0x4b565648u;  // "HVVK"

// What travels in hurray_backend_ipc_handle::bytes.
struct IpcBytes {
  uint32_t magic;
  uint32_t memory_type;
  uint64_t allocation_size;
  uint64_t buffer_size;
  uint32_t alignment;
  uint8_t memory_class;
  uint8_t dedicated;
  uint8_t pad[2];
  uint8_t device_uuid[VK_UUID_SIZE];
  uint8_t driver_uuid[VK_UUID_SIZE];
};
static_assert(sizeof(IpcBytes) <= sizeof(hurray_backend_ipc_handle::bytes));

hurray_status ipc_export_memory_impl(State &, const hurray_backend_allocation *alloc,
                                     hurray_backend_ipc_handle *out, hurray_error *err) {
  if (!alloc || !out)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "ipc_export_memory: NULL argument");
  if (!alloc->plugin_data)
    return fail(err, HURRAY_E_UNSUPPORTED,
                "ipc_export_memory: an empty allocation has no memory to share");
  const Allocation &a = *static_cast<const Allocation *>(alloc->plugin_data);
  Device &d = *a.dev;
  if (!a.exportable)
    return fail(err, HURRAY_E_UNSUPPORTED,
                "ipc_export_memory: the %s allocation on %s was not made with "
                "HURRAY_ALLOC_SHAREABLE",
                class_name(a.cls), d.label.c_str());
  VkMemoryGetFdInfoKHR gi{};
  gi.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR;
  gi.memory = a.memory;
  gi.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  int fd = -1;
  const VkResult r = d.fn.vkGetMemoryFdKHR(d.dev, &gi, &fd);
  if (r != VK_SUCCESS)
    return vk_fail(err, status_of(r), "vkGetMemoryFdKHR", r, "%s", d.label.c_str());
  std::memset(out, 0, sizeof *out);
  out->kind = kIpcMemoryKind;
  out->fd = fd;
  out->byte_size = a.byte_size;
  out->offset = a.offset;
  IpcBytes b{};
  b.magic = kIpcMagic;
  b.memory_type = a.type;
  b.allocation_size = a.size;
  b.buffer_size = a.buffer_size;
  b.alignment = a.alignment;
  b.memory_class = a.cls;
  b.dedicated = a.dedicated ? 1 : 0;
  std::memcpy(b.device_uuid, d.device_uuid, VK_UUID_SIZE);
  std::memcpy(b.driver_uuid, d.driver_uuid, VK_UUID_SIZE);
  std::memcpy(out->bytes, &b, sizeof b);
  return HURRAY_OK;
}

hurray_status check_ipc_handle(const Device &d, const hurray_backend_ipc_handle *h,
                               uint32_t kind, IpcBytes *b, const char *what,
                               hurray_error *err) {
  if (!h) return fail(err, HURRAY_E_INVALID_ARGUMENT, "%s: handle is NULL", what);
  std::memcpy(b, h->bytes, sizeof *b);
  if (h->kind != kind || b->magic != kIpcMagic)
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "%s: not a Vulkan %s handle of the vulkan backend (kind %u)", what,
                kind == kIpcMemoryKind ? "memory" : "event", h->kind);
  if (h->fd < 0) return fail(err, HURRAY_E_INVALID_ARGUMENT, "%s: the handle has no fd", what);
  if (std::memcmp(b->device_uuid, d.device_uuid, VK_UUID_SIZE) != 0 ||
      std::memcmp(b->driver_uuid, d.driver_uuid, VK_UUID_SIZE) != 0)
    return fail(err, HURRAY_E_UNSUPPORTED,
                "%s: the handle comes from another Vulkan device or driver than %s (device "
                "or driver UUID differs)",
                what, d.label.c_str());
  return HURRAY_OK;
}

hurray_status ipc_import_memory_impl(State &s, int32_t device,
                                     const hurray_backend_ipc_handle *h, uint8_t cls,
                                     hurray_backend_allocation *out, hurray_error *err) {
  const char *what = "ipc_import_memory";
  if (!out) return fail(err, HURRAY_E_INVALID_ARGUMENT, "%s: out is NULL", what);
  Device *d = s.device(device);
  if (!d) return bad_device(err, &s, device);
  if (!d->ipc_memory)
    return fail(err, HURRAY_E_UNSUPPORTED, "%s: %s cannot import memory: %s", what,
                d->label.c_str(), d->ipc_memory_why.c_str());
  IpcBytes b{};
  if (const hurray_status st = check_ipc_handle(*d, h, kIpcMemoryKind, &b, what, err);
      st != HURRAY_OK)
    return st;
  if (cls >= kClassCount)
    return check_class(*d, cls, err);
  if (b.memory_type >= d->mem.memoryTypeCount ||
      !type_serves(cls, d->mem.memoryTypes[b.memory_type].propertyFlags))
    return fail(err, HURRAY_E_MEMORY_CLASS,
                "%s: the exported memory (type %u, exported as %s) cannot serve memory class "
                "%s on %s",
                what, b.memory_type, class_name(b.memory_class), class_name(cls),
                d->label.c_str());
  if (h->offset > b.buffer_size || h->byte_size > b.buffer_size - h->offset ||
      b.buffer_size > b.allocation_size)
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "%s: bytes [%llu, +%llu) lie outside the %llu-byte exported buffer", what,
                static_cast<unsigned long long>(h->offset),
                static_cast<unsigned long long>(h->byte_size),
                static_cast<unsigned long long>(b.buffer_size));
  if (!class_mapped(cls) && h->offset != 0)
    return fail(err, HURRAY_E_UNSUPPORTED,
                "%s: an opaque %s import cannot start at offset %llu", what, class_name(cls),
                static_cast<unsigned long long>(h->offset));

  FdGuard fd{fcntl(h->fd, F_DUPFD_CLOEXEC, 0)};
  if (fd.fd < 0)
    return fail(err, HURRAY_E_IO, "%s: dup of fd %d failed: %s", what, h->fd,
                std::strerror(errno));
  auto a = std::make_unique<Allocation>();
  a->dev = d;
  a->cls = cls;
  a->byte_size = h->byte_size;
  a->exportable = true;
  a->dedicated = b.dedicated != 0;
  struct Cleanup {
    Allocation *a;
    ~Cleanup() {
      if (a) a->destroy();
    }
  } cleanup{a.get()};
  if (const hurray_status st = make_memory(*d, *a, b.buffer_size, true, fd.fd, b.allocation_size,
                                           static_cast<int>(b.memory_type), err);
      st != HURRAY_OK) {
    if (a->memory) fd.release();  // Vulkan owns it once the import succeeded
    return st;
  }
  fd.release();
  a->offset = h->offset;
  if (a->base) {
    // The exporter's alignment holds here only as far as this mapping allows.
    const uintptr_t data = reinterpret_cast<uintptr_t>(a->base) + a->offset;
    uint32_t al = b.alignment ? b.alignment : HURRAY_MIN_ALIGNMENT;
    while (al > 1 && data % al) al >>= 1;
    a->alignment = al;
  } else {
    a->alignment = b.alignment ? b.alignment : HURRAY_MIN_ALIGNMENT;
  }
  fill_out(*a, device, out);
  register_allocation(s, a.get(), *out);
  cleanup.a = nullptr;
  a.release();
  return HURRAY_OK;
}

hurray_status ipc_export_event_impl(State &s, int32_t device, void *event,
                                    hurray_backend_ipc_handle *out, hurray_error *err) {
  Device *d = s.device(device);
  if (!d) return bad_device(err, &s, device);
  if (!d->ipc_events)
    return fail(err, HURRAY_E_UNSUPPORTED,
                "ipc_export_event: %s cannot share events with other processes: %s",
                d->label.c_str(), d->ipc_events_why.c_str());
  if (!event || !out)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "ipc_export_event: NULL argument");
  const VkSemaphore sem = from_ptr<VkSemaphore>(event);
  {
    std::lock_guard<std::mutex> lock(d->mu);
    bool ours = false;
    for (const Timeline &t : d->timelines) ours = ours || t.semaphore == sem;
    if (!ours)
      return fail(err, HURRAY_E_UNSUPPORTED,
                  "ipc_export_event: only timelines made by event_record on %s can be exported",
                  d->label.c_str());
  }
  VkSemaphoreGetFdInfoKHR gi{};
  gi.sType = VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR;
  gi.semaphore = sem;
  gi.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
  int fd = -1;
  const VkResult r = d->fn.vkGetSemaphoreFdKHR(d->dev, &gi, &fd);
  if (r != VK_SUCCESS)
    return vk_fail(err, status_of(r), "vkGetSemaphoreFdKHR", r, "%s", d->label.c_str());
  std::memset(out, 0, sizeof *out);
  out->kind = kIpcEventKind;
  out->fd = fd;
  IpcBytes b{};
  b.magic = kIpcMagic;
  std::memcpy(b.device_uuid, d->device_uuid, VK_UUID_SIZE);
  std::memcpy(b.driver_uuid, d->driver_uuid, VK_UUID_SIZE);
  std::memcpy(out->bytes, &b, sizeof b);
  return HURRAY_OK;
}

hurray_status ipc_import_event_impl(State &s, int32_t device,
                                    const hurray_backend_ipc_handle *h, void **event,
                                    hurray_error *err) {
  const char *what = "ipc_import_event";
  Device *d = s.device(device);
  if (!d) return bad_device(err, &s, device);
  if (!d->ipc_events)
    return fail(err, HURRAY_E_UNSUPPORTED, "%s: %s cannot import events: %s", what,
                d->label.c_str(), d->ipc_events_why.c_str());
  if (!event) return fail(err, HURRAY_E_INVALID_ARGUMENT, "%s: event is NULL", what);
  IpcBytes b{};
  if (const hurray_status st = check_ipc_handle(*d, h, kIpcEventKind, &b, what, err);
      st != HURRAY_OK)
    return st;
  FdGuard fd{fcntl(h->fd, F_DUPFD_CLOEXEC, 0)};
  if (fd.fd < 0)
    return fail(err, HURRAY_E_IO, "%s: dup of fd %d failed: %s", what, h->fd,
                std::strerror(errno));
  VkSemaphoreTypeCreateInfo type{};
  type.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  VkSemaphoreCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  ci.pNext = &type;
  VkSemaphore sem = VK_NULL_HANDLE;
  VkResult r = d->fn.vkCreateSemaphore(d->dev, &ci, nullptr, &sem);
  if (r != VK_SUCCESS)
    return vk_fail(err, status_of(r), "vkCreateSemaphore", r, "%s", what);
  VkImportSemaphoreFdInfoKHR ii{};
  ii.sType = VK_STRUCTURE_TYPE_IMPORT_SEMAPHORE_FD_INFO_KHR;
  ii.semaphore = sem;
  ii.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
  ii.fd = fd.fd;
  r = d->fn.vkImportSemaphoreFdKHR(d->dev, &ii);
  if (r != VK_SUCCESS) {
    d->fn.vkDestroySemaphore(d->dev, sem, nullptr);
    return vk_fail(err, status_of(r), "vkImportSemaphoreFdKHR", r, "%s", d->label.c_str());
  }
  fd.release();  // owned by the semaphore now
  std::lock_guard<std::mutex> lock(d->mu);
  d->imported.push_back(sem);
  *event = to_ptr(sem);
  return HURRAY_OK;
}

// ------------------------------------------------------- the C table ----

hurray_status vk_probe(void **state, hurray_error *err) {
  return guarded(err, [&] { return probe_impl(state, err); });
}

void vk_shutdown(void *state) {
  try {
    delete state_of(state);
  } catch (...) {
  }
}

int32_t vk_device_count(void *state) {
  const State *s = state_of(state);
  return s ? static_cast<int32_t>(s->devices.size()) : 0;
}

hurray_status vk_device_info(void *state, int32_t device, hurray_backend_device_info *out,
                             hurray_error *err) {
  return guarded(err, [&] {
    State *s = state_of(state);
    Device *d = s ? s->device(device) : nullptr;
    if (!d) return bad_device(err, s, device);
    if (!out) return fail(err, HURRAY_E_INVALID_ARGUMENT, "device_info: out is NULL");
    std::memset(out, 0, sizeof *out);
    std::snprintf(out->name, sizeof out->name, "%.127s", d->props.deviceName);
    for (int c = 0; c < kClassCount; ++c)
      if (d->class_type[c] >= 0) out->memory_classes |= 1u << c;
    out->ipc = (d->ipc_memory ? HURRAY_BACKEND_IPC_MEMORY : 0u) |
               (d->ipc_events ? static_cast<uint32_t>(HURRAY_BACKEND_IPC_EVENTS) : 0u);
    out->min_alignment = HURRAY_MIN_ALIGNMENT;
    std::snprintf(out->detail, sizeof out->detail, "%s", d->detail.c_str());
    return HURRAY_OK;
  });
}

hurray_status vk_alloc(void *state, int32_t device, uint8_t memory_class, uint64_t byte_size,
                       uint32_t alignment, uint32_t flags, hurray_backend_allocation *out,
                       hurray_error *err) {
  return guarded(err, [&] {
    State *s = state_of(state);
    if (!s) return bad_device(err, s, device);
    return alloc_impl(*s, device, memory_class, byte_size, alignment, flags, out, err);
  });
}

void vk_free(void *state, hurray_backend_allocation *allocation) {
  try {
    if (State *s = state_of(state)) free_impl(*s, allocation);
  } catch (...) {
  }
}

hurray_status vk_copy_to_host(void *, const hurray_backend_allocation *src, uint64_t offset,
                              void *dst, uint64_t n, hurray_error *err) {
  return guarded(err, [&] { return copy_impl(src, offset, dst, n, true, err); });
}

hurray_status vk_copy_from_host(void *, hurray_backend_allocation *dst, uint64_t offset,
                                const void *src, uint64_t n, hurray_error *err) {
  return guarded(err, [&] {
    return copy_impl(dst, offset, const_cast<void *>(src), n, false, err);
  });
}

hurray_status vk_classify(void *state, const void *ptr, int32_t *device, uint8_t *memory_class,
                          hurray_error *err) {
  return guarded(err, [&] {
    State *s = state_of(state);
    if (!s || !ptr) return fail(err, HURRAY_E_INVALID_ARGUMENT, "classify: NULL argument");
    const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
    std::lock_guard<std::mutex> lock(s->reg_mu);
    auto it = s->registry.upper_bound(p);
    while (it != s->registry.begin()) {
      --it;
      if (p < it->second.end) {
        const Allocation &a = *it->second.allocation;
        if (device) *device = a.dev->ordinal;
        if (memory_class) *memory_class = a.cls;
        return HURRAY_OK;
      }
      if (it->first != p) break;
    }
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "classify: %p is not memory of the vulkan backend", ptr);
  });
}

hurray_status vk_event_record(void *state, int32_t device, void *stream, void **event,
                              uint64_t *value, hurray_error *err) {
  return guarded(err, [&] {
    State *s = state_of(state);
    if (!s) return bad_device(err, s, device);
    return event_record_impl(*s, device, stream, event, value, err);
  });
}

hurray_status vk_event_wait(void *state, int32_t device, void *event, uint64_t value,
                            void *stream, hurray_error *err) {
  return guarded(err, [&] {
    State *s = state_of(state);
    if (!s) return bad_device(err, s, device);
    return event_wait_impl(*s, device, event, value, stream, err);
  });
}

void vk_event_release(void *state, int32_t device, void *event) {
  try {
    if (State *s = state_of(state)) event_release_impl(*s, device, event);
  } catch (...) {
  }
}

hurray_status vk_ipc_export_memory(void *state, const hurray_backend_allocation *allocation,
                                   hurray_backend_ipc_handle *out, hurray_error *err) {
  return guarded(err, [&] {
    State *s = state_of(state);
    if (!s) return fail(err, HURRAY_E_INVALID_ARGUMENT, "ipc_export_memory: no state");
    return ipc_export_memory_impl(*s, allocation, out, err);
  });
}

hurray_status vk_ipc_import_memory(void *state, int32_t device,
                                   const hurray_backend_ipc_handle *handle,
                                   uint8_t memory_class, hurray_backend_allocation *out,
                                   hurray_error *err) {
  return guarded(err, [&] {
    State *s = state_of(state);
    if (!s) return bad_device(err, s, device);
    return ipc_import_memory_impl(*s, device, handle, memory_class, out, err);
  });
}

hurray_status vk_ipc_export_event(void *state, int32_t device, void *event,
                                  hurray_backend_ipc_handle *out, hurray_error *err) {
  return guarded(err, [&] {
    State *s = state_of(state);
    if (!s) return bad_device(err, s, device);
    return ipc_export_event_impl(*s, device, event, out, err);
  });
}

hurray_status vk_ipc_import_event(void *state, int32_t device,
                                  const hurray_backend_ipc_handle *handle, void **event,
                                  hurray_error *err) {
  return guarded(err, [&] {
    State *s = state_of(state);
    if (!s) return bad_device(err, s, device);
    return ipc_import_event_impl(*s, device, handle, event, err);
  });
}

hurray_status vk_native(void *state, int32_t device, hurray_backend_native *out,
                        hurray_error *err) {
  return guarded(err, [&] {
    State *s = state_of(state);
    Device *d = s ? s->device(device) : nullptr;
    if (!d) return bad_device(err, s, device);
    if (!out) return fail(err, HURRAY_E_INVALID_ARGUMENT, "native: out is NULL");
    std::memset(out, 0, sizeof *out);
    out->handles[0] = to_ptr(s->instance);
    out->handles[1] = to_ptr(d->phys);
    out->handles[2] = to_ptr(d->dev);
    out->handles[3] = to_ptr(d->queue);
    out->handles[4] = reinterpret_cast<void *>(static_cast<uintptr_t>(d->family));
    static_assert(sizeof(s->gipa) == sizeof(void *));
    std::memcpy(&out->handles[5], &s->gipa, sizeof(void *));
    std::lock_guard<std::mutex> lock(d->mu);
    out->handles[6] = to_ptr(d->timelines.front().semaphore);
    return HURRAY_OK;
  });
}

constexpr hurray_backend_v1 make_table() noexcept {
  hurray_backend_v1 t = hurray::kit::make_table(HURRAY_DEVICE_VULKAN);
  HURRAY_KIT_ENTRY(t, probe, vk_probe);
  HURRAY_KIT_ENTRY(t, shutdown, vk_shutdown);
  HURRAY_KIT_ENTRY(t, device_count, vk_device_count);
  HURRAY_KIT_ENTRY(t, device_info, vk_device_info);
  HURRAY_KIT_ENTRY(t, alloc, vk_alloc);
  HURRAY_KIT_ENTRY(t, free, vk_free);
  HURRAY_KIT_ENTRY(t, copy_to_host, vk_copy_to_host);
  HURRAY_KIT_ENTRY(t, copy_from_host, vk_copy_from_host);
  HURRAY_KIT_ENTRY(t, classify, vk_classify);
  HURRAY_KIT_ENTRY(t, event_record, vk_event_record);
  HURRAY_KIT_ENTRY(t, event_wait, vk_event_wait);
  HURRAY_KIT_ENTRY(t, event_release, vk_event_release);
  HURRAY_KIT_ENTRY(t, ipc_export_memory, vk_ipc_export_memory);
  HURRAY_KIT_ENTRY(t, ipc_import_memory, vk_ipc_import_memory);
  HURRAY_KIT_ENTRY(t, ipc_export_event, vk_ipc_export_event);
  HURRAY_KIT_ENTRY(t, ipc_import_event, vk_ipc_import_event);
  HURRAY_KIT_ENTRY(t, native, vk_native);
  return t;
}

constinit const hurray_backend_v1 kTable = make_table();

}  // namespace

extern "C" __attribute__((visibility("default"))) const hurray_backend_v1 *
hurray_backend_entry(void) {
  return &kTable;
}
