/*
 * libhurray-level-zero.so - the Level Zero device plugin (device_tag 0x07
 * LEVEL_ZERO), hurray_backend_v1.
 *
 * Loading. The plugin links no libze_loader: probe() dlopens
 * "libze_loader.so.1" and resolves every ze* function it uses with dlsym
 * (internal.h lists them). It then calls zeInit(ZE_INIT_FLAG_GPU_ONLY); a
 * failure is HURRAY_E_DEVICE_UNAVAILABLE named by its result, e.g.
 * "[zeInit] ZE_RESULT_ERROR_UNINITIALIZED: ..." (what Debian's loader answers
 * when it finds no GPU driver). libze_loader.so.1 stays loaded after
 * shutdown(): the loader keeps process-wide state from zeInit on, and its
 * drivers are not made to be unloaded.
 *
 * Devices. Every root device of every driver zeDriverGet returns becomes one
 * device ordinal, in driver order then device order (sub-devices are not
 * listed). Each driver gets one context (zeContextCreate) shared by its
 * devices, so peers of one driver see each other's memory. Each device gets
 * one immediate command list (asynchronous mode, queue index 0 of the first
 * command queue group with compute, else the first with copy): "the plugin's
 * list", the device's default stream. A device whose list or events cannot
 * be made is left out (and named in probe's reason if no device is left).
 *
 * Native handles (hurray_backend_native.handles, filled by native()):
 *   [0] ze_driver_handle_t        the device's driver
 *   [1] ze_device_handle_t        the device
 *   [2] ze_context_handle_t       the driver's context (every device of it)
 *   [3] ze_command_list_handle_t  the plugin's immediate command list of the
 *                                 device: "stream NULL" of event_record /
 *                                 event_wait, and where every copy runs
 *   [4] void *                    the plugin's dlopen() handle of
 *                                 libze_loader.so.1, so a caller can dlsym
 *                                 ze* functions without linking it
 *   [5] (void *)(uintptr_t)       the command queue group ordinal of [3], so
 *                                 a caller can make lists on the same engine
 *   [6]..[7] NULL
 * The plugin owns all of them until shutdown(). A stream passed to
 * event_record / event_wait is a ze_command_list_handle_t of the context in
 * [2] (immediate, or a regular list the caller executes itself). The plugin
 * appends to its own list under the device's mutex; Level Zero lists are not
 * thread-safe, so a caller that appends to [3] itself must not do so while a
 * plugin call for the same device runs, and a caller's own list passed as a
 * stream must not be used by another thread during the call.
 *
 * Memory classes (device_info().detail says the same, shortly):
 *   STANDARD     zeMemAllocDevice. data is the device address (not opaque:
 *                HURRAY_HANDOFF_OPAQUE_DATA is not set), host is NULL.
 *   HOST_PINNED  zeMemAllocHost. data == host == the allocation.
 *   UNIFIED      zeMemAllocShared (associated with the device). data == host.
 *                Only where zeDeviceGetMemoryAccessProperties reports
 *                ZE_MEMORY_ACCESS_CAP_FLAG_RW for shared single-device
 *                allocations; else HURRAY_E_DEVICE_UNAVAILABLE with that reason.
 *   PEER         zeMemAllocDevice on a device that at least one other device
 *                of the same driver can access (zeDeviceCanAccessPeer, asked
 *                at probe); Level Zero needs no further step for peer access
 *                within one context. A device without such a peer:
 *                HURRAY_E_DEVICE_UNAVAILABLE with the reason.
 *   STANDARD and HOST_PINNED are served by every device (Level Zero requires
 *   both); other class numbers are HURRAY_E_MEMORY_CLASS.
 *
 * Alignment. The requested alignment (at least 64, HURRAY_MIN_ALIGNMENT, the
 * Level Zero default of TABLES.md) is passed to the allocation function. The
 * pointer that comes back is checked: when the driver gave less (or refused
 * the alignment with ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT), the allocation
 * is freed and made again `alignment` bytes larger, and data is the first
 * aligned address inside it. The reported alignment is always true.
 *
 * classify() asks the driver: zeMemGetAllocProperties on each driver's
 * context. ZE_MEMORY_TYPE_DEVICE is STANDARD (PEER when the pointer lies in
 * an allocation this plugin made as PEER: Level Zero itself has no notion of
 * it), HOST is HOST_PINNED, SHARED is UNIFIED; the device is the one the
 * driver names, or for host memory (which has none) the one the plugin
 * allocated it for, else the driver's first. ZE_MEMORY_TYPE_UNKNOWN in every
 * context is HURRAY_E_INVALID_ARGUMENT.
 *
 * Copies (copy_to_host / copy_from_host) run on the plugin's list, for every
 * class: a barrier (so they follow all work appended to it before, including
 * event_wait's waits), zeCommandListAppendMemoryCopy signalling the device's
 * copy event, zeEventHostSynchronize, zeEventHostReset. The caller's host
 * memory is handed to Level Zero as is. The plugin never touches memory that
 * Level Zero allocated with the CPU, not even host-visible classes.
 *
 * Events are ze_event_handle_t (binary: value 0), taken from event pools of
 * 64 events per device (ZE_EVENT_POOL_FLAG_HOST_VISIBLE, plus
 * ZE_EVENT_POOL_FLAG_IPC when the driver reports
 * ZE_IPC_PROPERTY_FLAG_EVENT_POOL; a pool is added when all are lent; events
 * signal and wait with host scope). event_record(stream) appends to `stream`
 * (NULL: the plugin's list) a barrier that signals the event, so the event
 * fires once everything appended before it is done (a bare signal would not
 * promise that order). event_wait with a stream appends
 * zeCommandListAppendWaitOnEvents to it; with stream NULL it is
 * zeEventHostSynchronize (no timeout). event_release resets the event
 * (zeEventHostReset) and returns it to its pool; events opened by
 * ipc_import_event are destroyed instead.
 *
 * IPC, only where zeDriverGetIpcProperties reports it (device_info().ipc):
 *   memory  ipc_export_memory: kind 0x4c5a0001, bytes = the 64-byte
 *           ze_ipc_mem_handle_t of zeMemGetIpcHandle on the allocation, offset
 *           = where data lies in it (see Alignment), byte_size. Only device
 *           allocations (STANDARD, PEER) are exported: Level Zero 1.4 exports
 *           device memory. HURRAY_ALLOC_SHAREABLE is accepted for those and
 *           HURRAY_E_UNSUPPORTED for the others (and without driver support).
 *           ipc_import_memory: zeMemOpenIpcHandle on the device, as STANDARD
 *           or PEER; free() closes it with zeMemCloseIpcHandle.
 *   events  ipc_export_event: kind 0x4c5a0002, bytes = the
 *           ze_ipc_event_pool_handle_t of the event's pool
 *           (zeEventPoolGetIpcHandle), offset = the event's index in the pool.
 *           ipc_import_event: zeEventPoolOpenIpcHandle + zeEventCreate at that
 *           index; event_release destroys the event and closes the pool.
 *   File descriptors. The Level Zero 1.4 handle is opaque, but on Linux the
 *   usual drivers put the exporting process's dma-buf file descriptor in its
 *   first bytes, which mean nothing in another process. So: on export, when
 *   the first int of the handle is an open dma-buf descriptor of this process
 *   (checked through /proc/self/fd), fd is a dup of it (close-on-exec, the
 *   caller owns and closes it, and passes it with SCM_RIGHTS); otherwise fd
 *   is -1 and the bytes are meant to travel alone. On import with fd >= 0,
 *   the plugin dups fd (the caller keeps its own), writes the dup's number
 *   into the first int of the handle and opens that; the dup stays open until
 *   the import is freed / released. The descriptor inside an exported handle
 *   stays the driver's.
 *
 * Threads. Every entry point may be called from any thread. Per device, a
 * mutex guards the plugin's list, its copy event and the event pools; a
 * registry mutex guards the live allocations (classify, shutdown). No C++
 * exception leaves an entry point. free() and shutdown() must only run once
 * the device no longer uses the memory (BP-REL-AFTER); shutdown() first
 * drains each plugin list, then frees what is still allocated and destroys
 * events, pools, lists and contexts.
 */
#include <dlfcn.h>
#include <fcntl.h>
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

#include <hurray_backend.h>

#include "class_name.h"
#include "kit/align.h"
#include "kit/entry.h"
#include "kit/errors.h"
#include "kit/ipc.h"

