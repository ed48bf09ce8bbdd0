/*
 * libhurray-hip.so - the HIP device plugin (device_tag 0x02 ROCM),
 * hurray_backend_v1. AMD GPUs through the HIP runtime (ROCm).
 *
 * Loading. The plugin links no libamdhip64 (it is built against Debian's
 * libamdhip64-dev headers, HIP 5.2, with -D__HIP_PLATFORM_AMD__, for types
 * and prototypes only). probe() dlopens the file named by
 * $HURRAY_HIP_LIBRARY when that is set and not empty, else the first of
 * "libamdhip64.so", "libamdhip64.so.5", "libamdhip64.so.6" that loads,
 * resolves every function of HURRAY_HIP_FUNCTIONS (internal.h) with dlsym,
 * and calls hipGetDeviceCount. A library that does not load is
 * HURRAY_E_DEVICE_UNAVAILABLE with the dlerror() text of each name tried; a
 * failing hipGetDeviceCount (a machine with the runtime and no AMD GPU says
 * hipErrorNoDevice) is HURRAY_E_DEVICE_UNAVAILABLE with
 * "[hipGetDeviceCount] hipErrorNoDevice: ...", named by hipGetErrorName or,
 * without it, by the plugin's own table. The runtime stays loaded after
 * shutdown().
 *
 * Devices. Every HIP device becomes a device, in ordinal order (one whose
 * stream cannot be created is left out, and named in probe's reason if none
 * is left). HIP has a current device per thread instead of contexts: the
 * plugin makes the device current (hipSetDevice) around every runtime call
 * and restores the caller's current device afterwards. Each device has one
 * stream of the plugin's, created hipStreamNonBlocking: "stream NULL" in
 * event_record, and the stream every device copy runs on.
 *
 * Native handles (hurray_backend_native.handles, filled by native()):
 *   [0] hipDevice_t  the device ordinal, as (void *)(uintptr_t)ordinal (NULL
 *                    for device 0)
 *   [1] NULL         (HIP's contexts are deprecated; the plugin uses none)
 *   [2] hipStream_t  the plugin's stream of the device
 *   [3] hipStream_t  the same stream again: the device's "default stream"
 *                    slot, which callers declare for CONSUMER_STREAM handoffs
 *   [4] void *       the plugin's dlopen() handle of libamdhip64, so a caller
 *                    can dlsym hip* functions without linking it
 *   [5]..[7] NULL
 * The plugin owns them until shutdown(). A stream passed to event_record
 * must be a stream of the same device.
 *
 * Memory classes. data is always an address, never opaque; the guaranteed
 * alignment is max(asked, 256): HIP aligns every block to at least 256
 * bytes (ROCm in fact to pages), and a larger alignment is had as in the
 * CUDA plugin (src/backends/gpu-common: one try, then an over-allocated
 * block and the first aligned address inside).
 *   STANDARD     hipMalloc. data = the device pointer, host = NULL.
 *   HOST_PINNED  hipHostMalloc(hipHostMallocMapped | hipHostMallocPortable),
 *                on devices that can map host memory. data = host = the host
 *                pointer; the device's address is hipHostGetDevicePointer's.
 *   UNIFIED      hipMallocManaged(hipMemAttachGlobal), only where the device
 *                reports hipDeviceAttributeManagedMemory. data = host.
 *   PEER         hipMalloc on the device, after hipDeviceEnablePeerAccess to
 *                it from every other device that hipDeviceCanAccessPeer
 *                allows (once per device, at its first PEER allocation); with
 *                no such device, HURRAY_E_DEVICE_UNAVAILABLE with the reason.
 *   Other classes are HURRAY_E_MEMORY_CLASS.
 * classify() reads hipPointerGetAttributes (memory type, isManaged, device);
 * HIP 6 renumbered hipMemoryType, so the runtime's major version
 * (hipRuntimeGetVersion) selects the reading (internal.h). PEER is told from
 * STANDARD by the plugin's own record, as in the CUDA plugin.
 *
 * Copies: device memory (STANDARD, PEER, imported) with hipMemcpyAsync on
 * the plugin's stream, then hipStreamSynchronize; HOST_PINNED and UNIFIED
 * with hipDeviceSynchronize, then memcpy.
 *
 * Events are hipEvent_t (binary: value 0), created by event_record with
 * hipEventDisableTiming, plus hipEventInterprocess on every device where
 * probe could create such an event and get its IPC handle (the same policy
 * as the CUDA plugin, for the same reason: the ABI records before anyone
 * says whether the event will cross a process). event_wait with stream NULL
 * is hipEventSynchronize, with a stream hipStreamWaitEvent; event_release is
 * hipEventDestroy.
 *
 * IPC (device_info.ipc: MEMORY, plus EVENTS where interprocess events
 * work): STANDARD and PEER allocations export with hipIpcGetMemHandle on
 * the block's base (kind 'HPM1', fd -1, the 64 handle bytes, offset of data
 * in the block); ipc_import_memory opens it with
 * hipIpcOpenMemHandle(hipIpcMemLazyEnablePeerAccess) on the importing
 * device. HURRAY_ALLOC_SHAREABLE is accepted for STANDARD and PEER and is
 * HURRAY_E_UNSUPPORTED for HOST_PINNED and UNIFIED. Events: kind 'HPE1',
 * hipIpcGetEventHandle / hipIpcOpenEventHandle.
 *
 * Threads: HIP calls are thread-safe; the plugin's own mutable state (live
 * allocations, per-device "peer access enabled") is behind mutexes. No C++
 * exception leaves an entry point.
 */
