/*
 * libhurray-cuda.so - the CUDA device plugin (device_tag 0x01 CUDA),
 * hurray_backend_v1. Driver API only.
 *
 * Loading. The plugin links no libcuda and no cudart (it is built against
 * cuda.h for types and prototypes only). probe() dlopens "libcuda.so.1", or
 * the file named by $HURRAY_CUDA_LIBRARY when that is set and not empty (the
 * tests point it at the toolkit's stub library, which must fail cleanly with
 * CUDA_ERROR_STUB_LIBRARY), resolves every function of HURRAY_CUDA_FUNCTIONS
 * (internal.h) by its versioned symbol (cuMemAlloc_v2, cuCtxPushCurrent_v2,
 * ...) with dlsym, and calls cuInit(0). A missing library is
 * HURRAY_E_DEVICE_UNAVAILABLE with the dlerror() text; a failing cuInit is
 * HURRAY_E_DEVICE_UNAVAILABLE with "[cuInit] CUDA_ERROR_NO_DEVICE: ...": the
 * name and description come from cuGetErrorName/cuGetErrorString when the
 * driver answers them, else from the plugin's own tables (the stub answers
 * neither). libcuda stays loaded after shutdown(), like any vendor driver.
 *
 * Devices. Every CUDA device with unified addressing becomes a device, in
 * cuDeviceGet order (a device without it is left out, and named in probe's
 * reason if none is left). The plugin retains each device's primary context
 * (cuDevicePrimaryCtxRetain: the one the CUDA runtime and most libraries
 * use) and makes it current (cuCtxPushCurrent / cuCtxPopCurrent) around
 * every driver call, unless it is the thread's current context already, so
 * the caller's current context is never changed. Each
 * device has one stream of the plugin's, created CU_STREAM_NON_BLOCKING:
 * "stream NULL" in event_record, and the stream every device copy runs on.
 *
 * Native handles (hurray_backend_native.handles, filled by native()):
 *   [0] CUdevice    the device, as (void *)(uintptr_t)dev (NULL for device 0)
 *   [1] CUcontext   the device's primary context (retained by the plugin)
 *   [2] CUstream    the plugin's stream of the device
 *   [3] CUstream    the same stream again: the device's "default stream"
 *                   slot, which callers declare for CONSUMER_STREAM handoffs
 *   [4] void *      the plugin's dlopen() handle of libcuda, so a caller can
 *                   dlsym cu* functions without linking it (mind the _v2
 *                   symbols)
 *   [5]..[7] NULL
 * The plugin owns all of them until shutdown(). A stream passed to
 * event_record must belong to the primary context in [1] (CUDA records an
 * event only on a stream of the event's context); event_wait accepts any
 * stream.
 *
 * Memory classes (device_info().detail says the same, shortly). data is
 * always an address, never opaque; the guaranteed alignment is
 * max(asked, 256): CUDA aligns every block to at least 256 bytes, and a
 * larger alignment is had by trying one block, and, when that one is not
 * aligned enough, over-allocating by (alignment - 256) and handing out the
 * first aligned address inside (the record keeps the base to free).
 *   STANDARD     cuMemAlloc. data = the CUdeviceptr, host = NULL.
 *   HOST_PINNED  cuMemHostAlloc(CU_MEMHOSTALLOC_PORTABLE | DEVICEMAP), only
 *                on devices that can map host memory. data = host = the host
 *                pointer. The device's address of the same bytes comes from
 *                cuMemHostGetDevicePointer (under unified addressing, which
 *                the plugin requires, it is the same number).
 *   UNIFIED      cuMemAllocManaged(CU_MEM_ATTACH_GLOBAL), only where the
 *                device reports CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY.
 *                data = host = the managed pointer.
 *   PEER         cuMemAlloc on the device, after peer access to it has been
 *                enabled (cuCtxEnablePeerAccess, from each peer's primary
 *                context; once per device, at its first PEER allocation) for
 *                every other device that cuDeviceCanAccessPeer allows. With
 *                no such device, PEER is HURRAY_E_DEVICE_UNAVAILABLE with the
 *                reason. data = the CUdeviceptr.
 *   Other classes are HURRAY_E_MEMORY_CLASS (libhurray never passes them).
 * classify() asks cuPointerGetAttributes (MEMORY_TYPE, IS_MANAGED,
 * DEVICE_ORDINAL): managed -> UNIFIED, host -> HOST_PINNED, device ->
 * STANDARD, or PEER when the pointer lies in a PEER allocation of this
 * plugin (CUDA itself cannot tell the two apart). Memory CUDA does not know
 * is HURRAY_E_INVALID_ARGUMENT.
 *
 * Copies. STANDARD, PEER and imported memory: cuMemcpyHtoDAsync /
 * cuMemcpyDtoHAsync on the plugin's stream, then cuStreamSynchronize, so a
 * copy follows the work queued on that stream (the legacy synchronous
 * cuMemcpyHtoD would run on the NULL stream, which does not wait for a
 * non-blocking stream). HOST_PINNED and UNIFIED: cuCtxSynchronize (every
 * stream of the primary context), then memcpy.
 *
 * Events are CUevents (binary: value 0). event_record creates one with
 * CU_EVENT_DISABLE_TIMING, plus CU_EVENT_INTERPROCESS on every device where
 * interprocess events work (checked once in probe by creating one and
 * getting its IPC handle), and records it on the stream (NULL: the plugin's
 * stream). Policy: every event is created interprocess-capable where the
 * device allows it, because the plugin ABI records the event before anyone
 * says whether it will cross a process, and ipc_export_event needs such an
 * event; an interprocess event costs no more to record or wait on, only
 * timing is lost, which the plugin never uses. event_wait with stream NULL
 * is cuEventSynchronize (the host waits); with a stream, cuStreamWaitEvent.
 * event_release is cuEventDestroy (also for imported events).
 *
 * IPC (device_info.ipc: MEMORY, plus EVENTS where interprocess events
 * work). Memory: STANDARD and PEER allocations (cuMemAlloc memory; with or
 * without HURRAY_ALLOC_SHAREABLE, which is accepted for these classes and
 * HURRAY_E_UNSUPPORTED for HOST_PINNED and UNIFIED) are exported with
 * cuIpcGetMemHandle on the block's base: handle kind 'CUM1', fd -1, the 64
 * handle bytes, byte_size, and offset = data - base (non-zero when the data
 * was aligned inside a larger block). ipc_import_memory opens it with
 * cuIpcOpenMemHandle(CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) in the importing
 * device's primary context, checks offset + byte_size against the mapped
 * range, and hands out base + offset as STANDARD or PEER memory; free()
 * closes it (cuIpcCloseMemHandle). CUDA refuses to open a handle in the
 * process that exported it. Events: kind 'CUE1', cuIpcGetEventHandle /
 * cuIpcOpenEventHandle.
 *
 * Threads: every driver call the plugin makes is thread-safe; the plugin's
 * own mutable state (the live allocations, the per-device "peer access
 * enabled" flag) is behind mutexes. No C++ exception leaves an entry point.
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

using hurray::cuda::Api;
using hurray::kit::Allocation;
using hurray::kit::AllocResult;
using hurray::plugin::class_name;
using hurray::kit::fail;

constexpr const char *kLibraryEnv = "HURRAY_CUDA_LIBRARY";
constexpr const char *const kSonames[] = {"libcuda.so.1", nullptr};
constexpr uint32_t kBaseAlignment = 256;  // what every CUDA allocation has
constexpr uint32_t kIpcMemoryKind = hurray::kit::fourcc('C', 'U', 'M', '1');
constexpr uint32_t kIpcEventKind = hurray::kit::fourcc('C', 'U', 'E', '1');
// CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED (CUDA 12.0); older drivers do not
// know the attribute, and support IPC events on Linux.
constexpr int kAttrIpcEventSupported = 125;

// ---- errors ---------------------------------------------------------------

// "[cuMemAlloc] CUDA_ERROR_OUT_OF_MEMORY: out of memory (details)"; the
// status follows the code unless `status` is given.
__attribute__((format(printf, 6, 7))) hurray_status cu_fail(hurray_error *err, const Api &cu,
                                                            hurray_status status,
                                                            const char *function, CUresult code,
                                                            const char *fmt, ...) noexcept {
  if (status == HURRAY_OK) status = hurray::cuda::status_of(static_cast<int>(code));
  hurray::cuda::ErrorText text;
  hurray::cuda::error_text(&cu, static_cast<int>(code), &text);
  va_list ap;
  va_start(ap, fmt);
  hurray::kit::vendor_vfail(err, status, function, text.name, text.description, fmt, ap);
  va_end(ap);
  return status;
}

// ---- state ----------------------------------------------------------------

struct Device {
  CUdevice dev = 0;
  CUcontext ctx = nullptr;    // the primary context, retained
  CUstream stream = nullptr;  // the plugin's, non-blocking
  std::string name;
  uint64_t total_mem = 0;
  bool map_host = false;       // CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY
  bool managed = false;        // CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY
  bool ipc_events = false;     // an interprocess event could be made and exported
  std::vector<int32_t> peers;  // devices that can access this device's memory

  std::mutex peer_mu;          // guards peers_enabled
  bool peers_enabled = false;  // cuCtxEnablePeerAccess done from every peer
};

struct State {
  void *lib = nullptr;
  std::string lib_name;
  Api cu;
  int driver_version = 0;
  std::vector<std::unique_ptr<Device>> devices;  // fixed after probe
  hurray::kit::Registry live;                    // every allocation not yet freed
};

// Makes a primary context current on this thread for the life of the object.
// Where it is current already (a CUDA program's thread usually has it: the
// runtime API makes the primary context current), nothing is pushed or
// popped: on an H200 the three pushes and pops of an event record + wait
// cost about 0.15 us of its 6 us (tests/gpu/cuda-bench.sh). Either way the
// caller's context stack is as it was when the object goes.
class Current {
 public:
  Current(const Api &cu, CUcontext ctx) noexcept : cu_(cu) {
    CUcontext now = nullptr;
    if (cu.cuCtxGetCurrent != nullptr && cu.cuCtxGetCurrent(&now) == CUDA_SUCCESS && now == ctx)
      return;
    result_ = cu.cuCtxPushCurrent(ctx);
    pushed_ = result_ == CUDA_SUCCESS;
  }
  ~Current() {
    if (pushed_) {
      CUcontext popped = nullptr;
      cu_.cuCtxPopCurrent(&popped);
    }
  }
  Current(const Current &) = delete;
  Current &operator=(const Current &) = delete;
  CUresult result() const noexcept { return result_; }

 private:
  const Api &cu_;
  CUresult result_ = CUDA_SUCCESS;
  bool pushed_ = false;
};

// In an entry point: make device d's primary context current until the end
// of the enclosing scope, or return the error.
#define HURRAY_CUDA_PUSH_(s, d, err)                                               \
  Current current_((s)->cu, (d)->ctx);                                             \
  if (current_.result() != CUDA_SUCCESS)                                           \
    return cu_fail(err, (s)->cu, HURRAY_OK, "cuCtxPushCurrent", current_.result(), \
                   "the primary context of device '%s'", (d)->name.c_str());

hurray_status get_device(const State *s, int32_t device, Device **out, hurray_error *err) noexcept {
  if (const hurray_status st = hurray::kit::check_device(s, device, s != nullptr ? s->devices.size() : 0, err))
    return st;
  *out = s->devices[static_cast<size_t>(device)].get();
  return HURRAY_OK;
}

CUdeviceptr dptr(uintptr_t p) noexcept { return static_cast<CUdeviceptr>(p); }
void *vptr(uintptr_t p) noexcept { return reinterpret_cast<void *>(p); }

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

const char *cu_name(const Api &cu, CUresult code, hurray::cuda::ErrorText *text) noexcept {
  hurray::cuda::error_text(&cu, static_cast<int>(code), text);
  return text->name;
}

int attribute(const Api &cu, CUdevice dev, int attr, int fallback) noexcept {
  int v = 0;
  return cu.cuDeviceGetAttribute(&v, static_cast<CUdevice_attribute>(attr), dev) == CUDA_SUCCESS
             ? v
             : fallback;
}

// Can this device make an interprocess event and export it? (Not under
// every MPS or virtualised setup.)
bool check_ipc_events(const Api &cu, const Device &d) noexcept {
  if (attribute(cu, d.dev, kAttrIpcEventSupported, 1) == 0) return false;
  CUevent ev = nullptr;
  if (cu.cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS) != CUDA_SUCCESS)
    return false;
  CUipcEventHandle h;
  const bool ok = cu.cuIpcGetEventHandle(&h, ev) == CUDA_SUCCESS;
  cu.cuEventDestroy(ev);
  return ok;
}

void close_device(const Api &cu, Device &d) noexcept {
  if (d.ctx == nullptr) return;
  if (d.stream != nullptr) {
    Current cur(cu, d.ctx);
    if (cur.result() == CUDA_SUCCESS) {
      cu.cuStreamSynchronize(d.stream);
      cu.cuStreamDestroy(d.stream);
    }
  }
  cu.cuDevicePrimaryCtxRelease(d.dev);
  d.stream = nullptr;
  d.ctx = nullptr;
}

// Open device `ordinal` into *d; false (with the reason noted) to leave it out.
bool open_device(const Api &cu, int ordinal, Device *d, std::string *why) {
  hurray::cuda::ErrorText text;
  CUresult r = cu.cuDeviceGet(&d->dev, ordinal);
  if (r != CUDA_SUCCESS) {
    note(why, "[cuDeviceGet] %s: device %d", cu_name(cu, r, &text), ordinal);
    return false;
  }
  char name[128] = "";
  if (cu.cuDeviceGetName(name, sizeof name - 1, d->dev) != CUDA_SUCCESS || name[0] == '\0')
    std::snprintf(name, sizeof name, "CUDA device %d", ordinal);
  d->name = name;
  if (attribute(cu, d->dev, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 0) != 1) {
    note(why, "device %d '%s': no unified addressing (the plugin hands out addresses)", ordinal,
         name);
    return false;
  }
  d->map_host = attribute(cu, d->dev, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, 0) == 1;
  d->managed = attribute(cu, d->dev, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 0) == 1;
  size_t total = 0;
  if (cu.cuDeviceTotalMem(&total, d->dev) == CUDA_SUCCESS) d->total_mem = total;

  r = cu.cuDevicePrimaryCtxRetain(&d->ctx, d->dev);
  if (r != CUDA_SUCCESS) {
    d->ctx = nullptr;
    note(why, "[cuDevicePrimaryCtxRetain] %s: device %d '%s'", cu_name(cu, r, &text), ordinal,
         name);
    return false;
  }
  {
    Current cur(cu, d->ctx);
    r = cur.result();
    if (r == CUDA_SUCCESS) {
      r = cu.cuStreamCreate(&d->stream, CU_STREAM_NON_BLOCKING);
      if (r != CUDA_SUCCESS)
        d->stream = nullptr;
      else
        d->ipc_events = check_ipc_events(cu, *d);
    }
  }
  if (r != CUDA_SUCCESS) {
    note(why, "[cuStreamCreate] %s: device %d '%s'", cu_name(cu, r, &text), ordinal, name);
    close_device(cu, *d);
    return false;
  }
  return true;
}

void close_devices(State *s) noexcept {
  for (auto &d : s->devices) close_device(s->cu, *d);
}

hurray_status open_devices(State *s, hurray_error *err) {
  const Api &cu = s->cu;
  int count = 0;
  const CUresult r = cu.cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS)
    return cu_fail(err, cu, HURRAY_E_DEVICE_UNAVAILABLE, "cuDeviceGetCount", r, nullptr);
  if (count <= 0)
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                "[cuDeviceGetCount] no CUDA device (the driver %s sees none)", s->lib_name.c_str());
  std::string why;
  for (int i = 0; i < count; ++i) {
    auto d = std::make_unique<Device>();
    if (!open_device(cu, i, d.get(), &why)) continue;
    try {
      s->devices.push_back(std::move(d));
    } catch (...) {
      close_device(cu, *d);
      throw;
    }
  }
  if (s->devices.empty())
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "cuda: no usable CUDA device: %s", why.c_str());
  // Which devices can access each device's memory (PEER).
  for (size_t i = 0; i < s->devices.size(); ++i)
    for (size_t j = 0; j < s->devices.size(); ++j) {
      if (i == j) continue;
      int can = 0;
      if (cu.cuDeviceCanAccessPeer(&can, s->devices[j]->dev, s->devices[i]->dev) == CUDA_SUCCESS &&
          can == 1)
        s->devices[i]->peers.push_back(static_cast<int32_t>(j));
    }
  return HURRAY_OK;
}

hurray_status probe(void **state, hurray_error *err) {
  if (state == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "cuda: probe: state must not be NULL");
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
    if (const char *missing = hurray::cuda::load_api(s->lib, &s->cu)) {
      dlclose(s->lib);
      const std::string lib = s->lib_name;
      delete s;
      return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                  "[dlsym] %s has no %s (a driver for CUDA 11.0 or later is needed)", lib.c_str(),
                  missing);
    }
    // From here on the driver may have started threads: it stays loaded.
    const CUresult r = s->cu.cuInit(0);
    if (r != CUDA_SUCCESS) {
      const hurray_status st = cu_fail(err, s->cu, HURRAY_E_DEVICE_UNAVAILABLE, "cuInit", r,
                                       "driver library %s", s->lib_name.c_str());
      delete s;
      return st;
    }
    s->cu.cuDriverGetVersion(&s->driver_version);
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
    return fail(err, HURRAY_E_OUT_OF_MEMORY, "cuda: probe: out of memory");
  } catch (...) {
    if (s != nullptr) close_devices(s);
    delete s;
    return fail(err, HURRAY_E_INTERNAL, "cuda: probe: unexpected exception");
  }
}

void free_allocation(State *s, Allocation *a) noexcept;

void shutdown(void *state) {
  auto *s = static_cast<State *>(state);
  if (s == nullptr) return;
  // Allocations still alive are freed with the state (their records too).
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
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "cuda: device_info: out must not be NULL");
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
  std::snprintf(out->detail, sizeof out->detail,
                "CUDA driver %d.%d, %llu MiB; STANDARD: cuMemAlloc; HOST_PINNED: %s; UNIFIED: "
                "%s; PEER: %s%s; IPC: memory (STANDARD, PEER)%s",
                s->driver_version / 1000, s->driver_version % 1000 / 10,
                static_cast<unsigned long long>(d->total_mem >> 20),
                d->map_host ? "cuMemHostAlloc(PORTABLE|DEVICEMAP), data = host pointer" : "none",
                d->managed ? "cuMemAllocManaged" : "none", peers.empty() ? "none" : "devices ",
                peers.c_str(), d->ipc_events ? ", events" : ", no events");
  return HURRAY_OK;
}

// ---- memory ---------------------------------------------------------------

// Enable access to device d's memory from every peer, once.
hurray_status enable_peers(State *s, Device *d, hurray_error *err) noexcept {
  std::lock_guard<std::mutex> lock(d->peer_mu);
  if (d->peers_enabled) return HURRAY_OK;
  const Api &cu = s->cu;
  for (int32_t p : d->peers) {
    const Device &peer = *s->devices[static_cast<size_t>(p)];
    Current cur(cu, peer.ctx);
    CUresult r = cur.result();
    if (r == CUDA_SUCCESS) {
      r = cu.cuCtxEnablePeerAccess(d->ctx, 0);
      if (r == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) r = CUDA_SUCCESS;
    }
    if (r != CUDA_SUCCESS)
      return cu_fail(err, cu, HURRAY_OK, "cuCtxEnablePeerAccess", r,
                     "device %d '%s' to the memory of '%s'", static_cast<int>(p), peer.name.c_str(),
                     d->name.c_str());
  }
  d->peers_enabled = true;
  return HURRAY_OK;
}

// Give back what alloc() or ipc_import_memory() made for `a` (not the record).
void release_memory(const State *s, const Allocation *a) noexcept {
  const Api &cu = s->cu;
  const Device &d = *s->devices[static_cast<size_t>(a->device)];
  Current cur(cu, d.ctx);
  if (a->imported) {
    cu.cuIpcCloseMemHandle(dptr(a->base));
  } else if (a->memory_class == HURRAY_MEMORY_HOST_PINNED) {
    cu.cuMemFreeHost(vptr(a->base));
  } else {
    cu.cuMemFree(dptr(a->base));
  }
}

hurray_status check_class(const Device &d, int32_t device, uint8_t mc, uint32_t flags,
                          size_t n_devices, hurray_error *err) noexcept {
  if (mc > HURRAY_MEMORY_PEER)
    return fail(err, HURRAY_E_MEMORY_CLASS,
                "cuda: memory class %s (0x%02x) is not one CUDA serves (STANDARD, HOST_PINNED, "
                "UNIFIED, PEER)",
                class_name(mc), mc);
  const char *why = nullptr;
  if (mc == HURRAY_MEMORY_HOST_PINNED && !d.map_host)
    why = "the device cannot map host memory (CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY is 0)";
  else if (mc == HURRAY_MEMORY_UNIFIED && !d.managed)
    why = "the device has no managed memory (CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY is 0)";
  if (why != nullptr)
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                "cuda: memory class %s (0x%02x) is not available on device %d '%s': %s",
                class_name(mc), mc, static_cast<int>(device), d.name.c_str(), why);
  if (mc == HURRAY_MEMORY_PEER && d.peers.empty())
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                "cuda: memory class PEER (0x03) is not available on device %d '%s': no other "
                "CUDA device can access its memory (cuDeviceCanAccessPeer; %zu device(s))",
                static_cast<int>(device), d.name.c_str(), n_devices);
  if ((flags & HURRAY_ALLOC_SHAREABLE) != 0 && host_visible(mc))
    return fail(err, HURRAY_E_UNSUPPORTED,
                "cuda: HURRAY_ALLOC_SHAREABLE: CUDA IPC (cuIpcGetMemHandle) exports cuMemAlloc "
                "memory only (STANDARD, PEER), not %s",
                class_name(mc));
  if ((flags & ~HURRAY_ALLOC_SHAREABLE) != 0)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "cuda: alloc: unknown flags 0x%x", flags);
  return HURRAY_OK;
}

hurray_status alloc(void *state, int32_t device, uint8_t memory_class, uint64_t byte_size,
                    uint32_t alignment, uint32_t flags, hurray_backend_allocation *out,
                    hurray_error *err) {
  auto *s = static_cast<State *>(state);
  Device *d = nullptr;
  if (const hurray_status st = get_device(s, device, &d, err)) return st;
  if (out == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "cuda: alloc: out must not be NULL");
  std::memset(out, 0, sizeof *out);
  if (const hurray_status st = check_class(*d, device, memory_class, flags, s->devices.size(), err))
    return st;
  if (alignment == 0) alignment = HURRAY_MIN_ALIGNMENT;
  if (!hurray::kit::is_pow2(alignment))
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "cuda: alloc: alignment %u is not a power of two",
                alignment);
  const uint32_t align = std::max(alignment, kBaseAlignment);

  out->byte_size = byte_size;
  out->alignment = align;
  out->flags = 0;  // always an address
  out->device = device;
  out->memory_class = memory_class;
  if (byte_size == 0) return HURRAY_OK;  // an empty buffer has no memory
  if (byte_size > SIZE_MAX / 2)
    return fail(err, HURRAY_E_OUT_OF_MEMORY, "cuda: %llu bytes cannot be allocated",
                static_cast<unsigned long long>(byte_size));
  if (memory_class == HURRAY_MEMORY_PEER)
    if (const hurray_status st = enable_peers(s, d, err)) return st;

  const Api &cu = s->cu;
  HURRAY_CUDA_PUSH_(s, d, err)
  CUresult code = CUDA_SUCCESS;
  const char *function = "cuMemAlloc";
  auto allocate = [&](uint64_t n, uintptr_t *base) {
    switch (memory_class) {
      case HURRAY_MEMORY_HOST_PINNED: {
        function = "cuMemHostAlloc";
        void *p = nullptr;
        code = cu.cuMemHostAlloc(&p, static_cast<size_t>(n),
                                 CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
        *base = reinterpret_cast<uintptr_t>(p);
        break;
      }
      case HURRAY_MEMORY_UNIFIED: {
        function = "cuMemAllocManaged";
        CUdeviceptr p = 0;
        code = cu.cuMemAllocManaged(&p, static_cast<size_t>(n), CU_MEM_ATTACH_GLOBAL);
        *base = static_cast<uintptr_t>(p);
        break;
      }
      default: {
        CUdeviceptr p = 0;
        code = cu.cuMemAlloc(&p, static_cast<size_t>(n));
        *base = static_cast<uintptr_t>(p);
        break;
      }
    }
    return code == CUDA_SUCCESS;
  };
  auto give_back = [&](uintptr_t base) {
    if (memory_class == HURRAY_MEMORY_HOST_PINNED)
      cu.cuMemFreeHost(vptr(base));
    else
      cu.cuMemFree(dptr(base));
  };
  uintptr_t base = 0, data = 0;
  switch (hurray::kit::alloc_aligned(byte_size, align, kBaseAlignment, allocate, give_back, &base,
                                     &data)) {
    case AllocResult::kOk:
      break;
    case AllocResult::kFailed:
      return cu_fail(err, cu, HURRAY_OK, function, code, "%llu bytes of %s on device %d '%s'",
                     static_cast<unsigned long long>(byte_size), class_name(memory_class),
                     static_cast<int>(device), d->name.c_str());
    case AllocResult::kTooLarge:
      return fail(err, HURRAY_E_OUT_OF_MEMORY,
                  "cuda: %llu bytes aligned to %u cannot be allocated (the size overflows)",
                  static_cast<unsigned long long>(byte_size), align);
    case AllocResult::kMisaligned:
      return fail(err, HURRAY_E_ALIGNMENT,
                  "cuda: %s returned a block not aligned to %u bytes on device %d '%s', so %u "
                  "cannot be had by over-allocating",
                  function, kBaseAlignment, static_cast<int>(device), d->name.c_str(), align);
  }

  uintptr_t device_view = data;
  if (memory_class == HURRAY_MEMORY_HOST_PINNED) {
    CUdeviceptr view = 0;
    const CUresult r = cu.cuMemHostGetDevicePointer(&view, vptr(base), 0);
    if (r != CUDA_SUCCESS) {
      give_back(base);
      return cu_fail(err, cu, HURRAY_OK, "cuMemHostGetDevicePointer", r, "device %d '%s'",
                     static_cast<int>(device), d->name.c_str());
    }
    device_view = static_cast<uintptr_t>(view) + (data - base);
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
    return fail(err, HURRAY_E_OUT_OF_MEMORY, "cuda: alloc: out of host memory");
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

// Checks common to both copy directions; *a is null for an empty range.
hurray_status copy_check(const State *s, const hurray_backend_allocation *alloc, uint64_t offset,
                         const void *host, uint64_t n, const char *what, const Allocation **a,
                         Device **d, hurray_error *err) noexcept {
  *a = nullptr;
  if (s == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "cuda: %s: the plugin state is NULL (probe first)", what);
  if (const hurray_status st = hurray::kit::check_copy(alloc, offset, host, n, what, err)) return st;
  if (n == 0) return HURRAY_OK;
  const auto *rec = static_cast<const Allocation *>(alloc->plugin_data);
  if (const hurray_status st = get_device(s, rec->device, d, err)) return st;
  *a = rec;
  return HURRAY_OK;
}

hurray_status copy_to_host(void *state, const hurray_backend_allocation *src, uint64_t offset,
                           void *dst, uint64_t n, hurray_error *err) {
  const auto *s = static_cast<const State *>(state);
  const Allocation *a = nullptr;
  Device *d = nullptr;
  if (const hurray_status st = copy_check(s, src, offset, dst, n, "copy_to_host", &a, &d, err))
    return st;
  if (a == nullptr) return HURRAY_OK;
  const Api &cu = s->cu;
  HURRAY_CUDA_PUSH_(s, d, err)
  if (host_visible(a->memory_class) && !a->imported) {
    // Let the device's queued work finish, then read.
    const CUresult r = cu.cuCtxSynchronize();
    if (r != CUDA_SUCCESS)
      return cu_fail(err, cu, HURRAY_OK, "cuCtxSynchronize", r, "'%s'", d->name.c_str());
    std::memcpy(dst, static_cast<const char *>(vptr(a->data)) + offset, static_cast<size_t>(n));
    return HURRAY_OK;
  }
  CUresult r = cu.cuMemcpyDtoHAsync(dst, dptr(a->data + offset), static_cast<size_t>(n), d->stream);
  if (r != CUDA_SUCCESS)
    return cu_fail(err, cu, HURRAY_OK, "cuMemcpyDtoHAsync", r, "%llu bytes from '%s'",
                   static_cast<unsigned long long>(n), d->name.c_str());
  r = cu.cuStreamSynchronize(d->stream);
  if (r != CUDA_SUCCESS)
    return cu_fail(err, cu, HURRAY_OK, "cuStreamSynchronize", r, "'%s'", d->name.c_str());
  return HURRAY_OK;
}

hurray_status copy_from_host(void *state, hurray_backend_allocation *dst, uint64_t offset,
                             const void *src, uint64_t n, hurray_error *err) {
  const auto *s = static_cast<const State *>(state);
  const Allocation *a = nullptr;
  Device *d = nullptr;
  if (const hurray_status st = copy_check(s, dst, offset, src, n, "copy_from_host", &a, &d, err))
    return st;
  if (a == nullptr) return HURRAY_OK;
  const Api &cu = s->cu;
  HURRAY_CUDA_PUSH_(s, d, err)
  if (host_visible(a->memory_class) && !a->imported) {
    // No queued work may still use the memory while we write.
    const CUresult r = cu.cuCtxSynchronize();
    if (r != CUDA_SUCCESS)
      return cu_fail(err, cu, HURRAY_OK, "cuCtxSynchronize", r, "'%s'", d->name.c_str());
    std::memcpy(static_cast<char *>(vptr(a->data)) + offset, src, static_cast<size_t>(n));
    return HURRAY_OK;
  }
  CUresult r = cu.cuMemcpyHtoDAsync(dptr(a->data + offset), src, static_cast<size_t>(n), d->stream);
  if (r != CUDA_SUCCESS)
    return cu_fail(err, cu, HURRAY_OK, "cuMemcpyHtoDAsync", r, "%llu bytes to '%s'",
                   static_cast<unsigned long long>(n), d->name.c_str());
  r = cu.cuStreamSynchronize(d->stream);
  if (r != CUDA_SUCCESS)
    return cu_fail(err, cu, HURRAY_OK, "cuStreamSynchronize", r, "'%s'", d->name.c_str());
  return HURRAY_OK;
}

hurray_status classify(void *state, const void *ptr, int32_t *device, uint8_t *memory_class,
                       hurray_error *err) {
  auto *s = static_cast<State *>(state);
  Device *d0 = nullptr;
  if (const hurray_status st = get_device(s, 0, &d0, err)) return st;
  if (ptr == nullptr) return fail(err, HURRAY_E_INVALID_ARGUMENT, "cuda: classify: ptr is NULL");
  const Api &cu = s->cu;
  // Each value lands in a zeroed 8-byte slot: the driver writes 4 bytes
  // (memory type, ordinal) or a boolean (is-managed) into the low end.
  uint64_t type = 0, managed = 0, ordinal = 0;
  CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                 CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  void *values[] = {&type, &managed, &ordinal};
  CUresult r;
  {
    HURRAY_CUDA_PUSH_(s, d0, err)
    r = cu.cuPointerGetAttributes(3, attrs, values,
                                  static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(ptr)));
  }
  if (r != CUDA_SUCCESS) return cu_fail(err, cu, HURRAY_OK, "cuPointerGetAttributes", r, "%p", ptr);
  type &= 0xffffffffu;
  const bool is_managed = (managed & 0xffffffffu) != 0;
  const auto dev = static_cast<CUdevice>(static_cast<int32_t>(static_cast<uint32_t>(ordinal)));
  uint8_t mc;
  if (is_managed) {
    mc = HURRAY_MEMORY_UNIFIED;
  } else if (type == CU_MEMORYTYPE_HOST) {
    mc = HURRAY_MEMORY_HOST_PINNED;
  } else if (type == CU_MEMORYTYPE_DEVICE) {
    mc = HURRAY_MEMORY_STANDARD;
  } else if (type == CU_MEMORYTYPE_UNIFIED) {
    mc = HURRAY_MEMORY_UNIFIED;
  } else {
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "cuda: %p is not memory CUDA knows as a linear buffer (cuPointerGetAttributes: "
                "memory type %u)",
                ptr, static_cast<unsigned>(type));
  }
  Allocation rec;
  const bool ours = s->live.find(reinterpret_cast<uintptr_t>(ptr), &rec);
  if (ours && mc == HURRAY_MEMORY_STANDARD && rec.memory_class == HURRAY_MEMORY_PEER)
    mc = HURRAY_MEMORY_PEER;  // CUDA cannot tell: the plugin remembers
  int32_t index = -1;
  for (size_t i = 0; i < s->devices.size(); ++i)
    if (s->devices[i]->dev == dev) index = static_cast<int32_t>(i);
  if (index < 0 && ours) index = rec.device;
  if (index < 0)
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                "cuda: %p is %s memory of CUDA device %d, which this plugin does not serve", ptr,
                class_name(mc), static_cast<int>(dev));
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
                "cuda: event_record: event and value must not be NULL");
  const Api &cu = s->cu;
  HURRAY_CUDA_PUSH_(s, d, err)
  const unsigned flags = static_cast<unsigned>(CU_EVENT_DISABLE_TIMING) |
                         (d->ipc_events ? static_cast<unsigned>(CU_EVENT_INTERPROCESS) : 0u);
  CUevent ev = nullptr;
  CUresult r = cu.cuEventCreate(&ev, flags);
  if (r != CUDA_SUCCESS)
    return cu_fail(err, cu, HURRAY_OK, "cuEventCreate", r, "'%s'", d->name.c_str());
  r = cu.cuEventRecord(ev, stream != nullptr ? static_cast<CUstream>(stream) : d->stream);
  if (r != CUDA_SUCCESS) {
    cu.cuEventDestroy(ev);
    return cu_fail(err, cu, HURRAY_OK, "cuEventRecord", r, "%s stream of '%s'%s",
                   stream != nullptr ? "the given" : "the plugin's", d->name.c_str(),
                   r == CUDA_ERROR_INVALID_HANDLE
                       ? "; the stream must belong to the device's primary context"
                       : "");
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
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "cuda: event_wait: the event is NULL");
  if (value != 0)
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "cuda: event_wait: CUDA events are binary, the value must be 0 (not %llu)",
                static_cast<unsigned long long>(value));
  const Api &cu = s->cu;
  HURRAY_CUDA_PUSH_(s, d, err)
  auto *ev = static_cast<CUevent>(event);
  if (stream == nullptr) {
    const CUresult r = cu.cuEventSynchronize(ev);
    if (r != CUDA_SUCCESS)
      return cu_fail(err, cu, HURRAY_OK, "cuEventSynchronize", r, "'%s'", d->name.c_str());
    return HURRAY_OK;
  }
  const CUresult r = cu.cuStreamWaitEvent(static_cast<CUstream>(stream), ev, 0);
  if (r != CUDA_SUCCESS)
    return cu_fail(err, cu, HURRAY_OK, "cuStreamWaitEvent", r, "'%s'", d->name.c_str());
  return HURRAY_OK;
}

void event_release(void *state, int32_t device, void *event) {
  const auto *s = static_cast<const State *>(state);
  if (s == nullptr || event == nullptr || s->devices.empty()) return;
  // An event is destroyed in any context; the device's keeps things tidy.
  const size_t i = device >= 0 && static_cast<size_t>(device) < s->devices.size()
                       ? static_cast<size_t>(device)
                       : 0;
  Current cur(s->cu, s->devices[i]->ctx);
  s->cu.cuEventDestroy(static_cast<CUevent>(event));
}

// ---- IPC ------------------------------------------------------------------

hurray_status ipc_export_memory(void *state, const hurray_backend_allocation *allocation,
                                hurray_backend_ipc_handle *out, hurray_error *err) {
  const auto *s = static_cast<const State *>(state);
  if (s == nullptr || allocation == nullptr || out == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "cuda: ipc_export_memory: state, allocation and out must not be NULL");
  const auto *a = static_cast<const Allocation *>(allocation->plugin_data);
  if (a == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "cuda: ipc_export_memory: an empty allocation (or one not made by this plugin) "
                "has no memory to export");
  if (a->imported)
    return fail(err, HURRAY_E_UNSUPPORTED,
                "cuda: ipc_export_memory: memory imported from another process cannot be "
                "exported again (export it from its owner)");
  if (host_visible(a->memory_class))
    return fail(err, HURRAY_E_UNSUPPORTED,
                "cuda: ipc_export_memory: CUDA IPC (cuIpcGetMemHandle) exports cuMemAlloc memory "
                "only (STANDARD, PEER), not %s",
                class_name(a->memory_class));
  Device *d = nullptr;
  if (const hurray_status st = get_device(s, a->device, &d, err)) return st;
  const Api &cu = s->cu;
  HURRAY_CUDA_PUSH_(s, d, err)
  CUipcMemHandle h;
  std::memset(&h, 0, sizeof h);
  const CUresult r = cu.cuIpcGetMemHandle(&h, dptr(a->base));
  if (r != CUDA_SUCCESS)
    return cu_fail(err, cu, HURRAY_OK, "cuIpcGetMemHandle", r, "%llu bytes on '%s'",
                   static_cast<unsigned long long>(a->byte_size), d->name.c_str());
  static_assert(sizeof h <= sizeof out->bytes, "a CUDA IPC handle is 64 bytes");
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
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "cuda: ipc_import_memory: out must not be NULL");
  std::memset(out, 0, sizeof *out);
  CUipcMemHandle h;
  const char *why = nullptr;
  if (!hurray::kit::unpack_ipc(handle, kIpcMemoryKind, &h, sizeof h, &why))
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "cuda: ipc_import_memory: %s", why);
  if (memory_class != HURRAY_MEMORY_STANDARD && memory_class != HURRAY_MEMORY_PEER)
    return fail(err, HURRAY_E_UNSUPPORTED,
                "cuda: ipc_import_memory: CUDA IPC memory is device memory: import it as "
                "STANDARD or PEER, not %s",
                class_name(memory_class));
  if (handle->byte_size == 0)
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "cuda: ipc_import_memory: the handle is of 0 bytes");
  const Api &cu = s->cu;
  HURRAY_CUDA_PUSH_(s, d, err)
  CUdeviceptr base = 0;
  CUresult r = cu.cuIpcOpenMemHandle(&base, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  if (r != CUDA_SUCCESS)
    return cu_fail(err, cu, HURRAY_OK, "cuIpcOpenMemHandle", r, "on '%s'%s", d->name.c_str(),
                   r == CUDA_ERROR_INVALID_CONTEXT ? "; a process cannot open its own handle" : "");
  CUdeviceptr range_base = 0;
  size_t range_size = 0;
  r = cu.cuMemGetAddressRange(&range_base, &range_size, base);
  const uint64_t start = static_cast<uint64_t>(base - range_base) + handle->offset;
  if (r == CUDA_SUCCESS && (start > range_size || handle->byte_size > range_size - start)) {
    cu.cuIpcCloseMemHandle(base);
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "cuda: ipc_import_memory: %llu bytes at offset %llu do not fit in the %zu-byte "
                "block the handle maps",
                static_cast<unsigned long long>(handle->byte_size),
                static_cast<unsigned long long>(handle->offset), range_size);
  }
  auto *a = new (std::nothrow) Allocation;
  if (a != nullptr) {
    a->device = device;
    a->memory_class = memory_class;
    a->imported = true;
    a->byte_size = handle->byte_size;
    a->base = static_cast<uintptr_t>(base);
    a->data = a->base + static_cast<uintptr_t>(handle->offset);
    a->device_view = a->data;
  }
  if (a == nullptr || !s->live.add(a)) {
    delete a;
    cu.cuIpcCloseMemHandle(base);
    return fail(err, HURRAY_E_OUT_OF_MEMORY, "cuda: ipc_import_memory: out of host memory");
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
                "cuda: ipc_export_event: event and out must not be NULL");
  if (!d->ipc_events)
    return fail(err, HURRAY_E_UNSUPPORTED,
                "cuda: ipc_export_event: device %d '%s' cannot make interprocess events "
                "(CU_EVENT_INTERPROCESS failed in probe, or the device reports no IPC event "
                "support)",
                static_cast<int>(device), d->name.c_str());
  const Api &cu = s->cu;
  HURRAY_CUDA_PUSH_(s, d, err)
  CUipcEventHandle h;
  std::memset(&h, 0, sizeof h);
  const CUresult r = cu.cuIpcGetEventHandle(&h, static_cast<CUevent>(event));
  if (r != CUDA_SUCCESS)
    return cu_fail(err, cu, HURRAY_OK, "cuIpcGetEventHandle", r, "'%s'%s", d->name.c_str(),
                   r == CUDA_ERROR_INVALID_HANDLE
                       ? "; only events from event_record (CU_EVENT_INTERPROCESS) can be exported"
                       : "");
  static_assert(sizeof h <= sizeof out->bytes, "a CUDA IPC event handle is 64 bytes");
  hurray::kit::pack_ipc(kIpcEventKind, &h, sizeof h, 0, 0, out);
  return HURRAY_OK;
}

hurray_status ipc_import_event(void *state, int32_t device, const hurray_backend_ipc_handle *handle,
                               void **event, hurray_error *err) {
  const auto *s = static_cast<const State *>(state);
  Device *d = nullptr;
  if (const hurray_status st = get_device(s, device, &d, err)) return st;
  if (event == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "cuda: ipc_import_event: event must not be NULL");
  CUipcEventHandle h;
  const char *why = nullptr;
  if (!hurray::kit::unpack_ipc(handle, kIpcEventKind, &h, sizeof h, &why))
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "cuda: ipc_import_event: %s", why);
  const Api &cu = s->cu;
  HURRAY_CUDA_PUSH_(s, d, err)
  CUevent ev = nullptr;
  const CUresult r = cu.cuIpcOpenEventHandle(&ev, h);
  if (r != CUDA_SUCCESS)
    return cu_fail(err, cu, HURRAY_OK, "cuIpcOpenEventHandle", r, "on '%s'", d->name.c_str());
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
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "cuda: native: out must not be NULL");
  std::memset(out, 0, sizeof *out);
  out->handles[0] = reinterpret_cast<void *>(static_cast<uintptr_t>(d->dev));
  out->handles[1] = d->ctx;
  out->handles[2] = d->stream;
  out->handles[3] = d->stream;
  out->handles[4] = s->lib;
  return HURRAY_OK;
}

constexpr hurray_backend_v1 make_table() noexcept {
  hurray_backend_v1 t = hurray::kit::make_table(HURRAY_DEVICE_CUDA);
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