#include "internal.h"

namespace {

using hurray::level_zero::Api;

constexpr const char *kLibrary = "libze_loader.so.1";
constexpr uint32_t kEventsPerPool = 64;
constexpr uint32_t kIpcMemoryKind = 0x4c5a0001u;  // "LZ" 1
constexpr uint32_t kIpcEventKind = 0x4c5a0002u;   // "LZ" 2
constexpr uint64_t kMaxAlignment = 1ull << 31;    // a u32 alignment

// ---- errors ---------------------------------------------------------------

using hurray::kit::fail;

hurray_status status_of(ze_result_t r) noexcept {
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
const char *result_text(ze_result_t r, char (&buf)[40]) noexcept {
  if (const char *known = hurray::level_zero::result_name(r)) return known;
  std::snprintf(buf, sizeof buf, "ze_result_t 0x%08x", static_cast<unsigned>(r));
  return buf;
}

// "[zeMemAllocDevice] ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY: <details>"; the
// status follows the result unless `status` is given.
__attribute__((format(printf, 5, 6))) hurray_status ze_fail(hurray_error *err, hurray_status status,
                                                            const char *function, ze_result_t r,
                                                            const char *fmt, ...) noexcept {
  if (status == HURRAY_OK) status = status_of(r);
  char buf[40];
  const char *name = result_text(r, buf);
  char details[200] = "";
  if (fmt != nullptr && fmt[0] != '\0') {
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(details, sizeof details, fmt, ap);
    va_end(ap);
  }
  return hurray::kit::vendor_fail(err, status, function, name, details, nullptr);
}

using hurray::plugin::class_name;

bool is_device_class(uint8_t mc) noexcept {
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

struct State {
  void *lib = nullptr;
  Api ze;
  std::vector<std::unique_ptr<Driver>> drivers;  // fixed after probe
  std::vector<std::unique_ptr<Device>> devices;  // fixed after probe

  std::mutex mu;                           // guards what follows
  std::map<uintptr_t, Allocation *> live;  // by data address (empty buffers have none)
  std::vector<Allocation *> empties;       // zero-byte allocations have no address
};

hurray_status get_device(State *s, int32_t device, Device **out, hurray_error *err) noexcept {
  if (const hurray_status st = hurray::kit::check_device(s, device, s != nullptr ? s->devices.size() : 0, err))
    return st;
  *out = s->devices[static_cast<size_t>(device)].get();
  return HURRAY_OK;
}

using hurray::kit::alignment_of;
using hurray::kit::is_aligned;

__attribute__((format(printf, 2, 3))) void note(std::string *why, const char *fmt, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (!why->empty()) *why += "; ";
  *why += buf;
}

// Run `body` and turn an escaping exception into a status.
template <typename F>
hurray_status guarded(hurray_error *err, const char *what, F &&body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return fail(err, HURRAY_E_OUT_OF_MEMORY, "level-zero: %s: out of host memory", what);
  } catch (...) {
    return fail(err, HURRAY_E_INTERNAL, "level-zero: %s: unexpected exception", what);
  }
}

// ---- file descriptors in IPC handles -----------------------------------------

// The first int of an IPC handle, when it is an open dma-buf descriptor of
// this process (see "File descriptors" above), else -1.
int dmabuf_fd_in(const char (&data)[ZE_MAX_IPC_HANDLE_SIZE]) noexcept {
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
hurray_status export_fd(const char (&data)[ZE_MAX_IPC_HANDLE_SIZE], int *out,
                        hurray_error *err) noexcept {
  return hurray::kit::dup_fd(dmabuf_fd_in(data), out, hurray::kit::kPlugin,
                             "the IPC handle's descriptor", err);
}

// Import side: with fd >= 0, dup it and write the dup's number into the
// handle's first int. *dup_out is the dup (or -1), owned by the caller.
hurray_status import_fd(int fd, char (&data)[ZE_MAX_IPC_HANDLE_SIZE], int *dup_out,
                        const char *what, hurray_error *err) noexcept {
  if (const hurray_status st = hurray::kit::dup_fd(fd, dup_out, hurray::kit::kPlugin, what, err))
    return st;
  if (*dup_out >= 0) std::memcpy(data, dup_out, sizeof *dup_out);
  return HURRAY_OK;
}

// ---- probe ----------------------------------------------------------------

void destroy_events(const Api &ze, Device &d) noexcept {
  for (auto &[event, imp] : d.imported) {
    ze.zeEventDestroy(event);
    ze.zeEventPoolCloseIpcHandle(imp.pool);
    if (imp.fd >= 0) close(imp.fd);
  }
  d.imported.clear();
  for (Pool &p : d.pools) {
    for (ze_event_handle_t &e : p.events) {
      if (e != nullptr) ze.zeEventDestroy(e);
      e = nullptr;
    }
    if (p.handle != nullptr) ze.zeEventPoolDestroy(p.handle);
    p.handle = nullptr;
  }
  d.pools.clear();
  d.free_slots.clear();
  d.lent.clear();
}

// Wait until everything appended to the plugin's list is done (shutdown).
void drain(const Api &ze, Device &d) noexcept {
  if (d.list == nullptr || d.copy_event == nullptr) return;
  if (ze.zeCommandListAppendBarrier(d.list, d.copy_event, 0, nullptr) == ZE_RESULT_SUCCESS)
    ze.zeEventHostSynchronize(d.copy_event, UINT64_MAX);
  ze.zeEventHostReset(d.copy_event);
}

void close_device(const Api &ze, Device &d) noexcept {
  drain(ze, d);
  destroy_events(ze, d);
  if (d.copy_event != nullptr) ze.zeEventDestroy(d.copy_event);
  if (d.copy_pool != nullptr) ze.zeEventPoolDestroy(d.copy_pool);
  if (d.list != nullptr) ze.zeCommandListDestroy(d.list);
  d.copy_event = nullptr;
  d.copy_pool = nullptr;
  d.list = nullptr;
}

void close_all(State *s) noexcept {
  for (auto &d : s->devices) close_device(s->ze, *d);
  for (auto &drv : s->drivers) {
    if (drv->context != nullptr) s->ze.zeContextDestroy(drv->context);
    drv->context = nullptr;
  }
}

// The command list, copy event and capabilities of one device. false (and a
// note in *why) when the device cannot be used.
bool open_device(const Api &ze, Device &d, std::string *why) {
  char buf[40];
  const char *label = d.name.c_str();
  // A queue group that can compute (and so copy), else one that can copy.
  uint32_t n = 0;
  ze_result_t r = ze.zeDeviceGetCommandQueueGroupProperties(d.handle, &n, nullptr);
  if (r != ZE_RESULT_SUCCESS || n == 0) {
    note(why, "[zeDeviceGetCommandQueueGroupProperties] %s: device '%s'",
         r != ZE_RESULT_SUCCESS ? result_text(r, buf) : "no command queue group", label);
    return false;
  }
  std::vector<ze_command_queue_group_properties_t> groups(n);
  for (auto &g : groups) {
    g = {};
    g.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
  }
  r = ze.zeDeviceGetCommandQueueGroupProperties(d.handle, &n, groups.data());
  if (r != ZE_RESULT_SUCCESS) {
    note(why, "[zeDeviceGetCommandQueueGroupProperties] %s: device '%s'", result_text(r, buf),
         label);
    return false;
  }
  groups.resize(std::min<size_t>(n, groups.size()));
  int compute = -1, copy = -1;
  for (size_t i = 0; i < groups.size(); ++i) {
    if (compute < 0 && (groups[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) != 0)
      compute = static_cast<int>(i);
    if (copy < 0 && (groups[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY) != 0)
      copy = static_cast<int>(i);
  }
  if (compute < 0 && copy < 0) {
    note(why, "device '%s' has no command queue group for compute or copy", label);
    return false;
  }
  d.group = static_cast<uint32_t>(compute >= 0 ? compute : copy);

  ze_command_queue_desc_t qd{};
  qd.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
  qd.ordinal = d.group;
  qd.index = 0;
  qd.flags = 0;
  qd.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
  qd.priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL;
  r = ze.zeCommandListCreateImmediate(d.driver->context, d.handle, &qd, &d.list);
  if (r != ZE_RESULT_SUCCESS || d.list == nullptr) {
    note(why, "[zeCommandListCreateImmediate] %s: device '%s', queue group %u",
         r != ZE_RESULT_SUCCESS ? result_text(r, buf) : "no list", label, d.group);
    d.list = nullptr;
    return false;
  }

  // The copy event: one host-visible event of its own pool.
  ze_event_pool_desc_t pd{};
  pd.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC;
  pd.flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE;
  pd.count = 1;
  r = ze.zeEventPoolCreate(d.driver->context, &pd, 1, &d.handle, &d.copy_pool);
  if (r != ZE_RESULT_SUCCESS || d.copy_pool == nullptr) {
    note(why, "[zeEventPoolCreate] %s: device '%s'",
         r != ZE_RESULT_SUCCESS ? result_text(r, buf) : "no pool", label);
    d.copy_pool = nullptr;
    return false;
  }
  ze_event_desc_t ed{};
  ed.stype = ZE_STRUCTURE_TYPE_EVENT_DESC;
  ed.index = 0;
  ed.signal = ZE_EVENT_SCOPE_FLAG_HOST;
  ed.wait = ZE_EVENT_SCOPE_FLAG_HOST;
  r = ze.zeEventCreate(d.copy_pool, &ed, &d.copy_event);
  if (r != ZE_RESULT_SUCCESS || d.copy_event == nullptr) {
    note(why, "[zeEventCreate] %s: device '%s'",
         r != ZE_RESULT_SUCCESS ? result_text(r, buf) : "no event", label);
    d.copy_event = nullptr;
    return false;
  }

  // UNIFIED needs read/write shared single-device allocations.
  ze_device_memory_access_properties_t access{};
  access.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_ACCESS_PROPERTIES;
  r = ze.zeDeviceGetMemoryAccessProperties(d.handle, &access);
  if (r != ZE_RESULT_SUCCESS) {
    d.unified_why = std::string("[zeDeviceGetMemoryAccessProperties] ") + result_text(r, buf);
  } else if ((access.sharedSingleDeviceAllocCapabilities & ZE_MEMORY_ACCESS_CAP_FLAG_RW) == 0) {
    char why_buf[160];
    std::snprintf(why_buf, sizeof why_buf,
                  "the device reports no read/write access to shared allocations "
                  "(sharedSingleDeviceAllocCapabilities 0x%x)",
                  static_cast<unsigned>(access.sharedSingleDeviceAllocCapabilities));
    d.unified_why = why_buf;
  } else {
    d.unified = true;
  }
  d.ipc_pools = d.driver->ipc_events();
  return true;
}

// Peers: devices of the same driver that can access each device's memory.
void find_peers(const Api &ze, State *s) {
  for (auto &dp : s->devices) {
    Device &d = *dp;
    std::string why;
    size_t others = 0;
    for (auto &ep : s->devices) {
      Device &e = *ep;
      if (&e == &d || e.driver != d.driver) continue;
      ++others;
      ze_bool_t can = 0;
      const ze_result_t r = ze.zeDeviceCanAccessPeer(e.handle, d.handle, &can);
      if (r != ZE_RESULT_SUCCESS) {
        char buf[40];
        note(&why, "[zeDeviceCanAccessPeer] %s: device %d to device %d", result_text(r, buf),
             static_cast<int>(e.ordinal), static_cast<int>(d.ordinal));
      } else if (can) {
        d.peers.push_back(e.ordinal);
      } else {
        note(&why, "device %d cannot access it (zeDeviceCanAccessPeer)",
             static_cast<int>(e.ordinal));
      }
    }
    if (others == 0) why = "it is the only device of its driver: no peer device";
    if (d.peers.empty()) d.peer_why = why;
  }
}

hurray_status open_devices(State *s, hurray_error *err) {
  const Api &ze = s->ze;
  char buf[40];
  ze_result_t r = ze.zeInit(ZE_INIT_FLAG_GPU_ONLY);
  if (r != ZE_RESULT_SUCCESS)
    return ze_fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "zeInit", r,
                   "%s could not initialise a Level Zero GPU driver", kLibrary);
  uint32_t count = 0;
  r = ze.zeDriverGet(&count, nullptr);
  if (r != ZE_RESULT_SUCCESS)
    return ze_fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "zeDriverGet", r, nullptr);
  if (count == 0)
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "[zeDriverGet] no Level Zero GPU driver");
  std::vector<ze_driver_handle_t> handles(count);
  r = ze.zeDriverGet(&count, handles.data());
  if (r != ZE_RESULT_SUCCESS)
    return ze_fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "zeDriverGet", r, nullptr);
  handles.resize(std::min<size_t>(count, handles.size()));

  std::string why;  // why drivers or devices were left out
  for (size_t di = 0; di < handles.size(); ++di) {
    auto drv = std::make_unique<Driver>();
    drv->handle = handles[di];
    drv->index = static_cast<uint32_t>(di);
    ze_driver_properties_t dprops{};
    dprops.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES;
    if (ze.zeDriverGetProperties(drv->handle, &dprops) == ZE_RESULT_SUCCESS)
      drv->version = dprops.driverVersion;
    ze_api_version_t api = ZE_API_VERSION_1_0;
    if (ze.zeDriverGetApiVersion(drv->handle, &api) == ZE_RESULT_SUCCESS) drv->api = api;
    ze_driver_ipc_properties_t ipc{};
    ipc.stype = ZE_STRUCTURE_TYPE_DRIVER_IPC_PROPERTIES;
    if (ze.zeDriverGetIpcProperties(drv->handle, &ipc) == ZE_RESULT_SUCCESS) drv->ipc = ipc.flags;

    ze_context_desc_t cd{};
    cd.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC;
    r = ze.zeContextCreate(drv->handle, &cd, &drv->context);
    if (r != ZE_RESULT_SUCCESS || drv->context == nullptr) {
      note(&why, "[zeContextCreate] %s: driver %zu",
           r != ZE_RESULT_SUCCESS ? result_text(r, buf) : "no context", di);
      continue;
    }
    Driver *driver = drv.get();
    s->drivers.push_back(std::move(drv));

    uint32_t n = 0;
    r = ze.zeDeviceGet(driver->handle, &n, nullptr);
    if (r != ZE_RESULT_SUCCESS || n == 0) {
      note(&why, "[zeDeviceGet] %s: driver %zu",
           r != ZE_RESULT_SUCCESS ? result_text(r, buf) : "no device", di);
      continue;
    }
    std::vector<ze_device_handle_t> devs(n);
    r = ze.zeDeviceGet(driver->handle, &n, devs.data());
    if (r != ZE_RESULT_SUCCESS) {
      note(&why, "[zeDeviceGet] %s: driver %zu", result_text(r, buf), di);
      continue;
    }
    devs.resize(std::min<size_t>(n, devs.size()));
    for (ze_device_handle_t h : devs) {
      auto d = std::make_unique<Device>();
      d->driver = driver;
      d->handle = h;
      d->props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
      r = ze.zeDeviceGetProperties(h, &d->props);
      if (r != ZE_RESULT_SUCCESS) {
        note(&why, "[zeDeviceGetProperties] %s: a device of driver %zu", result_text(r, buf), di);
        continue;
      }
      d->props.name[sizeof d->props.name - 1] = '\0';
      d->name = d->props.name[0] != '\0' ? d->props.name : "(unnamed Level Zero device)";
      d->ordinal = static_cast<int32_t>(s->devices.size());
      if (!open_device(ze, *d, &why)) {
        close_device(ze, *d);
        continue;
      }
      s->devices.push_back(std::move(d));
    }
  }
  if (s->devices.empty())
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "level-zero: no usable Level Zero device: %s",
                why.empty() ? "(no reason given)" : why.c_str());
  find_peers(ze, s);
  return HURRAY_OK;
}