#include <dlfcn.h>
#include <hurray_backend.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "class_name.h"
#include "kit/align.h"
#include "kit/entry.h"
#include "kit/errors.h"
#include "kit/ipc.h"
#include "kit/library.h"
#include "kit/registry.h"
#include "internal.h"

namespace {

using hurray::kit::Allocation;
using hurray::kit::AllocResult;
using hurray::plugin::class_name;
using hurray::kit::fail;
using hurray::hip::Api;

constexpr const char *kLibraryEnv = "HURRAY_HIP_LIBRARY";
constexpr const char *const kSonames[] = {"libamdhip64.so", "libamdhip64.so.5", "libamdhip64.so.6",
                                          nullptr};
constexpr uint32_t kBaseAlignment = 256;
constexpr uint32_t kIpcMemoryKind = hurray::kit::fourcc('H', 'P', 'M', '1');
constexpr uint32_t kIpcEventKind = hurray::kit::fourcc('H', 'P', 'E', '1');
constexpr int kPeerAccessAlreadyEnabled = 704;  // hipErrorPeerAccessAlreadyEnabled

// ---- errors ---------------------------------------------------------------

// "[hipMalloc] hipErrorOutOfMemory: out of memory (details)"; the status
// follows the code unless `status` is given.
__attribute__((format(printf, 6, 7))) hurray_status hip_fail(hurray_error *err, const Api &hip,
                                                             hurray_status status,
                                                             const char *function, hipError_t code,
                                                             const char *fmt, ...) noexcept {
  if (status == HURRAY_OK) status = hurray::hip::status_of(static_cast<int>(code));
  hurray::hip::ErrorText text;
  hurray::hip::error_text(&hip, static_cast<int>(code), &text);
  va_list ap;
  va_start(ap, fmt);
  hurray::kit::vendor_vfail(err, status, function, text.name, text.description, fmt, ap);
  va_end(ap);
  return status;
}

// ---- state ----------------------------------------------------------------

struct Device {
  int ordinal = 0;               // the HIP device ordinal
  hipStream_t stream = nullptr;  // the plugin's, non-blocking
  std::string name;
  uint64_t total_mem = 0;
  bool map_host = false;       // hipDeviceAttributeCanMapHostMemory
  bool managed = false;        // hipDeviceAttributeManagedMemory
  bool ipc_events = false;     // an interprocess event could be made and exported
  std::vector<int32_t> peers;  // devices that can access this device's memory

  std::mutex peer_mu;  // guards peers_enabled
  bool peers_enabled = false;
};

struct State {
  void *lib = nullptr;
  std::string lib_name;
  Api hip;
  int runtime_version = 0;  // HIP_VERSION style: major * 10000000 + minor * 100000 + patch
  std::vector<std::unique_ptr<Device>> devices;  // fixed after probe
  hurray::kit::Registry live;

  int runtime_major() const noexcept { return runtime_version / 10000000; }
};

// Makes a device current on this thread for the life of the object, then
// restores the thread's previous current device.
class OnDevice {
 public:
  OnDevice(const Api &hip, int ordinal) noexcept : hip_(hip) {
    had_previous_ = hip.hipGetDevice(&previous_) == hipSuccess;
    result_ = hip.hipSetDevice(ordinal);
    if (had_previous_ && previous_ == ordinal) had_previous_ = false;  // nothing to restore
  }
  ~OnDevice() {
    if (had_previous_) (void)hip_.hipSetDevice(previous_);
  }
  OnDevice(const OnDevice &) = delete;
  OnDevice &operator=(const OnDevice &) = delete;
  hipError_t result() const noexcept { return result_; }