hurray_status probe(void **state, hurray_error *err) {
  if (state == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "level-zero: probe: state must not be NULL");
  *state = nullptr;
  State *s = nullptr;
  try {
    s = new State;
    dlerror();
    s->lib = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
    if (s->lib == nullptr) {
      const char *why = dlerror();
      delete s;
      return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "%s",
                  why != nullptr ? why : "libze_loader.so.1: cannot be loaded");
    }
    if (const char *missing = hurray::level_zero::load_api(s->lib, &s->ze)) {
      dlclose(s->lib);
      delete s;
      return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                  "[dlsym] %s has no %s (a Level Zero 1.0 or later loader is needed)", kLibrary,
                  missing);
    }
    // From here on the loader holds process-wide state: it stays loaded.
    const hurray_status st = open_devices(s, err);
    if (st != HURRAY_OK) {
      close_all(s);
      delete s;
      return st;
    }
    *state = s;
    return HURRAY_OK;
  } catch (const std::bad_alloc &) {
    if (s != nullptr) close_all(s);
    delete s;
    return fail(err, HURRAY_E_OUT_OF_MEMORY, "level-zero: probe: out of memory");
  } catch (...) {
    if (s != nullptr) close_all(s);
    delete s;
    return fail(err, HURRAY_E_INTERNAL, "level-zero: probe: unexpected exception");
  }
}

void release_memory(State *s, Allocation *a) noexcept;

void shutdown(void *state) {
  auto *s = static_cast<State *>(state);
  if (s == nullptr) return;
  for (auto &d : s->devices) {
    std::lock_guard<std::mutex> lock(d->mu);
    drain(s->ze, *d);
  }
  // Allocations still alive are freed with the state (their records too).
  std::vector<Allocation *> left;
  {
    std::lock_guard<std::mutex> lock(s->mu);
    for (auto &[addr, a] : s->live) left.push_back(a);
    left.insert(left.end(), s->empties.begin(), s->empties.end());
    s->live.clear();
    s->empties.clear();
  }
  for (Allocation *a : left) {
    release_memory(s, a);
    delete a;
  }
  close_all(s);
  delete s;
}

int32_t device_count(void *state) {
  const auto *s = static_cast<const State *>(state);
  return s == nullptr ? 0 : static_cast<int32_t>(s->devices.size());
}

hurray_status device_info(void *state, int32_t device, hurray_backend_device_info *out,
                          hurray_error *err) {
  Device *d = nullptr;
  if (const hurray_status st = get_device(static_cast<State *>(state), device, &d, err)) return st;
  if (out == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "level-zero: device_info: out must not be NULL");
  std::memset(out, 0, sizeof *out);
  std::snprintf(out->name, sizeof out->name, "%s", d->name.c_str());
  out->memory_classes = d->memory_classes();
  out->ipc = (d->driver->ipc_memory() ? HURRAY_BACKEND_IPC_MEMORY : 0u) |
             (d->driver->ipc_events() ? HURRAY_BACKEND_IPC_EVENTS : 0u);
  out->min_alignment = HURRAY_MIN_ALIGNMENT;
  std::string peers;
  for (int32_t p : d->peers) peers += (peers.empty() ? "" : ",") + std::to_string(p);
  std::snprintf(out->detail, sizeof out->detail,
                "Level Zero %u.%u driver %u; STANDARD zeMemAllocDevice; "
                "HOST_PINNED zeMemAllocHost; "
                "UNIFIED %s; PEER %s%s; IPC memory %s, events %s; queue group %u",
                ZE_MAJOR_VERSION(d->driver->api), ZE_MINOR_VERSION(d->driver->api),
                d->driver->index, d->unified ? "zeMemAllocShared" : "none",
                d->peers.empty() ? "none" : "zeMemAllocDevice, peers ",
                d->peers.empty() ? "" : peers.c_str(), d->driver->ipc_memory() ? "yes" : "no",
                d->driver->ipc_events() ? "yes" : "no", d->group);
  return HURRAY_OK;
}

// ---- memory ---------------------------------------------------------------

const char *alloc_function(uint8_t mc) noexcept {
  switch (mc) {
    case HURRAY_MEMORY_HOST_PINNED:
      return "zeMemAllocHost";
    case HURRAY_MEMORY_UNIFIED:
      return "zeMemAllocShared";
    default:
      return "zeMemAllocDevice";
  }
}

ze_result_t allocate(const Api &ze, const Device &d, uint8_t mc, uint64_t size, uint64_t alignment,
                     void **out) noexcept {
  *out = nullptr;
  ze_device_mem_alloc_desc_t dd{};
  dd.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC;
  dd.flags = 0;
  dd.ordinal = 0;
  ze_host_mem_alloc_desc_t hd{};
  hd.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC;
  hd.flags = 0;
  const auto n = static_cast<size_t>(size);
  const auto al = static_cast<size_t>(alignment);
  switch (mc) {
    case HURRAY_MEMORY_HOST_PINNED:
      return ze.zeMemAllocHost(d.driver->context, &hd, n, al, out);
    case HURRAY_MEMORY_UNIFIED:
      return ze.zeMemAllocShared(d.driver->context, &dd, &hd, n, al, d.handle, out);
    default:
      return ze.zeMemAllocDevice(d.driver->context, &dd, n, al, d.handle, out);
  }
}

// Allocate `size` bytes of class `mc` whose address is `align`-aligned into
// a->base and a->ptr (see "Alignment" above).
hurray_status alloc_aligned(const Api &ze, const Device &d, uint8_t mc, uint64_t size,
                            uint32_t align, Allocation *a, hurray_error *err) noexcept {
  const char *fn = alloc_function(mc);
  void *p = nullptr;
  ze_result_t r = allocate(ze, d, mc, size, align, &p);
  if (r == ZE_RESULT_SUCCESS && p != nullptr && is_aligned(p, align)) {
    a->base = a->ptr = p;
    return HURRAY_OK;
  }
  if (r != ZE_RESULT_SUCCESS && r != ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT)
    return ze_fail(err, HURRAY_OK, fn, r, "%llu bytes aligned to %u on device %d '%s'",
                   static_cast<unsigned long long>(size), align, static_cast<int>(d.ordinal),
                   d.name.c_str());
  if (r == ZE_RESULT_SUCCESS && p == nullptr)
    return fail(err, HURRAY_E_BACKEND,
                "[%s] ZE_RESULT_SUCCESS but no pointer: %llu bytes on device %d '%s'", fn,
                static_cast<unsigned long long>(size), static_cast<int>(d.ordinal),
                d.name.c_str());
  const uint64_t got = p != nullptr ? alignment_of(p) : 0;
  if (p != nullptr) ze.zeMemFree(d.driver->context, p);

  // Second try: `align` bytes more, and data at the first aligned address.
  if (size > UINT64_MAX - align)
    return fail(err, HURRAY_E_OUT_OF_MEMORY, "level-zero: %llu bytes cannot be allocated",
                static_cast<unsigned long long>(size));
  void *base = nullptr;
  r = allocate(ze, d, mc, size + align, HURRAY_MIN_ALIGNMENT, &base);
  if (r != ZE_RESULT_SUCCESS)
    return ze_fail(err, HURRAY_OK, fn, r,
                   "%llu bytes on device %d '%s' (to place %llu bytes at a %u-byte aligned "
                   "address; the first try gave %s)",
                   static_cast<unsigned long long>(size + align), static_cast<int>(d.ordinal),
                   d.name.c_str(), static_cast<unsigned long long>(size), align,
                   got != 0 ? "a less aligned pointer" : "ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT");
  if (base == nullptr)
    return fail(err, HURRAY_E_BACKEND,
                "[%s] ZE_RESULT_SUCCESS but no pointer: %llu bytes on device %d '%s'", fn,
                static_cast<unsigned long long>(size + align), static_cast<int>(d.ordinal),
                d.name.c_str());
  const uintptr_t b = reinterpret_cast<uintptr_t>(base);
  a->base = base;
  a->ptr = reinterpret_cast<void *>((b + align - 1) & ~(static_cast<uintptr_t>(align) - 1));
  return HURRAY_OK;
}

// Give back what alloc() or ipc_import_memory() made for `a` (not the record).
void release_memory(State *s, Allocation *a) noexcept {
  if (a->base != nullptr) {
    const Device &d = *s->devices[static_cast<size_t>(a->device)];
    if (a->imported) {
      s->ze.zeMemCloseIpcHandle(d.driver->context, a->base);
    } else {
      s->ze.zeMemFree(d.driver->context, a->base);
    }
  }
  if (a->ipc_fd >= 0) close(a->ipc_fd);
  a->ipc_fd = -1;
  a->base = a->ptr = nullptr;
}

void register_allocation(State *s, Allocation *a) {
  std::lock_guard<std::mutex> lock(s->mu);
  if (a->ptr != nullptr) {
    s->live.emplace(reinterpret_cast<uintptr_t>(a->ptr), a);
  } else {
    s->empties.push_back(a);
  }
}