 private:
  const Api &hip_;
  int previous_ = 0;
  bool had_previous_ = false;
  hipError_t result_ = hipSuccess;
};

// In an entry point: make device d current until the end of the enclosing
// scope, or return the error.
#define HURRAY_HIP_ON_DEVICE_(s, d, err)                                                          \
  OnDevice on_device_((s)->hip, (d)->ordinal);                                                    \
  if (on_device_.result() != hipSuccess)                                                          \
    return hip_fail(err, (s)->hip, HURRAY_OK, "hipSetDevice", on_device_.result(), "device '%s'", \
                    (d)->name.c_str());

hurray_status get_device(const State *s, int32_t device, Device **out, hurray_error *err) noexcept {
  if (const hurray_status st = hurray::kit::check_device(s, device, s != nullptr ? s->devices.size() : 0, err))
    return st;
  *out = s->devices[static_cast<size_t>(device)].get();
  return HURRAY_OK;
}

void *vptr(uintptr_t p) noexcept { return reinterpret_cast<void *>(p); }
uintptr_t uptr(const void *p) noexcept { return reinterpret_cast<uintptr_t>(p); }

bool host_visible(uint8_t mc) noexcept {
  return mc == HURRAY_MEMORY_HOST_PINNED || mc == HURRAY_MEMORY_UNIFIED;
}

// ---- probe ----------------------------------------------------------------

__attribute__((format(printf, 2, 3))) void note(std::string *why, const char *fmt, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (!why->empty()) *why += "; ";
  *why += buf;
}

int attribute(const Api &hip, int ordinal, hipDeviceAttribute_t attr, int fallback) noexcept {
  int v = 0;
  return hip.hipDeviceGetAttribute(&v, attr, ordinal) == hipSuccess ? v : fallback;
}

bool check_ipc_events(const Api &hip) noexcept {
  hipEvent_t ev = nullptr;
  if (hip.hipEventCreateWithFlags(&ev, hipEventDisableTiming | hipEventInterprocess) != hipSuccess)
    return false;
  hipIpcEventHandle_t h;
  const bool ok = hip.hipIpcGetEventHandle(&h, ev) == hipSuccess;
  (void)hip.hipEventDestroy(ev);
  return ok;
}

void close_device(const Api &hip, Device &d) noexcept {
  if (d.stream == nullptr) return;
  OnDevice on(hip, d.ordinal);
  (void)hip.hipStreamSynchronize(d.stream);
  (void)hip.hipStreamDestroy(d.stream);
  d.stream = nullptr;
}

bool open_device(const Api &hip, int ordinal, Device *d, std::string *why) {
  d->ordinal = ordinal;
  OnDevice on(hip, ordinal);
  hurray::hip::ErrorText text;
  if (on.result() != hipSuccess) {
    hurray::hip::error_text(&hip, static_cast<int>(on.result()), &text);
    note(why, "[hipSetDevice] %s: device %d", text.name, ordinal);
    return false;
  }
  char name[128] = "";
  if (hip.hipDeviceGetName(name, sizeof name - 1, ordinal) != hipSuccess || name[0] == '\0')
    std::snprintf(name, sizeof name, "HIP device %d", ordinal);
  d->name = name;
  d->map_host = attribute(hip, ordinal, hipDeviceAttributeCanMapHostMemory, 0) == 1;
  d->managed = attribute(hip, ordinal, hipDeviceAttributeManagedMemory, 0) == 1;
  size_t total = 0;
  if (hip.hipDeviceTotalMem(&total, ordinal) == hipSuccess) d->total_mem = total;
  const hipError_t r = hip.hipStreamCreateWithFlags(&d->stream, hipStreamNonBlocking);
  if (r != hipSuccess) {
    d->stream = nullptr;
    hurray::hip::error_text(&hip, static_cast<int>(r), &text);
    note(why, "[hipStreamCreateWithFlags] %s: device %d '%s'", text.name, ordinal, name);
    return false;
  }
  d->ipc_events = check_ipc_events(hip);
  return true;
}

void close_devices(State *s) noexcept {
  for (auto &d : s->devices) close_device(s->hip, *d);
}

hurray_status open_devices(State *s, hurray_error *err) {
  const Api &hip = s->hip;
  int count = 0;
  const hipError_t r = hip.hipGetDeviceCount(&count);
  if (r != hipSuccess)
    return hip_fail(err, hip, HURRAY_E_DEVICE_UNAVAILABLE, "hipGetDeviceCount", r, "runtime %s",
                    s->lib_name.c_str());
  if (count <= 0)
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                "[hipGetDeviceCount] no HIP device (the runtime %s sees none)",
                s->lib_name.c_str());
  (void)hip.hipRuntimeGetVersion(&s->runtime_version);
  std::string why;
  for (int i = 0; i < count; ++i) {
    auto d = std::make_unique<Device>();
    if (!open_device(hip, i, d.get(), &why)) continue;
    try {
      s->devices.push_back(std::move(d));
    } catch (...) {
      close_device(hip, *d);
      throw;
    }
  }
  if (s->devices.empty())
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "hip: no usable HIP device: %s", why.c_str());
  for (size_t i = 0; i < s->devices.size(); ++i)
    for (size_t j = 0; j < s->devices.size(); ++j) {
      if (i == j) continue;
      int can = 0;
      if (hip.hipDeviceCanAccessPeer(&can, s->devices[j]->ordinal, s->devices[i]->ordinal) ==
              hipSuccess &&
          can == 1)
        s->devices[i]->peers.push_back(static_cast<int32_t>(j));
    }
  return HURRAY_OK;
}

hurray_status probe(void **state, hurray_error *err) {
  if (state == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "hip: probe: state must not be NULL");
  *state = nullptr;
  State *s = nullptr;
  try {
    s = new State;
    std::string why;
    s->lib = hurray::kit::open_library(kLibraryEnv, kSonames, &s->lib_name, &why);
    if (s->lib == nullptr) {
      delete s;
      return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "%s", why.c_str());
    }
    if (const char *missing = hurray::hip::load_api(s->lib, &s->hip)) {
      dlclose(s->lib);
      const std::string lib = s->lib_name;
      delete s;
      return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                  "[dlsym] %s has no %s (HIP 4.2 or later is needed)", lib.c_str(), missing);
    }
    // From here on the runtime may have started threads: it stays loaded.
    const hurray_status st = open_devices(s, err);
    if (st != HURRAY_OK) {
      close_devices(s);
      delete s;
      return st;
    }
    *state = s;
    return HURRAY_OK;
  } catch (const std::bad_alloc &) {
    if (s != nullptr) close_devices(s);
    delete s;
    return fail(err, HURRAY_E_OUT_OF_MEMORY, "hip: probe: out of memory");
  } catch (...) {
    if (s != nullptr) close_devices(s);
    delete s;
    return fail(err, HURRAY_E_INTERNAL, "hip: probe: unexpected exception");
  }
}

void free_allocation(State *s, Allocation *a) noexcept;

void shutdown(void *state) {
  auto *s = static_cast<State *>(state);
  if (s == nullptr) return;
  while (Allocation *a = s->live.take_any()) free_allocation(s, a);
  close_devices(s);
  delete s;
}

int32_t device_count(void *state) {
  const auto *s = static_cast<const State *>(state);
  return s == nullptr ? 0 : static_cast<int32_t>(s->devices.size());
}