void fill_out(const Allocation &a, uint32_t alignment, hurray_backend_allocation *out) noexcept {
  out->data = a.ptr;
  out->byte_size = a.byte_size;
  out->alignment = alignment;
  out->flags = 0;  // Level Zero pointers are addresses, never opaque handles
  out->device = a.device;
  out->memory_class = a.memory_class;
  out->host = is_device_class(a.memory_class) ? nullptr : a.ptr;
  out->plugin_data = const_cast<Allocation *>(&a);
}

// Can `d` serve class `mc`? HURRAY_OK, or the failure naming the reason.
hurray_status check_class(const Device &d, uint8_t mc, hurray_error *err) noexcept {
  if (mc > HURRAY_MEMORY_PEER)
    return fail(err, HURRAY_E_MEMORY_CLASS,
                "level-zero: memory class %s (0x%02x) is not a Level Zero memory class "
                "(STANDARD, HOST_PINNED, UNIFIED, PEER)",
                class_name(mc), mc);
  if (mc == HURRAY_MEMORY_UNIFIED && !d.unified)
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                "level-zero: memory class UNIFIED (0x02) is not available on device %d '%s': %s",
                static_cast<int>(d.ordinal), d.name.c_str(), d.unified_why.c_str());
  if (mc == HURRAY_MEMORY_PEER && d.peers.empty())
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                "level-zero: memory class PEER (0x03) is not available on device %d '%s': %s",
                static_cast<int>(d.ordinal), d.name.c_str(), d.peer_why.c_str());
  return HURRAY_OK;
}

hurray_status alloc(void *state, int32_t device, uint8_t memory_class, uint64_t byte_size,
                    uint32_t alignment, uint32_t flags, hurray_backend_allocation *out,
                    hurray_error *err) {
  auto *s = static_cast<State *>(state);
  Device *d = nullptr;
  if (const hurray_status st = get_device(s, device, &d, err)) return st;
  if (out == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "level-zero: alloc: out must not be NULL");
  std::memset(out, 0, sizeof *out);
  if (const hurray_status st = check_class(*d, memory_class, err)) return st;
  if ((flags & HURRAY_ALLOC_SHAREABLE) != 0) {
    if (!is_device_class(memory_class))
      return fail(err, HURRAY_E_UNSUPPORTED,
                  "level-zero: HURRAY_ALLOC_SHAREABLE %s memory: Level Zero exports device "
                  "allocations only (STANDARD, PEER)",
                  class_name(memory_class));
    if (!d->driver->ipc_memory())
      return fail(err, HURRAY_E_UNSUPPORTED,
                  "level-zero: HURRAY_ALLOC_SHAREABLE: the driver of device %d '%s' does not "
                  "share memory between processes (zeDriverGetIpcProperties: no "
                  "ZE_IPC_PROPERTY_FLAG_MEMORY)",
                  static_cast<int>(device), d->name.c_str());
  }
  if ((flags & ~static_cast<uint32_t>(HURRAY_ALLOC_SHAREABLE)) != 0)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "level-zero: alloc: unknown flags 0x%x", flags);
  if (alignment == 0) alignment = HURRAY_MIN_ALIGNMENT;
  if (!std::has_single_bit(alignment))
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "level-zero: alloc: alignment %u is not a power of two", alignment);
  const uint32_t align = std::max<uint32_t>(alignment, HURRAY_MIN_ALIGNMENT);
  if (byte_size > SIZE_MAX / 2)
    return fail(err, HURRAY_E_OUT_OF_MEMORY, "level-zero: %llu bytes cannot be allocated",
                static_cast<unsigned long long>(byte_size));

  return guarded(err, "alloc", [&]() -> hurray_status {
    auto a = std::make_unique<Allocation>();
    a->device = device;
    a->memory_class = memory_class;
    a->byte_size = byte_size;
    // An empty buffer has no memory.
    if (byte_size != 0) {
      if (const hurray_status st = alloc_aligned(s->ze, *d, memory_class, byte_size, align,
                                                 a.get(), err))
        return st;
    }
    try {
      register_allocation(s, a.get());
    } catch (...) {
      release_memory(s, a.get());
      throw;
    }
    fill_out(*a, align, out);
    a.release();
    return HURRAY_OK;
  });
}

void free_(void *state, hurray_backend_allocation *allocation) {
  auto *s = static_cast<State *>(state);
  if (s == nullptr || allocation == nullptr) return;
  if (auto *a = static_cast<Allocation *>(allocation->plugin_data)) {
    {
      std::lock_guard<std::mutex> lock(s->mu);
      if (a->ptr != nullptr) {
        s->live.erase(reinterpret_cast<uintptr_t>(a->ptr));
      } else {
        s->empties.erase(std::remove(s->empties.begin(), s->empties.end(), a), s->empties.end());
      }
    }
    release_memory(s, a);
    delete a;
  }
  allocation->plugin_data = nullptr;
  allocation->data = nullptr;
  allocation->host = nullptr;
}

// Checks common to both copy directions; *a is null for an empty range.
hurray_status copy_check(State *s, const hurray_backend_allocation *alloc, uint64_t offset,
                         const void *host, uint64_t n, const char *what, const Allocation **a,
                         Device **d, hurray_error *err) noexcept {
  *a = nullptr;
  if (s == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "level-zero: %s: the plugin state is NULL (probe first)", what);
  if (const hurray_status st = hurray::kit::check_copy(alloc, offset, host, n, what, err)) return st;
  if (n == 0) return HURRAY_OK;
  const auto *rec = static_cast<const Allocation *>(alloc->plugin_data);
  if (rec == nullptr || rec->ptr == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "level-zero: %s: the allocation was not made by this plugin (or was freed)", what);
  if (const hurray_status st = get_device(s, rec->device, d, err)) return st;
  *a = rec;
  return HURRAY_OK;
}

// One synchronous copy on the plugin's list of `d` (see "Copies" above).
hurray_status copy_on_list(const Api &ze, Device &d, void *dst, const void *src, uint64_t n,
                           const char *what, hurray_error *err) noexcept {
  std::lock_guard<std::mutex> lock(d.mu);
  ze_result_t r = ze.zeCommandListAppendBarrier(d.list, nullptr, 0, nullptr);
  if (r != ZE_RESULT_SUCCESS)
    return ze_fail(err, HURRAY_OK, "zeCommandListAppendBarrier", r, "%s on device %d '%s'", what,
                   static_cast<int>(d.ordinal), d.name.c_str());
  r = ze.zeCommandListAppendMemoryCopy(d.list, dst, src, static_cast<size_t>(n), d.copy_event, 0,
                                       nullptr);
  if (r != ZE_RESULT_SUCCESS)
    return ze_fail(err, HURRAY_OK, "zeCommandListAppendMemoryCopy", r,
                   "%s of %llu bytes on device %d '%s'", what, static_cast<unsigned long long>(n),
                   static_cast<int>(d.ordinal), d.name.c_str());
  r = ze.zeEventHostSynchronize(d.copy_event, UINT64_MAX);
  const ze_result_t reset = ze.zeEventHostReset(d.copy_event);
  if (r != ZE_RESULT_SUCCESS)
    return ze_fail(err, HURRAY_OK, "zeEventHostSynchronize", r,
                   "waiting for the %s of %llu bytes on device %d '%s'", what,
                   static_cast<unsigned long long>(n), static_cast<int>(d.ordinal),
                   d.name.c_str());
  if (reset != ZE_RESULT_SUCCESS)
    return ze_fail(err, HURRAY_OK, "zeEventHostReset", reset, "the copy event of device %d '%s'",
                   static_cast<int>(d.ordinal), d.name.c_str());
  return HURRAY_OK;
}

hurray_status copy_to_host(void *state, const hurray_backend_allocation *src, uint64_t offset,
                           void *dst, uint64_t n, hurray_error *err) {
  auto *s = static_cast<State *>(state);
  const Allocation *a = nullptr;
  Device *d = nullptr;
  if (const hurray_status st = copy_check(s, src, offset, dst, n, "copy_to_host", &a, &d, err))
    return st;
  if (a == nullptr) return HURRAY_OK;
  return copy_on_list(s->ze, *d, dst, static_cast<const char *>(a->ptr) + offset, n,
                      "copy to host", err);
}

hurray_status copy_from_host(void *state, hurray_backend_allocation *dst, uint64_t offset,
                             const void *src, uint64_t n, hurray_error *err) {
  auto *s = static_cast<State *>(state);
  const Allocation *a = nullptr;
  Device *d = nullptr;
  if (const hurray_status st = copy_check(s, dst, offset, src, n, "copy_from_host", &a, &d, err))
    return st;
  if (a == nullptr) return HURRAY_OK;
  return copy_on_list(s->ze, *d, static_cast<char *>(a->ptr) + offset, src, n, "copy from host",
                      err);
}

// The plugin's own allocation that holds p (under s->mu), or nullptr.
const Allocation *find_allocation(const State *s, uintptr_t p) noexcept {
  auto it = s->live.upper_bound(p);
  if (it == s->live.begin()) return nullptr;
  --it;
  const Allocation *a = it->second;
  return p - it->first < std::max<uint64_t>(a->byte_size, 1) ? a : nullptr;
}

hurray_status classify(void *state, const void *ptr, int32_t *device, uint8_t *memory_class,
                       hurray_error *err) {
  auto *s = static_cast<State *>(state);
  if (s == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "level-zero: the plugin state is NULL (probe first)");
  if (ptr == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "level-zero: classify: the pointer is NULL");
  return guarded(err, "classify", [&]() -> hurray_status {
    const Api &ze = s->ze;
    // Ours, as far as the plugin knows (the class PEER, the device of host memory).
    int32_t own_device = -1;
    uint8_t own_class = HURRAY_MEMORY_INVALID;
    {
      std::lock_guard<std::mutex> lock(s->mu);
      if (const Allocation *a = find_allocation(s, reinterpret_cast<uintptr_t>(ptr))) {
        own_device = a->device;
        own_class = a->memory_class;
      }
    }
    std::string failures;
    for (auto &drv : s->drivers) {
      if (drv->context == nullptr) continue;
      ze_memory_allocation_properties_t props{};
      props.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES;
      props.type = ZE_MEMORY_TYPE_UNKNOWN;
      ze_device_handle_t owner = nullptr;
      const ze_result_t r = ze.zeMemGetAllocProperties(drv->context, ptr, &props, &owner);
      if (r != ZE_RESULT_SUCCESS) {
        char buf[40];
        note(&failures, "%s on driver %u", result_text(r, buf), drv->index);
        continue;
      }
      uint8_t mc;
      switch (props.type) {
        case ZE_MEMORY_TYPE_DEVICE:
          mc = own_class == HURRAY_MEMORY_PEER ? HURRAY_MEMORY_PEER : HURRAY_MEMORY_STANDARD;
          break;
        case ZE_MEMORY_TYPE_HOST:
          mc = HURRAY_MEMORY_HOST_PINNED;
          break;
        case ZE_MEMORY_TYPE_SHARED:
          mc = HURRAY_MEMORY_UNIFIED;
          break;
        default:
          continue;  // not memory of this context
      }
      int32_t dev = -1;
      for (auto &d : s->devices)
        if (d->driver == drv.get() && owner != nullptr && d->handle == owner) dev = d->ordinal;
      if (dev < 0 && own_device >= 0 &&
          s->devices[static_cast<size_t>(own_device)]->driver == drv.get())
        dev = own_device;
      for (auto &d : s->devices)
        if (dev < 0 && d->driver == drv.get()) dev = d->ordinal;
      if (dev < 0) continue;  // a driver without a usable device
      if (device != nullptr) *device = dev;
      if (memory_class != nullptr) *memory_class = mc;
      return HURRAY_OK;
    }
    if (!failures.empty())
      return fail(err, HURRAY_E_BACKEND, "[zeMemGetAllocProperties] %s: %p", failures.c_str(), ptr);
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "[zeMemGetAllocProperties] ZE_MEMORY_TYPE_UNKNOWN: %p is not memory of a Level "
                "Zero context of this plugin",
                ptr);
  });
}

// ---- events ---------------------------------------------------------------

// An event of d's pools not lent to anyone (under d.mu); adds a pool when
// all are lent.
hurray_status take_event(const Api &ze, Device &d, ze_event_handle_t *out, Slot *slot,
                         hurray_error *err) {
  if (d.free_slots.empty()) {
    ze_event_pool_desc_t pd{};
    pd.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC;
    pd.flags = static_cast<ze_event_pool_flags_t>(ZE_EVENT_POOL_FLAG_HOST_VISIBLE) |
               (d.ipc_pools ? static_cast<ze_event_pool_flags_t>(ZE_EVENT_POOL_FLAG_IPC) : 0u);
    pd.count = kEventsPerPool;
    d.pools.reserve(d.pools.size() + 1);
    d.free_slots.reserve(d.free_slots.size() + kEventsPerPool);
    d.lent.reserve(d.lent.size() + kEventsPerPool);
    // numDevices 0: the events are visible to every device of the context.
    ze_event_pool_handle_t pool = nullptr;
    const ze_result_t r = ze.zeEventPoolCreate(d.driver->context, &pd, 0, nullptr, &pool);
    if (r != ZE_RESULT_SUCCESS || pool == nullptr)
      return ze_fail(err, r != ZE_RESULT_SUCCESS ? HURRAY_OK : HURRAY_E_BACKEND,
                     "zeEventPoolCreate", r, "%u events for device %d '%s'%s", kEventsPerPool,
                     static_cast<int>(d.ordinal), d.name.c_str(),
                     pool == nullptr && r == ZE_RESULT_SUCCESS ? " (no pool returned)" : "");
    Pool p;
    p.handle = pool;
    d.pools.push_back(p);
    for (uint32_t i = kEventsPerPool; i-- > 0;)
      d.free_slots.push_back(Slot{d.pools.size() - 1, i});
  }
  const Slot sl = d.free_slots.back();
  ze_event_handle_t &ev = d.pools[sl.pool].events[sl.index];
  if (ev == nullptr) {
    ze_event_desc_t ed{};
    ed.stype = ZE_STRUCTURE_TYPE_EVENT_DESC;
    ed.index = sl.index;
    ed.signal = ZE_EVENT_SCOPE_FLAG_HOST;
    ed.wait = ZE_EVENT_SCOPE_FLAG_HOST;
    const ze_result_t r = ze.zeEventCreate(d.pools[sl.pool].handle, &ed, &ev);
    if (r != ZE_RESULT_SUCCESS || ev == nullptr) {
      ev = nullptr;
      return ze_fail(err, r != ZE_RESULT_SUCCESS ? HURRAY_OK : HURRAY_E_BACKEND, "zeEventCreate",
                     r, "event %u of a pool of device %d '%s'%s", sl.index,
                     static_cast<int>(d.ordinal), d.name.c_str(),
                     r == ZE_RESULT_SUCCESS ? " (no event returned)" : "");
    }
  }
  d.free_slots.pop_back();
  *out = ev;
  *slot = sl;
  return HURRAY_OK;
}

hurray_status event_record(void *state, int32_t device, void *stream, void **event,
                           uint64_t *value, hurray_error *err) {
  auto *s = static_cast<State *>(state);
  Device *d = nullptr;
  if (const hurray_status st = get_device(s, device, &d, err)) return st;
  if (event == nullptr || value == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "level-zero: event_record: event and value must not be NULL");
  return guarded(err, "event_record", [&]() -> hurray_status {
    const Api &ze = s->ze;
    std::lock_guard<std::mutex> lock(d->mu);
    ze_event_handle_t ev = nullptr;
    Slot slot;
    if (const hurray_status st = take_event(ze, *d, &ev, &slot, err)) return st;
    auto *list = stream != nullptr ? static_cast<ze_command_list_handle_t>(stream) : d->list;
    try {
      d->lent.emplace(ev, slot);
    } catch (...) {
      d->free_slots.push_back(slot);  // capacity reserved when the pool was made
      throw;
    }
    const ze_result_t r = ze.zeCommandListAppendBarrier(list, ev, 0, nullptr);
    if (r != ZE_RESULT_SUCCESS) {
      d->lent.erase(ev);
      d->free_slots.push_back(slot);
      return ze_fail(err, HURRAY_OK, "zeCommandListAppendBarrier", r,
                     "signalling an event on %s command list of device %d '%s'",
                     stream != nullptr && list != d->list ? "the given" : "the plugin's",
                     static_cast<int>(device), d->name.c_str());
    }
    *event = ev;
    *value = 0;
    return HURRAY_OK;
  });
}