hurray_status device_info(void *state, int32_t device, hurray_backend_device_info *out,
                          hurray_error *err) {
  const auto *s = static_cast<const State *>(state);
  Device *d = nullptr;
  if (const hurray_status st = get_device(s, device, &d, err)) return st;
  if (out == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "hip: device_info: out must not be NULL");
  std::memset(out, 0, sizeof *out);
  std::snprintf(out->name, sizeof out->name, "%s", d->name.c_str());
  out->memory_classes = (1u << HURRAY_MEMORY_STANDARD) |
                        (d->map_host ? 1u << HURRAY_MEMORY_HOST_PINNED : 0u) |
                        (d->managed ? 1u << HURRAY_MEMORY_UNIFIED : 0u) |
                        (d->peers.empty() ? 0u : 1u << HURRAY_MEMORY_PEER);
  out->ipc = HURRAY_BACKEND_IPC_MEMORY | (d->ipc_events ? HURRAY_BACKEND_IPC_EVENTS : 0u);
  out->min_alignment = kBaseAlignment;
  std::string peers;
  for (int32_t p : d->peers) peers += (peers.empty() ? "" : ",") + std::to_string(p);
  const int v = s->runtime_version;
  std::snprintf(out->detail, sizeof out->detail,
                "HIP runtime %d.%d, %llu MiB; STANDARD: hipMalloc; HOST_PINNED: %s; UNIFIED: %s; "
                "PEER: %s%s; IPC: memory (STANDARD, PEER)%s",
                v / 10000000, v / 100000 % 100, static_cast<unsigned long long>(d->total_mem >> 20),
                d->map_host ? "hipHostMalloc(Mapped|Portable), data = host pointer" : "none",
                d->managed ? "hipMallocManaged" : "none", peers.empty() ? "none" : "devices ",
                peers.c_str(), d->ipc_events ? ", events" : ", no events");
  return HURRAY_OK;
}

// ---- memory ---------------------------------------------------------------

hurray_status enable_peers(State *s, Device *d, hurray_error *err) noexcept {
  std::lock_guard<std::mutex> lock(d->peer_mu);
  if (d->peers_enabled) return HURRAY_OK;
  const Api &hip = s->hip;
  for (int32_t p : d->peers) {
    const Device &peer = *s->devices[static_cast<size_t>(p)];
    OnDevice on(hip, peer.ordinal);
    hipError_t r = on.result();
    if (r == hipSuccess) {
      r = hip.hipDeviceEnablePeerAccess(d->ordinal, 0);
      if (static_cast<int>(r) == kPeerAccessAlreadyEnabled) r = hipSuccess;
    }
    if (r != hipSuccess)
      return hip_fail(err, hip, HURRAY_OK, "hipDeviceEnablePeerAccess", r,
                      "device %d '%s' to the memory of '%s'", static_cast<int>(p),
                      peer.name.c_str(), d->name.c_str());
  }
  d->peers_enabled = true;
  return HURRAY_OK;
}

void release_memory(const State *s, const Allocation *a) noexcept {
  const Api &hip = s->hip;
  OnDevice on(hip, s->devices[static_cast<size_t>(a->device)]->ordinal);
  if (a->imported)
    (void)hip.hipIpcCloseMemHandle(vptr(a->base));
  else if (a->memory_class == HURRAY_MEMORY_HOST_PINNED)
    (void)hip.hipHostFree(vptr(a->base));
  else
    (void)hip.hipFree(vptr(a->base));
}

hurray_status check_class(const Device &d, int32_t device, uint8_t mc, uint32_t flags,
                          size_t n_devices, hurray_error *err) noexcept {
  if (mc > HURRAY_MEMORY_PEER)
    return fail(err, HURRAY_E_MEMORY_CLASS,
                "hip: memory class %s (0x%02x) is not one HIP serves (STANDARD, HOST_PINNED, "
                "UNIFIED, PEER)",
                class_name(mc), mc);
  const char *why = nullptr;
  if (mc == HURRAY_MEMORY_HOST_PINNED && !d.map_host)
    why = "the device cannot map host memory (hipDeviceAttributeCanMapHostMemory is 0)";
  else if (mc == HURRAY_MEMORY_UNIFIED && !d.managed)
    why = "the device has no managed memory (hipDeviceAttributeManagedMemory is 0)";
  if (why != nullptr)
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                "hip: memory class %s (0x%02x) is not available on device %d '%s': %s",
                class_name(mc), mc, static_cast<int>(device), d.name.c_str(), why);
  if (mc == HURRAY_MEMORY_PEER && d.peers.empty())
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                "hip: memory class PEER (0x03) is not available on device %d '%s': no other HIP "
                "device can access its memory (hipDeviceCanAccessPeer; %zu device(s))",
                static_cast<int>(device), d.name.c_str(), n_devices);
  if ((flags & HURRAY_ALLOC_SHAREABLE) != 0 && host_visible(mc))
    return fail(err, HURRAY_E_UNSUPPORTED,
                "hip: HURRAY_ALLOC_SHAREABLE: HIP IPC (hipIpcGetMemHandle) exports hipMalloc "
                "memory only (STANDARD, PEER), not %s",
                class_name(mc));
  if ((flags & ~HURRAY_ALLOC_SHAREABLE) != 0)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "hip: alloc: unknown flags 0x%x", flags);
  return HURRAY_OK;
}

hurray_status alloc(void *state, int32_t device, uint8_t memory_class, uint64_t byte_size,
                    uint32_t alignment, uint32_t flags, hurray_backend_allocation *out,
                    hurray_error *err) {
  auto *s = static_cast<State *>(state);
  Device *d = nullptr;
  if (const hurray_status st = get_device(s, device, &d, err)) return st;
  if (out == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "hip: alloc: out must not be NULL");
  std::memset(out, 0, sizeof *out);
  if (const hurray_status st = check_class(*d, device, memory_class, flags, s->devices.size(), err))
    return st;
  if (alignment == 0) alignment = HURRAY_MIN_ALIGNMENT;
  if (!hurray::kit::is_pow2(alignment))
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "hip: alloc: alignment %u is not a power of two",
                alignment);
  const uint32_t align = std::max(alignment, kBaseAlignment);

  out->byte_size = byte_size;
  out->alignment = align;
  out->flags = 0;
  out->device = device;
  out->memory_class = memory_class;
  if (byte_size == 0) return HURRAY_OK;
  if (byte_size > SIZE_MAX / 2)
    return fail(err, HURRAY_E_OUT_OF_MEMORY, "hip: %llu bytes cannot be allocated",
                static_cast<unsigned long long>(byte_size));
  if (memory_class == HURRAY_MEMORY_PEER)
    if (const hurray_status st = enable_peers(s, d, err)) return st;

  const Api &hip = s->hip;
  HURRAY_HIP_ON_DEVICE_(s, d, err)
  hipError_t code = hipSuccess;
  const char *function = "hipMalloc";
  auto allocate = [&](uint64_t n, uintptr_t *base) {
    void *p = nullptr;
    switch (memory_class) {
      case HURRAY_MEMORY_HOST_PINNED:
        function = "hipHostMalloc";
        code = hip.hipHostMalloc(&p, static_cast<size_t>(n),
                                 hipHostMallocMapped | hipHostMallocPortable);
        break;
      case HURRAY_MEMORY_UNIFIED:
        function = "hipMallocManaged";
        code = hip.hipMallocManaged(&p, static_cast<size_t>(n), hipMemAttachGlobal);
        break;
      default:
        code = hip.hipMalloc(&p, static_cast<size_t>(n));
        break;
    }
    *base = uptr(p);
    return code == hipSuccess;
  };
  auto give_back = [&](uintptr_t base) {
    if (memory_class == HURRAY_MEMORY_HOST_PINNED)
      (void)hip.hipHostFree(vptr(base));
    else
      (void)hip.hipFree(vptr(base));
  };
  uintptr_t base = 0, data = 0;
  switch (hurray::kit::alloc_aligned(byte_size, align, kBaseAlignment, allocate, give_back, &base,
                                     &data)) {
    case AllocResult::kOk:
      break;
    case AllocResult::kFailed:
      return hip_fail(err, hip, HURRAY_OK, function, code, "%llu bytes of %s on device %d '%s'",
                      static_cast<unsigned long long>(byte_size), class_name(memory_class),
                      static_cast<int>(device), d->name.c_str());
    case AllocResult::kTooLarge:
      return fail(err, HURRAY_E_OUT_OF_MEMORY,
                  "hip: %llu bytes aligned to %u cannot be allocated (the size overflows)",
                  static_cast<unsigned long long>(byte_size), align);
    case AllocResult::kMisaligned:
      return fail(err, HURRAY_E_ALIGNMENT,
                  "hip: %s returned a block not aligned to %u bytes on device %d '%s', so %u "
                  "cannot be had by over-allocating",
                  function, kBaseAlignment, static_cast<int>(device), d->name.c_str(), align);
  }
  uintptr_t device_view = data;
  if (memory_class == HURRAY_MEMORY_HOST_PINNED) {
    void *view = nullptr;
    const hipError_t r = hip.hipHostGetDevicePointer(&view, vptr(base), 0);
    if (r != hipSuccess) {
      give_back(base);
      return hip_fail(err, hip, HURRAY_OK, "hipHostGetDevicePointer", r, "device %d '%s'",
                      static_cast<int>(device), d->name.c_str());
    }
    device_view = uptr(view) + (data - base);
  }
  auto *a = new (std::nothrow) Allocation;
  if (a != nullptr) {
    a->device = device;
    a->memory_class = memory_class;
    a->byte_size = byte_size;
    a->base = base;
    a->data = data;
    a->device_view = device_view;
  }
  if (a == nullptr || !s->live.add(a)) {
    delete a;
    give_back(base);
    return fail(err, HURRAY_E_OUT_OF_MEMORY, "hip: alloc: out of host memory");
  }
  out->data = vptr(data);
  out->host = host_visible(memory_class) ? vptr(data) : nullptr;
  out->plugin_data = a;
  return HURRAY_OK;
}

void free_allocation(State *s, Allocation *a) noexcept {
  s->live.remove(a);
  release_memory(s, a);
  delete a;
}

void free_(void *state, hurray_backend_allocation *allocation) {
  auto *s = static_cast<State *>(state);
  if (s == nullptr || allocation == nullptr) return;
  if (auto *a = static_cast<Allocation *>(allocation->plugin_data)) free_allocation(s, a);
  allocation->plugin_data = nullptr;
  allocation->data = nullptr;
  allocation->host = nullptr;
}

hurray_status copy_check(const State *s, const hurray_backend_allocation *alloc, uint64_t offset,
                         const void *host, uint64_t n, const char *what, const Allocation **a,
                         Device **d, hurray_error *err) noexcept {
  *a = nullptr;
  if (s == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "hip: %s: the plugin state is NULL (probe first)", what);
  if (const hurray_status st = hurray::kit::check_copy(alloc, offset, host, n, what, err)) return st;
  if (n == 0) return HURRAY_OK;
  const auto *rec = static_cast<const Allocation *>(alloc->plugin_data);
  if (const hurray_status st = get_device(s, rec->device, d, err)) return st;
  *a = rec;
  return HURRAY_OK;
}