hurray_status event_wait(void *state, int32_t device, void *event, uint64_t value, void *stream,
                         hurray_error *err) {
  auto *s = static_cast<State *>(state);
  Device *d = nullptr;
  if (const hurray_status st = get_device(s, device, &d, err)) return st;
  if (event == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "level-zero: event_wait: the event is NULL");
  if (value != 0)
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "level-zero: event_wait: Level Zero events are binary, the value must be 0 (not "
                "%llu)",
                static_cast<unsigned long long>(value));
  const Api &ze = s->ze;
  auto *ev = static_cast<ze_event_handle_t>(event);
  if (stream == nullptr) {
    const ze_result_t r = ze.zeEventHostSynchronize(ev, UINT64_MAX);
    if (r != ZE_RESULT_SUCCESS)
      return ze_fail(err, HURRAY_OK, "zeEventHostSynchronize", r, "device %d '%s'",
                     static_cast<int>(device), d->name.c_str());
    return HURRAY_OK;
  }
  auto *list = static_cast<ze_command_list_handle_t>(stream);
  std::lock_guard<std::mutex> lock(d->mu);
  const ze_result_t r = ze.zeCommandListAppendWaitOnEvents(list, 1, &ev);
  if (r != ZE_RESULT_SUCCESS)
    return ze_fail(err, HURRAY_OK, "zeCommandListAppendWaitOnEvents", r,
                   "%s command list of device %d '%s'",
                   list == d->list ? "the plugin's" : "the given", static_cast<int>(device),
                   d->name.c_str());
  return HURRAY_OK;
}

void event_release(void *state, int32_t device, void *event) {
  auto *s = static_cast<State *>(state);
  if (s == nullptr || event == nullptr || device < 0 ||
      static_cast<size_t>(device) >= s->devices.size())
    return;
  Device &d = *s->devices[static_cast<size_t>(device)];
  const Api &ze = s->ze;
  auto *ev = static_cast<ze_event_handle_t>(event);
  std::lock_guard<std::mutex> lock(d.mu);
  if (auto it = d.lent.find(ev); it != d.lent.end()) {
    ze.zeEventHostReset(ev);
    const Slot slot = it->second;
    d.lent.erase(it);
    d.free_slots.push_back(slot);  // capacity reserved when the pool was made
    return;
  }
  if (auto it = d.imported.find(ev); it != d.imported.end()) {
    ze.zeEventDestroy(ev);
    ze.zeEventPoolCloseIpcHandle(it->second.pool);
    if (it->second.fd >= 0) close(it->second.fd);
    d.imported.erase(it);
  }
}

// ---- IPC ------------------------------------------------------------------

hurray_status ipc_export_memory(void *state, const hurray_backend_allocation *allocation,
                                hurray_backend_ipc_handle *out, hurray_error *err) {
  auto *s = static_cast<State *>(state);
  if (s == nullptr || allocation == nullptr || out == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "level-zero: ipc_export_memory: NULL argument");
  const auto *a = static_cast<const Allocation *>(allocation->plugin_data);
  if (a == nullptr || a->base == nullptr)
    return fail(err, HURRAY_E_UNSUPPORTED,
                "level-zero: ipc_export_memory: an empty allocation has no memory to share");
  Device *d = nullptr;
  if (const hurray_status st = get_device(s, a->device, &d, err)) return st;
  if (!d->driver->ipc_memory())
    return fail(err, HURRAY_E_UNSUPPORTED,
                "level-zero: ipc_export_memory: the driver of device %d '%s' does not share memory "
                "between processes (zeDriverGetIpcProperties: no ZE_IPC_PROPERTY_FLAG_MEMORY)",
                static_cast<int>(a->device), d->name.c_str());
  if (!is_device_class(a->memory_class))
    return fail(err, HURRAY_E_UNSUPPORTED,
                "level-zero: ipc_export_memory: %s memory cannot be exported: Level Zero exports "
                "device allocations only (STANDARD, PEER)",
                class_name(a->memory_class));
  if (a->imported)
    return fail(err, HURRAY_E_UNSUPPORTED,
                "level-zero: ipc_export_memory: memory imported from another process cannot be "
                "exported again");
  ze_ipc_mem_handle_t h{};
  const ze_result_t r = s->ze.zeMemGetIpcHandle(d->driver->context, a->base, &h);
  if (r != ZE_RESULT_SUCCESS)
    return ze_fail(err, HURRAY_OK, "zeMemGetIpcHandle", r, "%llu bytes on device %d '%s'",
                   static_cast<unsigned long long>(a->byte_size), static_cast<int>(a->device),
                   d->name.c_str());
  int fd = -1;
  if (const hurray_status st = export_fd(h.data, &fd, err)) return st;
  std::memset(out, 0, sizeof *out);
  out->kind = kIpcMemoryKind;
  out->fd = fd;
  out->byte_size = a->byte_size;
  out->offset = static_cast<uint64_t>(static_cast<const char *>(a->ptr) -
                                      static_cast<const char *>(a->base));
  static_assert(sizeof h.data == sizeof out->bytes, "a ze_ipc_mem_handle_t fills bytes");
  std::memcpy(out->bytes, h.data, sizeof out->bytes);
  return HURRAY_OK;
}

hurray_status ipc_import_memory(void *state, int32_t device,
                                const hurray_backend_ipc_handle *handle, uint8_t memory_class,
                                hurray_backend_allocation *out, hurray_error *err) {
  auto *s = static_cast<State *>(state);
  Device *d = nullptr;
  if (const hurray_status st = get_device(s, device, &d, err)) return st;
  if (handle == nullptr || out == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "level-zero: ipc_import_memory: NULL argument");
  std::memset(out, 0, sizeof *out);
  if (handle->kind != kIpcMemoryKind)
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "level-zero: ipc_import_memory: not a Level Zero memory handle (kind 0x%x)",
                handle->kind);
  if (const hurray_status st = check_class(*d, memory_class, err)) return st;
  if (!is_device_class(memory_class))
    return fail(err, HURRAY_E_UNSUPPORTED,
                "level-zero: ipc_import_memory: imported memory is device memory: import it as "
                "STANDARD or PEER, not %s",
                class_name(memory_class));
  if (!d->driver->ipc_memory())
    return fail(err, HURRAY_E_UNSUPPORTED,
                "level-zero: ipc_import_memory: the driver of device %d '%s' does not share memory "
                "between processes (zeDriverGetIpcProperties: no ZE_IPC_PROPERTY_FLAG_MEMORY)",
                static_cast<int>(device), d->name.c_str());
  if (handle->byte_size == 0 || handle->offset > UINT64_MAX - handle->byte_size)
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "level-zero: ipc_import_memory: %llu bytes at offset %llu is not a range to map",
                static_cast<unsigned long long>(handle->byte_size),
                static_cast<unsigned long long>(handle->offset));
  return guarded(err, "ipc_import_memory", [&]() -> hurray_status {
    ze_ipc_mem_handle_t h{};
    std::memcpy(h.data, handle->bytes, sizeof h.data);
    int fd = -1;
    if (const hurray_status st = import_fd(handle->fd, h.data, &fd, "ipc_import_memory", err))
      return st;
    void *base = nullptr;
    const ze_result_t r = s->ze.zeMemOpenIpcHandle(d->driver->context, d->handle, h, 0, &base);
    if (r != ZE_RESULT_SUCCESS || base == nullptr) {
      if (fd >= 0) close(fd);
      if (r != ZE_RESULT_SUCCESS)
        return ze_fail(err, HURRAY_OK, "zeMemOpenIpcHandle", r, "on device %d '%s'",
                       static_cast<int>(device), d->name.c_str());
      return fail(err, HURRAY_E_BACKEND,
                  "[zeMemOpenIpcHandle] ZE_RESULT_SUCCESS but no pointer: on device %d '%s'",
                  static_cast<int>(device), d->name.c_str());
    }
    auto a = std::make_unique<Allocation>();
    a->device = device;
    a->memory_class = memory_class;
    a->byte_size = handle->byte_size;
    a->imported = true;
    a->ipc_fd = fd;
    a->base = base;
    a->ptr = static_cast<char *>(base) + handle->offset;
    const uint64_t al = alignment_of(a->ptr);
    if (al < HURRAY_MIN_ALIGNMENT) {
      release_memory(s, a.get());
      return fail(err, HURRAY_E_ALIGNMENT,
                  "level-zero: ipc_import_memory: the mapping starts at %p, aligned to %llu bytes "
                  "only (the protocol needs %d)",
                  a->ptr, static_cast<unsigned long long>(al), HURRAY_MIN_ALIGNMENT);
    }
    try {
      register_allocation(s, a.get());
    } catch (...) {
      release_memory(s, a.get());
      throw;
    }
    fill_out(*a, static_cast<uint32_t>(al), out);
    a.release();
    return HURRAY_OK;
  });
}