// Copy n bytes between host memory and the allocation, to_host or not.
hurray_status copy(const State *s, const Allocation *a, Device *d, uint64_t offset, void *host,
                   uint64_t n, bool to_host, hurray_error *err) noexcept {
  const Api &hip = s->hip;
  HURRAY_HIP_ON_DEVICE_(s, d, err)
  char *mem = static_cast<char *>(vptr(a->data)) + offset;
  if (host_visible(a->memory_class) && !a->imported) {
    // Let the device's queued work finish, then touch the memory.
    const hipError_t r = hip.hipDeviceSynchronize();
    if (r != hipSuccess)
      return hip_fail(err, hip, HURRAY_OK, "hipDeviceSynchronize", r, "'%s'", d->name.c_str());
    if (to_host)
      std::memcpy(host, mem, static_cast<size_t>(n));
    else
      std::memcpy(mem, host, static_cast<size_t>(n));
    return HURRAY_OK;
  }
  hipError_t r =
      to_host
          ? hip.hipMemcpyAsync(host, mem, static_cast<size_t>(n), hipMemcpyDeviceToHost, d->stream)
          : hip.hipMemcpyAsync(mem, host, static_cast<size_t>(n), hipMemcpyHostToDevice, d->stream);
  if (r != hipSuccess)
    return hip_fail(err, hip, HURRAY_OK, "hipMemcpyAsync", r, "%llu bytes %s '%s'",
                    static_cast<unsigned long long>(n), to_host ? "from" : "to", d->name.c_str());
  r = hip.hipStreamSynchronize(d->stream);
  if (r != hipSuccess)
    return hip_fail(err, hip, HURRAY_OK, "hipStreamSynchronize", r, "'%s'", d->name.c_str());
  return HURRAY_OK;
}

hurray_status copy_to_host(void *state, const hurray_backend_allocation *src, uint64_t offset,
                           void *dst, uint64_t n, hurray_error *err) {
  const auto *s = static_cast<const State *>(state);
  const Allocation *a = nullptr;
  Device *d = nullptr;
  if (const hurray_status st = copy_check(s, src, offset, dst, n, "copy_to_host", &a, &d, err))
    return st;
  return a == nullptr ? HURRAY_OK : copy(s, a, d, offset, dst, n, true, err);
}

hurray_status copy_from_host(void *state, hurray_backend_allocation *dst, uint64_t offset,
                             const void *src, uint64_t n, hurray_error *err) {
  const auto *s = static_cast<const State *>(state);
  const Allocation *a = nullptr;
  Device *d = nullptr;
  if (const hurray_status st = copy_check(s, dst, offset, src, n, "copy_from_host", &a, &d, err))
    return st;
  return a == nullptr ? HURRAY_OK : copy(s, a, d, offset, const_cast<void *>(src), n, false, err);
}

hurray_status classify(void *state, const void *ptr, int32_t *device, uint8_t *memory_class,
                       hurray_error *err) {
  const auto *s = static_cast<const State *>(state);
  Device *d0 = nullptr;
  if (const hurray_status st = get_device(s, 0, &d0, err)) return st;
  if (ptr == nullptr) return fail(err, HURRAY_E_INVALID_ARGUMENT, "hip: classify: ptr is NULL");
  const Api &hip = s->hip;
  hipPointerAttribute_t attr;
  std::memset(&attr, 0, sizeof attr);
  const hipError_t r = hip.hipPointerGetAttributes(&attr, ptr);
  if (r == hipErrorInvalidValue)
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "hip: %p is not memory HIP knows (hipPointerGetAttributes: hipErrorInvalidValue)",
                ptr);
  if (r != hipSuccess)
    return hip_fail(err, hip, HURRAY_OK, "hipPointerGetAttributes", r, "%p", ptr);
  uint8_t mc = 0;
  if (!hurray::hip::class_of_pointer(s->runtime_major(), static_cast<int>(attr.memoryType),
                                     attr.isManaged, &mc))
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "hip: %p is not memory HIP knows as a linear buffer (memory type %d, HIP %d)", ptr,
                static_cast<int>(attr.memoryType), s->runtime_major());
  Allocation rec;
  const bool ours = s->live.find(uptr(ptr), &rec);
  if (ours && mc == HURRAY_MEMORY_STANDARD && rec.memory_class == HURRAY_MEMORY_PEER)
    mc = HURRAY_MEMORY_PEER;
  int32_t index = -1;
  for (size_t i = 0; i < s->devices.size(); ++i)
    if (s->devices[i]->ordinal == attr.device) index = static_cast<int32_t>(i);
  if (index < 0 && ours) index = rec.device;
  if (index < 0)
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                "hip: %p is %s memory of HIP device %d, which this plugin does not serve", ptr,
                class_name(mc), attr.device);
  if (device != nullptr) *device = index;
  if (memory_class != nullptr) *memory_class = mc;
  return HURRAY_OK;
}

// ---- events ---------------------------------------------------------------

hurray_status event_record(void *state, int32_t device, void *stream, void **event, uint64_t *value,
                           hurray_error *err) {
  const auto *s = static_cast<const State *>(state);
  Device *d = nullptr;
  if (const hurray_status st = get_device(s, device, &d, err)) return st;
  if (event == nullptr || value == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "hip: event_record: event and value must not be NULL");
  const Api &hip = s->hip;
  HURRAY_HIP_ON_DEVICE_(s, d, err)
  const unsigned flags = hipEventDisableTiming | (d->ipc_events ? hipEventInterprocess : 0u);
  hipEvent_t ev = nullptr;
  hipError_t r = hip.hipEventCreateWithFlags(&ev, flags);
  if (r != hipSuccess)
    return hip_fail(err, hip, HURRAY_OK, "hipEventCreateWithFlags", r, "'%s'", d->name.c_str());
  r = hip.hipEventRecord(ev, stream != nullptr ? static_cast<hipStream_t>(stream) : d->stream);
  if (r != hipSuccess) {
    (void)hip.hipEventDestroy(ev);
    return hip_fail(err, hip, HURRAY_OK, "hipEventRecord", r, "%s stream of '%s'",
                    stream != nullptr ? "the given" : "the plugin's", d->name.c_str());
  }
  *event = ev;
  *value = 0;
  return HURRAY_OK;
}

hurray_status event_wait(void *state, int32_t device, void *event, uint64_t value, void *stream,
                         hurray_error *err) {
  const auto *s = static_cast<const State *>(state);
  Device *d = nullptr;
  if (const hurray_status st = get_device(s, device, &d, err)) return st;
  if (event == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "hip: event_wait: the event is NULL");
  if (value != 0)
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "hip: event_wait: HIP events are binary, the value must be 0 (not %llu)",
                static_cast<unsigned long long>(value));
  const Api &hip = s->hip;
  HURRAY_HIP_ON_DEVICE_(s, d, err)
  auto *ev = static_cast<hipEvent_t>(event);
  const hipError_t r = stream == nullptr
                           ? hip.hipEventSynchronize(ev)
                           : hip.hipStreamWaitEvent(static_cast<hipStream_t>(stream), ev, 0);
  if (r != hipSuccess)
    return hip_fail(err, hip, HURRAY_OK,
                    stream == nullptr ? "hipEventSynchronize" : "hipStreamWaitEvent", r, "'%s'",
                    d->name.c_str());
  return HURRAY_OK;
}

void event_release(void *state, int32_t device, void *event) {
  const auto *s = static_cast<const State *>(state);
  if (s == nullptr || event == nullptr || s->devices.empty()) return;
  const size_t i = device >= 0 && static_cast<size_t>(device) < s->devices.size()
                       ? static_cast<size_t>(device)
                       : 0;
  OnDevice on(s->hip, s->devices[i]->ordinal);
  (void)s->hip.hipEventDestroy(static_cast<hipEvent_t>(event));
}

// ---- IPC ------------------------------------------------------------------

hurray_status ipc_export_memory(void *state, const hurray_backend_allocation *allocation,
                                hurray_backend_ipc_handle *out, hurray_error *err) {
  const auto *s = static_cast<const State *>(state);
  if (s == nullptr || allocation == nullptr || out == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "hip: ipc_export_memory: state, allocation and out must not be NULL");
  const auto *a = static_cast<const Allocation *>(allocation->plugin_data);
  if (a == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "hip: ipc_export_memory: an empty allocation (or one not made by this plugin) has "
                "no memory to export");
  if (a->imported)
    return fail(err, HURRAY_E_UNSUPPORTED,
                "hip: ipc_export_memory: memory imported from another process cannot be exported "
                "again (export it from its owner)");
  if (host_visible(a->memory_class))
    return fail(err, HURRAY_E_UNSUPPORTED,
                "hip: ipc_export_memory: HIP IPC (hipIpcGetMemHandle) exports hipMalloc memory "
                "only (STANDARD, PEER), not %s",
                class_name(a->memory_class));
  Device *d = nullptr;
  if (const hurray_status st = get_device(s, a->device, &d, err)) return st;
  const Api &hip = s->hip;
  HURRAY_HIP_ON_DEVICE_(s, d, err)
  hipIpcMemHandle_t h;
  std::memset(&h, 0, sizeof h);
  const hipError_t r = hip.hipIpcGetMemHandle(&h, vptr(a->base));
  if (r != hipSuccess)
    return hip_fail(err, hip, HURRAY_OK, "hipIpcGetMemHandle", r, "%llu bytes on '%s'",
                    static_cast<unsigned long long>(a->byte_size), d->name.c_str());
  static_assert(sizeof h <= sizeof out->bytes, "a HIP IPC handle is 64 bytes");
  hurray::kit::pack_ipc(kIpcMemoryKind, &h, sizeof h, a->byte_size, a->data - a->base, out);
  return HURRAY_OK;
}