hurray_status ipc_export_event(void *state, int32_t device, void *event,
                               hurray_backend_ipc_handle *out, hurray_error *err) {
  auto *s = static_cast<State *>(state);
  Device *d = nullptr;
  if (const hurray_status st = get_device(s, device, &d, err)) return st;
  if (event == nullptr || out == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "level-zero: ipc_export_event: NULL argument");
  if (!d->ipc_pools)
    return fail(err, HURRAY_E_UNSUPPORTED,
                "level-zero: ipc_export_event: the driver of device %d '%s' does not share event "
                "pools between processes (zeDriverGetIpcProperties: no "
                "ZE_IPC_PROPERTY_FLAG_EVENT_POOL)",
                static_cast<int>(device), d->name.c_str());
  ze_event_pool_handle_t pool = nullptr;
  uint32_t index = 0;
  {
    std::lock_guard<std::mutex> lock(d->mu);
    auto it = d->lent.find(static_cast<ze_event_handle_t>(event));
    if (it == d->lent.end())
      return fail(err, HURRAY_E_UNSUPPORTED,
                  "level-zero: ipc_export_event: only events made by event_record on device %d "
                  "'%s' (and not yet released) can be exported",
                  static_cast<int>(device), d->name.c_str());
    pool = d->pools[it->second.pool].handle;
    index = it->second.index;
  }
  ze_ipc_event_pool_handle_t h{};
  const ze_result_t r = s->ze.zeEventPoolGetIpcHandle(pool, &h);
  if (r != ZE_RESULT_SUCCESS)
    return ze_fail(err, HURRAY_OK, "zeEventPoolGetIpcHandle", r, "device %d '%s'",
                   static_cast<int>(device), d->name.c_str());
  int fd = -1;
  if (const hurray_status st = export_fd(h.data, &fd, err)) return st;
  std::memset(out, 0, sizeof *out);
  out->kind = kIpcEventKind;
  out->fd = fd;
  out->byte_size = 0;
  out->offset = index;  // the event's index in the pool
  static_assert(sizeof h.data == sizeof out->bytes, "a ze_ipc_event_pool_handle_t fills bytes");
  std::memcpy(out->bytes, h.data, sizeof out->bytes);
  return HURRAY_OK;
}

hurray_status ipc_import_event(void *state, int32_t device, const hurray_backend_ipc_handle *handle,
                               void **event, hurray_error *err) {
  auto *s = static_cast<State *>(state);
  Device *d = nullptr;
  if (const hurray_status st = get_device(s, device, &d, err)) return st;
  if (handle == nullptr || event == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "level-zero: ipc_import_event: NULL argument");
  if (handle->kind != kIpcEventKind)
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "level-zero: ipc_import_event: not a Level Zero event handle (kind 0x%x)",
                handle->kind);
  if (handle->offset >= UINT32_MAX)
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "level-zero: ipc_import_event: event index %llu is out of range",
                static_cast<unsigned long long>(handle->offset));
  if (!d->driver->ipc_events())
    return fail(err, HURRAY_E_UNSUPPORTED,
                "level-zero: ipc_import_event: the driver of device %d '%s' does not share event "
                "pools between processes (zeDriverGetIpcProperties: no "
                "ZE_IPC_PROPERTY_FLAG_EVENT_POOL)",
                static_cast<int>(device), d->name.c_str());
  return guarded(err, "ipc_import_event", [&]() -> hurray_status {
    const Api &ze = s->ze;
    ze_ipc_event_pool_handle_t h{};
    std::memcpy(h.data, handle->bytes, sizeof h.data);
    int fd = -1;
    if (const hurray_status st = import_fd(handle->fd, h.data, &fd, "ipc_import_event", err))
      return st;
    std::lock_guard<std::mutex> lock(d->mu);
    ze_event_pool_handle_t pool = nullptr;
    ze_result_t r = ze.zeEventPoolOpenIpcHandle(d->driver->context, h, &pool);
    if (r != ZE_RESULT_SUCCESS || pool == nullptr) {
      if (fd >= 0) close(fd);
      return ze_fail(err, r != ZE_RESULT_SUCCESS ? HURRAY_OK : HURRAY_E_BACKEND,
                     "zeEventPoolOpenIpcHandle", r, "device %d '%s'%s", static_cast<int>(device),
                     d->name.c_str(), r == ZE_RESULT_SUCCESS ? " (no pool returned)" : "");
    }
    ze_event_desc_t ed{};
    ed.stype = ZE_STRUCTURE_TYPE_EVENT_DESC;
    ed.index = static_cast<uint32_t>(handle->offset);
    ed.signal = ZE_EVENT_SCOPE_FLAG_HOST;
    ed.wait = ZE_EVENT_SCOPE_FLAG_HOST;
    ze_event_handle_t ev = nullptr;
    r = ze.zeEventCreate(pool, &ed, &ev);
    if (r != ZE_RESULT_SUCCESS || ev == nullptr) {
      ze.zeEventPoolCloseIpcHandle(pool);
      if (fd >= 0) close(fd);
      return ze_fail(err, r != ZE_RESULT_SUCCESS ? HURRAY_OK : HURRAY_E_BACKEND, "zeEventCreate",
                     r, "event %u of an imported pool on device %d '%s'%s", ed.index,
                     static_cast<int>(device), d->name.c_str(),
                     r == ZE_RESULT_SUCCESS ? " (no event returned)" : "");
    }
    try {
      d->imported.emplace(ev, ImportedEvent{pool, fd});
    } catch (...) {
      ze.zeEventDestroy(ev);
      ze.zeEventPoolCloseIpcHandle(pool);
      if (fd >= 0) close(fd);
      throw;
    }
    *event = ev;
    return HURRAY_OK;
  });
}

// ---- native handles -------------------------------------------------------

hurray_status native(void *state, int32_t device, hurray_backend_native *out,
                     hurray_error *err) {
  auto *s = static_cast<State *>(state);
  Device *d = nullptr;
  if (const hurray_status st = get_device(s, device, &d, err)) return st;
  if (out == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "level-zero: native: out must not be NULL");
  std::memset(out, 0, sizeof *out);
  out->handles[0] = d->driver->handle;
  out->handles[1] = d->handle;
  out->handles[2] = d->driver->context;
  out->handles[3] = d->list;
  out->handles[4] = s->lib;
  out->handles[5] = reinterpret_cast<void *>(static_cast<uintptr_t>(d->group));
  return HURRAY_OK;
}

constexpr hurray_backend_v1 make_table() noexcept {
  hurray_backend_v1 t = hurray::kit::make_table(HURRAY_DEVICE_LEVEL_ZERO);
  HURRAY_KIT_ENTRY(t, probe, probe);
  HURRAY_KIT_ENTRY(t, shutdown, shutdown);
  HURRAY_KIT_ENTRY(t, device_count, device_count);
  HURRAY_KIT_ENTRY(t, device_info, device_info);
  HURRAY_KIT_ENTRY(t, alloc, alloc);
  HURRAY_KIT_ENTRY(t, free, free_);
  HURRAY_KIT_ENTRY(t, copy_to_host, copy_to_host);
  HURRAY_KIT_ENTRY(t, copy_from_host, copy_from_host);
  HURRAY_KIT_ENTRY(t, classify, classify);
  HURRAY_KIT_ENTRY(t, event_record, event_record);
  HURRAY_KIT_ENTRY(t, event_wait, event_wait);
  HURRAY_KIT_ENTRY(t, event_release, event_release);
  HURRAY_KIT_ENTRY(t, ipc_export_memory, ipc_export_memory);
  HURRAY_KIT_ENTRY(t, ipc_import_memory, ipc_import_memory);
  HURRAY_KIT_ENTRY(t, ipc_export_event, ipc_export_event);
  HURRAY_KIT_ENTRY(t, ipc_import_event, ipc_import_event);
  HURRAY_KIT_ENTRY(t, native, native);
  return t;
}

constinit const hurray_backend_v1 kTable = make_table();

}  // namespace

extern "C" __attribute__((visibility("default"))) const hurray_backend_v1 *hurray_backend_entry(
    void) {
  return &kTable;
}