hurray_status ipc_import_memory(void *state, int32_t device,
                                const hurray_backend_ipc_handle *handle, uint8_t memory_class,
                                hurray_backend_allocation *out, hurray_error *err) {
  auto *s = static_cast<State *>(state);
  Device *d = nullptr;
  if (const hurray_status st = get_device(s, device, &d, err)) return st;
  if (out == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "hip: ipc_import_memory: out must not be NULL");
  std::memset(out, 0, sizeof *out);
  hipIpcMemHandle_t h;
  const char *why = nullptr;
  if (!hurray::kit::unpack_ipc(handle, kIpcMemoryKind, &h, sizeof h, &why))
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "hip: ipc_import_memory: %s", why);
  if (memory_class != HURRAY_MEMORY_STANDARD && memory_class != HURRAY_MEMORY_PEER)
    return fail(err, HURRAY_E_UNSUPPORTED,
                "hip: ipc_import_memory: HIP IPC memory is device memory: import it as STANDARD "
                "or PEER, not %s",
                class_name(memory_class));
  if (handle->byte_size == 0)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "hip: ipc_import_memory: the handle is of 0 bytes");
  const Api &hip = s->hip;
  HURRAY_HIP_ON_DEVICE_(s, d, err)
  void *base = nullptr;
  hipError_t r = hip.hipIpcOpenMemHandle(&base, h, hipIpcMemLazyEnablePeerAccess);
  if (r != hipSuccess)
    return hip_fail(err, hip, HURRAY_OK, "hipIpcOpenMemHandle", r, "on '%s'", d->name.c_str());
  if (hip.hipMemGetAddressRange != nullptr) {
    hipDeviceptr_t range_base = nullptr;
    size_t range_size = 0;
    r = hip.hipMemGetAddressRange(&range_base, &range_size, base);
    const uint64_t start = static_cast<uint64_t>(uptr(base) - uptr(range_base)) + handle->offset;
    if (r == hipSuccess && (start > range_size || handle->byte_size > range_size - start)) {
      (void)hip.hipIpcCloseMemHandle(base);
      return fail(err, HURRAY_E_INVALID_ARGUMENT,
                  "hip: ipc_import_memory: %llu bytes at offset %llu do not fit in the %zu-byte "
                  "block the handle maps",
                  static_cast<unsigned long long>(handle->byte_size),
                  static_cast<unsigned long long>(handle->offset), range_size);
    }
  }
  auto *a = new (std::nothrow) Allocation;
  if (a != nullptr) {
    a->device = device;
    a->memory_class = memory_class;
    a->imported = true;
    a->byte_size = handle->byte_size;
    a->base = uptr(base);
    a->data = a->base + static_cast<uintptr_t>(handle->offset);
    a->device_view = a->data;
  }
  if (a == nullptr || !s->live.add(a)) {
    delete a;
    (void)hip.hipIpcCloseMemHandle(base);
    return fail(err, HURRAY_E_OUT_OF_MEMORY, "hip: ipc_import_memory: out of host memory");
  }
  out->data = vptr(a->data);
  out->byte_size = a->byte_size;
  out->alignment = hurray::kit::alignment_of(a->data);
  out->flags = 0;
  out->device = device;
  out->memory_class = memory_class;
  out->host = nullptr;
  out->plugin_data = a;
  return HURRAY_OK;
}

hurray_status ipc_export_event(void *state, int32_t device, void *event,
                               hurray_backend_ipc_handle *out, hurray_error *err) {
  const auto *s = static_cast<const State *>(state);
  Device *d = nullptr;
  if (const hurray_status st = get_device(s, device, &d, err)) return st;
  if (event == nullptr || out == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "hip: ipc_export_event: event and out must not be NULL");
  if (!d->ipc_events)
    return fail(err, HURRAY_E_UNSUPPORTED,
                "hip: ipc_export_event: device %d '%s' cannot make interprocess events "
                "(hipEventInterprocess failed in probe)",
                static_cast<int>(device), d->name.c_str());
  const Api &hip = s->hip;
  HURRAY_HIP_ON_DEVICE_(s, d, err)
  hipIpcEventHandle_t h;
  std::memset(&h, 0, sizeof h);
  const hipError_t r = hip.hipIpcGetEventHandle(&h, static_cast<hipEvent_t>(event));
  if (r != hipSuccess)
    return hip_fail(err, hip, HURRAY_OK, "hipIpcGetEventHandle", r, "'%s'", d->name.c_str());
  static_assert(sizeof h <= sizeof out->bytes, "a HIP IPC event handle is 64 bytes");
  hurray::kit::pack_ipc(kIpcEventKind, &h, sizeof h, 0, 0, out);
  return HURRAY_OK;
}

hurray_status ipc_import_event(void *state, int32_t device, const hurray_backend_ipc_handle *handle,
                               void **event, hurray_error *err) {
  const auto *s = static_cast<const State *>(state);
  Device *d = nullptr;
  if (const hurray_status st = get_device(s, device, &d, err)) return st;
  if (event == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "hip: ipc_import_event: event must not be NULL");
  hipIpcEventHandle_t h;
  const char *why = nullptr;
  if (!hurray::kit::unpack_ipc(handle, kIpcEventKind, &h, sizeof h, &why))
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "hip: ipc_import_event: %s", why);
  const Api &hip = s->hip;
  HURRAY_HIP_ON_DEVICE_(s, d, err)
  hipEvent_t ev = nullptr;
  const hipError_t r = hip.hipIpcOpenEventHandle(&ev, h);
  if (r != hipSuccess)
    return hip_fail(err, hip, HURRAY_OK, "hipIpcOpenEventHandle", r, "on '%s'", d->name.c_str());
  *event = ev;
  return HURRAY_OK;
}

// ---- native handles -------------------------------------------------------

hurray_status native(void *state, int32_t device, hurray_backend_native *out,
                     hurray_error *err) {
  const auto *s = static_cast<const State *>(state);
  Device *d = nullptr;
  if (const hurray_status st = get_device(s, device, &d, err)) return st;
  if (out == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "hip: native: out must not be NULL");
  std::memset(out, 0, sizeof *out);
  out->handles[0] = reinterpret_cast<void *>(static_cast<uintptr_t>(d->ordinal));
  out->handles[1] = nullptr;
  out->handles[2] = d->stream;
  out->handles[3] = d->stream;
  out->handles[4] = s->lib;
  return HURRAY_OK;
}

constexpr hurray_backend_v1 make_table() noexcept {
  hurray_backend_v1 t = hurray::kit::make_table(HURRAY_DEVICE_ROCM);
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
