/*
 * libhurray-opencl.so - the OpenCL device plugin (device_tag 0x08 OPENCL),
 * hurray_backend_v1.
 *
 * The plugin links no libOpenCL: probe() dlopens "libOpenCL.so.1" (the ICD
 * loader) and resolves every cl* function it uses with dlsym. Every device of
 * every platform becomes one device ordinal, in platform order then device
 * order; a device whose context or queue cannot be created is left out (and
 * named in probe's reason if no device is left).
 *
 * Native handles (hurray_backend_native.handles, filled by native()):
 *   [0] cl_platform_id    the device's platform
 *   [1] cl_device_id      the device
 *   [2] cl_context        the plugin's context (this one device)
 *   [3] cl_command_queue  the device's default queue: in-order, created by the
 *                         plugin; "stream NULL" in event_record/event_wait and
 *                         every copy run on it
 *   [4] void *            the plugin's dlopen() handle of libOpenCL.so.1, so a
 *                         caller can dlsym cl* functions without linking it
 *   [5]..[7] NULL
 * The plugin owns all of them until shutdown(); retain (clRetain*) what you
 * keep longer. A stream passed to event_record/event_wait is a
 * cl_command_queue of the context in [2].
 *
 * Memory classes (device_info().detail says the same, shortly):
 *   STANDARD     clCreateBuffer(CL_MEM_READ_WRITE). data is the cl_mem
 *                (HURRAY_HANDOFF_OPAQUE_DATA), host is NULL. Its device
 *                address is not visible; OpenCL aligns it to
 *                CL_DEVICE_MEM_BASE_ADDR_ALIGN, and the reported alignment is
 *                max(asked, that, 64).
 *   HOST_PINNED  clCreateBuffer(CL_MEM_ALLOC_HOST_PTR), mapped once with
 *                clEnqueueMapBuffer (read/write) and kept mapped until free:
 *                data == host == the mapped pointer; plugin_data keeps the
 *                cl_mem. When the mapping is not aligned enough, the buffer is
 *                made larger and a sub-buffer that starts at an aligned host
 *                address is mapped instead; the pointer handed out is always
 *                checked, and a misaligned one is HURRAY_E_ALIGNMENT, never
 *                reported with an alignment it does not have.
 *   UNIFIED      clSVMAlloc(CL_MEM_SVM_FINE_GRAIN_BUFFER), only where the
 *                device reports CL_DEVICE_SVM_FINE_GRAIN_BUFFER; else
 *                HURRAY_E_DEVICE_UNAVAILABLE. data == host == the SVM pointer
 *                (aligned inside a larger SVM allocation when clSVMAlloc does
 *                not give the alignment). classify() knows these pointers.
 *   PEER         not available (OpenCL has no peer-mapped memory).
 *   HURRAY_ALLOC_SHAREABLE is HURRAY_E_UNSUPPORTED: OpenCL has no portable
 *   memory export, and no IPC of memory or events (ipc_* are NULL).
 *
 * Copies: STANDARD uses blocking clEnqueueRead/WriteBuffer on the default
 * queue (so they follow what event_wait put on it); HOST_PINNED and UNIFIED
 * finish the default queue, then memcpy.
 *
 * Events are cl_events (binary: value 0). event_record enqueues a marker on
 * the stream (NULL: the default queue) and flushes it; event_wait with a
 * stream enqueues a barrier that waits for the event, with NULL it waits on
 * the host (clWaitForEvents).
 *
 * Threads: OpenCL calls are thread-safe (the plugin calls no clSetKernelArg);
 * allocation records come from a lock-free pool (so that alloc and free take
 * no lock) and the SVM ranges are behind a mutex. libOpenCL.so.1 stays loaded
 * after shutdown(): ICD loaders and vendor drivers are not made to be
 * unloaded.
 */
#include <dlfcn.h>

#include <algorithm>
#include <bit>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include <hurray_backend.h>

#include "class_name.h"
#include "kit/align.h"
#include "kit/entry.h"
#include "kit/errors.h"
#include "kit/ipc.h"

#include "internal.h"
#include "../../handoff/pool.h"

namespace {

using hurray::opencl::Api;

constexpr const char *kLibrary = "libOpenCL.so.1";

// ---- errors ---------------------------------------------------------------

using hurray::kit::fail;

hurray_status status_of(cl_int code) noexcept {
  switch (code) {
    case CL_OUT_OF_HOST_MEMORY:
    case CL_OUT_OF_RESOURCES:
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_INVALID_BUFFER_SIZE:
      return HURRAY_E_OUT_OF_MEMORY;
    case CL_DEVICE_NOT_FOUND:
    case CL_DEVICE_NOT_AVAILABLE:
    case CL_PLATFORM_NOT_FOUND_KHR:
      return HURRAY_E_DEVICE_UNAVAILABLE;
    case CL_INVALID_COMMAND_QUEUE:
    case CL_INVALID_CONTEXT:
    case CL_INVALID_EVENT:
    case CL_INVALID_EVENT_WAIT_LIST:
    case CL_INVALID_MEM_OBJECT:
      return HURRAY_E_INVALID_ARGUMENT;
    default:
      return HURRAY_E_BACKEND;
  }
}

// "[clCreateBuffer] CL_MEM_OBJECT_ALLOCATION_FAILURE: <details>"; the status
// follows the code unless `status` is given.
__attribute__((format(printf, 5, 6))) hurray_status cl_fail(hurray_error *err, hurray_status status,
                                                            const char *function, cl_int code,
                                                            const char *fmt, ...) noexcept {
  if (status == HURRAY_OK) status = status_of(code);
  char name[48];
  if (const char *known = hurray::opencl::error_name(code)) {
    std::snprintf(name, sizeof name, "%s", known);
  } else {
    std::snprintf(name, sizeof name, "OpenCL error %d", static_cast<int>(code));
  }
  char details[192] = "";
  if (fmt != nullptr && fmt[0] != '\0') {
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(details, sizeof details, fmt, ap);
    va_end(ap);
  }
  return hurray::kit::vendor_fail(err, status, function, name, details, nullptr);
}

using hurray::plugin::class_name;

// ---- state ----------------------------------------------------------------

struct Device {
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  std::string name;
  std::string version;   // "OpenCL 3.0": the first two words of CL_DEVICE_VERSION
  std::string platform_name;
  uint32_t base_align = 1;  // bytes: CL_DEVICE_MEM_BASE_ADDR_ALIGN is in bits
  uint64_t max_alloc = 0;   // CL_DEVICE_MAX_MEM_ALLOC_SIZE
  bool fine_svm = false;    // CL_DEVICE_SVM_FINE_GRAIN_BUFFER and clSVMAlloc
  uint32_t svm_align_cap = 0;  // CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE: clSVMAlloc's limit
  uint32_t min_alignment() const noexcept {
    return std::max<uint32_t>(HURRAY_MIN_ALIGNMENT, base_align);
  }
};

// The plugin's record of one allocation: hurray_backend_allocation.plugin_data.
// Records come from State::records and go back there when freed; `live` says
// which ones shutdown() still has to free.
struct Allocation {
  std::atomic<uint32_t> pool_next{0};  // for hurray::detail::Pool
  uint32_t pool_index = 0;
  std::atomic<bool> live{false};
  int32_t device = 0;
  uint8_t memory_class = 0;
  uint64_t byte_size = 0;
  cl_mem mem = nullptr;      // STANDARD, HOST_PINNED (a sub-buffer when placed)
  cl_mem parent = nullptr;   // HOST_PINNED placed inside a larger buffer
  void *ptr = nullptr;       // HOST_PINNED: the mapped pointer; UNIFIED: the SVM pointer
  void *svm_base = nullptr;  // UNIFIED: what clSVMFree takes
};

struct SvmRange {
  uint64_t size;
  int32_t device;
};

struct State {
  void *lib = nullptr;
  Api cl;
  std::vector<Device> devices;  // fixed after probe

  // Allocation records, reused without a lock (the alloc/free cycle then
  // never takes the heap; bench/backend_bench.cpp measures it against the
  // raw calls). Never shrinks until shutdown.
  hurray::detail::Pool<Allocation> records;

  std::mutex mu;                          // guards what follows
  std::map<uintptr_t, SvmRange> svm;      // UNIFIED pointers handed out
};

hurray_status get_device(const State *s, int32_t device, const Device **out,
                         hurray_error *err) noexcept {
  if (const hurray_status st = hurray::kit::check_device(s, device, s != nullptr ? s->devices.size() : 0, err))
    return st;
  *out = &s->devices[static_cast<size_t>(device)];
  return HURRAY_OK;
}

using hurray::kit::alignment_of;
using hurray::kit::is_aligned;

// ---- probe ----------------------------------------------------------------

std::string platform_string(const Api &cl, cl_platform_id p, cl_platform_info what) {
  size_t n = 0;
  if (cl.clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::string s(n, '\0');
  if (cl.clGetPlatformInfo(p, what, n, s.data(), nullptr) != CL_SUCCESS) return {};
  s.resize(std::strlen(s.c_str()));
  return s;
}

cl_int device_string(const Api &cl, cl_device_id d, cl_device_info what, std::string *out) {
  size_t n = 0;
  cl_int e = cl.clGetDeviceInfo(d, what, 0, nullptr, &n);
  if (e != CL_SUCCESS) return e;
  std::string s(n, '\0');
  e = cl.clGetDeviceInfo(d, what, n, s.data(), nullptr);
  if (e != CL_SUCCESS) return e;
  s.resize(std::strlen(s.c_str()));
  *out = std::move(s);
  return CL_SUCCESS;
}

// "OpenCL 3.0 PoCL ..." -> major * 10 + minor (30); 0 if unreadable.
unsigned version_number(const std::string &v) noexcept {
  unsigned major = 0, minor = 0;
  if (std::sscanf(v.c_str(), "OpenCL %u.%u", &major, &minor) != 2) return 0;
  return major * 10 + minor;
}

void note(std::string *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void note(std::string *why, const char *fmt, ...) {
  char line[256];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (!why->empty()) *why += "; ";
  *why += line;
}

const char *cl_name(cl_int e, char (&buf)[32]) noexcept {
  if (const char *n = hurray::opencl::error_name(e)) return n;
  std::snprintf(buf, sizeof buf, "OpenCL error %d", static_cast<int>(e));
  return buf;
}

// Query one device and create its context and default queue. On failure,
// appends the reason to *why and returns false (nothing is left allocated).
bool open_device(const Api &cl, cl_platform_id platform, const std::string &platform_name,
                 unsigned platform_version, cl_device_id id, Device *d, std::string *why) {
  char buf[32];
  d->platform = platform;
  d->platform_name = platform_name;
  d->id = id;
  cl_int e = device_string(cl, id, CL_DEVICE_NAME, &d->name);
  if (e != CL_SUCCESS) {
    note(why, "[clGetDeviceInfo] %s: CL_DEVICE_NAME on platform '%s'", cl_name(e, buf),
         platform_name.c_str());
    return false;
  }
  std::string version;
  e = device_string(cl, id, CL_DEVICE_VERSION, &version);
  if (e != CL_SUCCESS) {
    note(why, "[clGetDeviceInfo] %s: CL_DEVICE_VERSION of '%s'", cl_name(e, buf), d->name.c_str());
    return false;
  }
  const unsigned device_version = version_number(version);
  d->version = version.substr(0, version.find(' ', version.find(' ') + 1));

  cl_bool available = CL_FALSE;
  cl_uint align_bits = 0;
  cl_ulong max_alloc = 0;
  if ((e = cl.clGetDeviceInfo(id, CL_DEVICE_AVAILABLE, sizeof available, &available, nullptr)) !=
          CL_SUCCESS ||
      (e = cl.clGetDeviceInfo(id, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits,
                              nullptr)) != CL_SUCCESS ||
      (e = cl.clGetDeviceInfo(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc,
                              nullptr)) != CL_SUCCESS) {
    note(why, "[clGetDeviceInfo] %s: device '%s'", cl_name(e, buf), d->name.c_str());
    return false;
  }
  if (!available) {
    note(why, "device '%s' reports CL_DEVICE_AVAILABLE false", d->name.c_str());
    return false;
  }
  d->base_align = std::bit_ceil(std::max<uint32_t>(align_bits / 8u, 1u));
  d->max_alloc = max_alloc;

  // OpenCL 2.0 functions are only dispatched for 2.0+ platforms and devices.
  const bool cl20 = device_version >= 20 && platform_version >= 20;
  if (cl20 && cl.clSVMAlloc != nullptr && cl.clSVMFree != nullptr) {
    cl_device_svm_capabilities svm = 0;
    cl_uint cap = 0;
    if (cl.clGetDeviceInfo(id, CL_DEVICE_SVM_CAPABILITIES, sizeof svm, &svm, nullptr) ==
        CL_SUCCESS)
      d->fine_svm = (svm & CL_DEVICE_SVM_FINE_GRAIN_BUFFER) != 0;
    if (cl.clGetDeviceInfo(id, CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE, sizeof cap, &cap, nullptr) ==
        CL_SUCCESS)
      d->svm_align_cap = cap;
  }

  const cl_context_properties props[] = {
      CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(platform), 0};
  d->context = cl.clCreateContext(props, 1, &id, nullptr, nullptr, &e);
  if (d->context == nullptr) {
    note(why, "[clCreateContext] %s: device '%s'", cl_name(e, buf), d->name.c_str());
    return false;
  }
  if (cl20 && cl.clCreateCommandQueueWithProperties != nullptr) {
    d->queue = cl.clCreateCommandQueueWithProperties(d->context, id, nullptr, &e);
  } else {
    d->queue = cl.clCreateCommandQueue(d->context, id, 0, &e);
  }
  if (d->queue == nullptr) {
    note(why, "[clCreateCommandQueue] %s: device '%s'", cl_name(e, buf), d->name.c_str());
    cl.clReleaseContext(d->context);
    d->context = nullptr;
    return false;
  }
  return true;
}

void close_devices(State *s) noexcept {
  for (Device &d : s->devices) {
    if (d.queue != nullptr) {
      s->cl.clFinish(d.queue);
      s->cl.clReleaseCommandQueue(d.queue);
    }
    if (d.context != nullptr) s->cl.clReleaseContext(d.context);
    d.queue = nullptr;
    d.context = nullptr;
  }
}

hurray_status open_devices(State *s, hurray_error *err) {
  const Api &cl = s->cl;
  cl_uint count = 0;
  cl_int e = cl.clGetPlatformIDs(0, nullptr, &count);
  if (e != CL_SUCCESS)
    return cl_fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "clGetPlatformIDs", e, nullptr);
  if (count == 0)
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                "[clGetPlatformIDs] no OpenCL platform (the ICD loader found no driver)");
  std::vector<cl_platform_id> platforms(count);
  e = cl.clGetPlatformIDs(count, platforms.data(), &count);
  if (e != CL_SUCCESS)
    return cl_fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "clGetPlatformIDs", e, nullptr);
  platforms.resize(count);

  std::string why;  // why platforms or devices were left out
  for (cl_platform_id p : platforms) {
    const std::string pname = platform_string(cl, p, CL_PLATFORM_NAME);
    const unsigned pversion = version_number(platform_string(cl, p, CL_PLATFORM_VERSION));
    cl_uint n = 0;
    e = cl.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n);
    if (e != CL_SUCCESS || n == 0) {
      char buf[32];
      note(&why, "[clGetDeviceIDs] %s: platform '%s'",
           e != CL_SUCCESS ? cl_name(e, buf) : "no device", pname.c_str());
      continue;
    }
    std::vector<cl_device_id> ids(n);
    e = cl.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, ids.data(), &n);
    if (e != CL_SUCCESS) {
      char buf[32];
      note(&why, "[clGetDeviceIDs] %s: platform '%s'", cl_name(e, buf), pname.c_str());
      continue;
    }
    ids.resize(n);
    for (cl_device_id id : ids) {
      Device d;
      if (!open_device(cl, p, pname, pversion, id, &d, &why)) continue;
      try {
        s->devices.push_back(std::move(d));
      } catch (...) {
        if (d.queue != nullptr) cl.clReleaseCommandQueue(d.queue);
        if (d.context != nullptr) cl.clReleaseContext(d.context);
        throw;
      }
    }
  }
  if (s->devices.empty())
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "opencl: no usable OpenCL device: %s",
                why.c_str());
  return HURRAY_OK;
}

hurray_status probe(void **state, hurray_error *err) {
  if (state == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "opencl: probe: state must not be NULL");
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
                  why != nullptr ? why : "libOpenCL.so.1: cannot be loaded");
    }
    if (const char *missing = hurray::opencl::load_api(s->lib, &s->cl)) {
      dlclose(s->lib);
      delete s;
      return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                  "[dlsym] %s has no %s (an OpenCL 1.2 or later ICD loader is needed)", kLibrary,
                  missing);
    }
    // From here on the ICD loader may have loaded drivers: it stays loaded.
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
    return fail(err, HURRAY_E_OUT_OF_MEMORY, "opencl: probe: out of memory");
  } catch (...) {
    if (s != nullptr) close_devices(s);
    delete s;
    return fail(err, HURRAY_E_INTERNAL, "opencl: probe: unexpected exception");
  }
}

void free_allocation(State *s, Allocation *a) noexcept;

void shutdown(void *state) {
  auto *s = static_cast<State *>(state);
  if (s == nullptr) return;
  // Allocations still alive are freed with the state, then the records.
  const uint64_t n = s->records.capacity();
  for (uint64_t i = 0; i < n; ++i) {
    Allocation *a = s->records.find(i);
    if (a != nullptr && a->live.load(std::memory_order_acquire)) free_allocation(s, a);
  }
  s->records.destroy();
  close_devices(s);
  delete s;
}

int32_t device_count(void *state) {
  const auto *s = static_cast<const State *>(state);
  return s == nullptr ? 0 : static_cast<int32_t>(s->devices.size());
}

hurray_status device_info(void *state, int32_t device, hurray_backend_device_info *out,
                          hurray_error *err) {
  const Device *d = nullptr;
  if (const hurray_status st = get_device(static_cast<State *>(state), device, &d, err))
    return st;
  if (out == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "opencl: device_info: out must not be NULL");
  std::memset(out, 0, sizeof *out);
  std::snprintf(out->name, sizeof out->name, "%s", d->name.c_str());
  out->memory_classes = (1u << HURRAY_MEMORY_STANDARD) | (1u << HURRAY_MEMORY_HOST_PINNED) |
                        (d->fine_svm ? 1u << HURRAY_MEMORY_UNIFIED : 0u);
  out->ipc = 0;
  out->min_alignment = d->min_alignment();
  std::snprintf(out->detail, sizeof out->detail,
                "%s (%.40s); STANDARD: clCreateBuffer, opaque cl_mem; HOST_PINNED: "
                "CL_MEM_ALLOC_HOST_PTR, mapped; UNIFIED: %s; base align %u B; "
                "no IPC: OpenCL exports no memory or events",
                d->version.c_str(), d->platform_name.c_str(),
                d->fine_svm ? "fine-grain buffer SVM" : "none (no fine-grain buffer SVM)",
                d->base_align);
  return HURRAY_OK;
}

// ---- memory ---------------------------------------------------------------

hurray_status map_buffer(const Api &cl, const Device &d, cl_mem m, uint64_t size, void **out,
                         hurray_error *err) noexcept {
  cl_int e = CL_SUCCESS;
  void *p = cl.clEnqueueMapBuffer(d.queue, m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                  static_cast<size_t>(size), 0, nullptr, nullptr, &e);
  if (p == nullptr || e != CL_SUCCESS)
    return cl_fail(err, HURRAY_OK, "clEnqueueMapBuffer", e != CL_SUCCESS ? e : CL_MAP_FAILURE,
                   "%llu bytes on '%s'", static_cast<unsigned long long>(size), d.name.c_str());
  *out = p;
  return HURRAY_OK;
}

void unmap_buffer(const Api &cl, const Device &d, cl_mem m, void *p) noexcept {
  cl.clEnqueueUnmapMemObject(d.queue, m, p, 0, nullptr, nullptr);
  cl.clFinish(d.queue);
}

hurray_status create_buffer(const Api &cl, const Device &d, cl_mem_flags flags, uint64_t size,
                            cl_mem *out, hurray_error *err) noexcept {
  cl_int e = CL_SUCCESS;
  *out = cl.clCreateBuffer(d.context, flags, static_cast<size_t>(size), nullptr, &e);
  if (*out == nullptr)
    return cl_fail(err, HURRAY_OK, "clCreateBuffer", e,
                   "%llu bytes on '%s' (CL_DEVICE_MAX_MEM_ALLOC_SIZE %llu)",
                   static_cast<unsigned long long>(size), d.name.c_str(),
                   static_cast<unsigned long long>(d.max_alloc));
  return HURRAY_OK;
}

hurray_status alloc_pinned(const Api &cl, const Device &d, uint64_t size, uint32_t align,
                           Allocation *a, hurray_error *err) noexcept {
  const cl_mem_flags flags = CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR;
  // First try: the buffer itself, if its mapping is aligned enough.
  cl_mem m = nullptr;
  void *p = nullptr;
  if (const hurray_status st = create_buffer(cl, d, flags, size, &m, err)) return st;
  if (const hurray_status st = map_buffer(cl, d, m, size, &p, err)) {
    cl.clReleaseMemObject(m);
    return st;
  }
  if (is_aligned(p, align)) {
    a->mem = m;
    a->ptr = p;
    return HURRAY_OK;
  }
  unmap_buffer(cl, d, m, p);
  cl.clReleaseMemObject(m);

  // Second try: a larger buffer and a sub-buffer whose mapping starts at an
  // aligned host address. Sub-buffer origins must be multiples of
  // CL_DEVICE_MEM_BASE_ADDR_ALIGN, which divides `align`.
  if (d.max_alloc < align || size > d.max_alloc - align)
    return fail(err, HURRAY_E_OUT_OF_MEMORY,
                "opencl: HOST_PINNED on '%s': the mapping is not %u-byte aligned and %llu + %u "
                "bytes exceed CL_DEVICE_MAX_MEM_ALLOC_SIZE (%llu) to place it",
                d.name.c_str(), align, static_cast<unsigned long long>(size), align,
                static_cast<unsigned long long>(d.max_alloc));
  cl_mem parent = nullptr;
  if (const hurray_status st = create_buffer(cl, d, flags, size + align, &parent, err)) return st;
  void *base = nullptr;
  if (const hurray_status st = map_buffer(cl, d, parent, size + align, &base, err)) {
    cl.clReleaseMemObject(parent);
    return st;
  }
  unmap_buffer(cl, d, parent, base);
  const uint64_t offset = (align - reinterpret_cast<uintptr_t>(base) % align) % align;
  if (offset % d.base_align != 0) {
    cl.clReleaseMemObject(parent);
    return fail(err, HURRAY_E_ALIGNMENT,
                "opencl: HOST_PINNED on '%s': clEnqueueMapBuffer returned %p, aligned to %llu "
                "bytes only, less than CL_DEVICE_MEM_BASE_ADDR_ALIGN (%u bytes): no sub-buffer "
                "can start at a %u-byte aligned address",
                d.name.c_str(), base, static_cast<unsigned long long>(alignment_of(base)), d.base_align,
                align);
  }
  const cl_buffer_region region{static_cast<size_t>(offset), static_cast<size_t>(size)};
  cl_int e = CL_SUCCESS;
  cl_mem sub = cl.clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION,
                                    &region, &e);
  if (sub == nullptr) {
    cl.clReleaseMemObject(parent);
    return cl_fail(err, HURRAY_OK, "clCreateSubBuffer", e, "%llu bytes at offset %llu on '%s'",
                   static_cast<unsigned long long>(size),
                   static_cast<unsigned long long>(offset), d.name.c_str());
  }
  if (const hurray_status st = map_buffer(cl, d, sub, size, &p, err)) {
    cl.clReleaseMemObject(sub);
    cl.clReleaseMemObject(parent);
    return st;
  }
  if (!is_aligned(p, align)) {
    unmap_buffer(cl, d, sub, p);
    cl.clReleaseMemObject(sub);
    cl.clReleaseMemObject(parent);
    return fail(err, HURRAY_E_ALIGNMENT,
                "opencl: HOST_PINNED on '%s': clEnqueueMapBuffer returned %p, aligned to %llu "
                "bytes, not the %u asked (the driver does not keep mappings at a fixed address)",
                d.name.c_str(), p, static_cast<unsigned long long>(alignment_of(p)), align);
  }
  a->mem = sub;
  a->parent = parent;
  a->ptr = p;
  return HURRAY_OK;
}

hurray_status alloc_svm(const Api &cl, const Device &d, uint64_t size, uint32_t align,
                        Allocation *a, hurray_error *err) noexcept {
  const cl_svm_mem_flags flags = CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER;
  // OpenCL caps clSVMAlloc's alignment at the size of the largest data type
  // (CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE); a larger one is an error (and leaks
  // in PoCL 3.1). Above the cap, or when the pointer comes back misaligned,
  // ask for room and align inside it.
  void *p = nullptr;
  if (align <= d.svm_align_cap) {
    p = cl.clSVMAlloc(d.context, flags, static_cast<size_t>(size), align);
    if (p != nullptr && !is_aligned(p, align)) {
      cl.clSVMFree(d.context, p);
      p = nullptr;
    }
  }
  void *base = p;
  if (p == nullptr) {
    if (d.max_alloc < align || size > d.max_alloc - align)
      return fail(err, HURRAY_E_OUT_OF_MEMORY,
                  "[clSVMAlloc] NULL: %llu bytes of fine-grained SVM aligned to %u on '%s' "
                  "(CL_DEVICE_MAX_MEM_ALLOC_SIZE %llu)",
                  static_cast<unsigned long long>(size), align, d.name.c_str(),
                  static_cast<unsigned long long>(d.max_alloc));
    base = cl.clSVMAlloc(d.context, flags, static_cast<size_t>(size + align), 0);
    if (base == nullptr)
      return fail(err, HURRAY_E_OUT_OF_MEMORY,
                  "[clSVMAlloc] NULL: %llu bytes of fine-grained SVM on '%s' (OpenCL gives no "
                  "reason; CL_DEVICE_MAX_MEM_ALLOC_SIZE %llu)",
                  static_cast<unsigned long long>(size + align), d.name.c_str(),
                  static_cast<unsigned long long>(d.max_alloc));
    const uintptr_t b = reinterpret_cast<uintptr_t>(base);
    p = reinterpret_cast<void *>((b + align - 1) & ~(static_cast<uintptr_t>(align) - 1));
  }
  a->svm_base = base;
  a->ptr = p;
  return HURRAY_OK;
}

// Give back what alloc_* made for `a` (not the record itself).
void release_resources(const Api &cl, const Device &d, Allocation *a) noexcept {
  switch (a->memory_class) {
    case HURRAY_MEMORY_STANDARD:
      cl.clReleaseMemObject(a->mem);
      break;
    case HURRAY_MEMORY_HOST_PINNED:
      unmap_buffer(cl, d, a->mem, a->ptr);
      cl.clReleaseMemObject(a->mem);
      if (a->parent != nullptr) cl.clReleaseMemObject(a->parent);
      break;
    default:
      // clSVMFree does not wait for the commands that use the memory.
      cl.clFinish(d.queue);
      cl.clSVMFree(d.context, a->svm_base);
      break;
  }
  a->mem = a->parent = nullptr;
  a->ptr = a->svm_base = nullptr;
}

hurray_status alloc(void *state, int32_t device, uint8_t memory_class, uint64_t byte_size,
                    uint32_t alignment, uint32_t flags, hurray_backend_allocation *out,
                    hurray_error *err) {
  auto *s = static_cast<State *>(state);
  const Device *d = nullptr;
  if (const hurray_status st = get_device(s, device, &d, err)) return st;
  if (out == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "opencl: alloc: out must not be NULL");
  std::memset(out, 0, sizeof *out);

  if (memory_class != HURRAY_MEMORY_STANDARD && memory_class != HURRAY_MEMORY_HOST_PINNED &&
      memory_class != HURRAY_MEMORY_UNIFIED)
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                "opencl: memory class %s (0x%02x) is not available on device %d '%s': %s",
                class_name(memory_class), memory_class, static_cast<int>(device),
                d->name.c_str(),
                memory_class == HURRAY_MEMORY_PEER
                    ? "OpenCL has no memory mapped for peer devices"
                    : "OpenCL serves STANDARD, HOST_PINNED and UNIFIED only");
  if (memory_class == HURRAY_MEMORY_UNIFIED && !d->fine_svm)
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                "opencl: memory class UNIFIED (0x02) is not available on device %d '%s': it "
                "needs fine-grained buffer SVM (CL_DEVICE_SVM_FINE_GRAIN_BUFFER), which the "
                "device does not report",
                static_cast<int>(device), d->name.c_str());
  if ((flags & HURRAY_ALLOC_SHAREABLE) != 0)
    return fail(err, HURRAY_E_UNSUPPORTED,
                "opencl: HURRAY_ALLOC_SHAREABLE: OpenCL has no portable way to export memory to "
                "another process");
  if (flags != 0)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "opencl: alloc: unknown flags 0x%x", flags);
  if (alignment == 0) alignment = HURRAY_MIN_ALIGNMENT;
  if ((alignment & (alignment - 1)) != 0)  // (std::has_single_bit calls libgcc's popcount)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "opencl: alloc: alignment %u is not a power of two",
                alignment);
  const uint32_t align = std::max(alignment, d->min_alignment());

  out->byte_size = byte_size;
  out->alignment = align;
  out->flags = memory_class == HURRAY_MEMORY_STANDARD ? HURRAY_HANDOFF_OPAQUE_DATA : 0u;
  out->device = device;
  out->memory_class = memory_class;
  if (byte_size == 0) return HURRAY_OK;  // an empty buffer has no memory
  if (byte_size > SIZE_MAX / 2)
    return fail(err, HURRAY_E_OUT_OF_MEMORY, "opencl: %llu bytes cannot be allocated",
                static_cast<unsigned long long>(byte_size));

  Allocation *a = s->records.pop();
  if (a == nullptr) return fail(err, HURRAY_E_OUT_OF_MEMORY, "opencl: alloc: out of host memory");
  a->device = device;
  a->memory_class = memory_class;
  a->byte_size = byte_size;
  a->mem = a->parent = nullptr;
  a->ptr = a->svm_base = nullptr;
  const Api &cl = s->cl;
  hurray_status st = HURRAY_OK;
  switch (memory_class) {
    case HURRAY_MEMORY_STANDARD:
      st = create_buffer(cl, *d, CL_MEM_READ_WRITE, byte_size, &a->mem, err);
      break;
    case HURRAY_MEMORY_HOST_PINNED:
      st = alloc_pinned(cl, *d, byte_size, align, a, err);
      break;
    default:
      st = alloc_svm(cl, *d, byte_size, align, a, err);
      if (st == HURRAY_OK) {
        try {
          std::lock_guard<std::mutex> lock(s->mu);
          s->svm.emplace(reinterpret_cast<uintptr_t>(a->ptr), SvmRange{byte_size, device});
        } catch (...) {
          release_resources(cl, *d, a);
          st = fail(err, HURRAY_E_OUT_OF_MEMORY, "opencl: alloc: out of host memory");
        }
      }
      break;
  }
  if (st != HURRAY_OK) {
    s->records.push(a);
    return st;
  }
  a->live.store(true, std::memory_order_release);
  if (memory_class == HURRAY_MEMORY_STANDARD) {
    out->data = a->mem;
  } else {
    out->data = out->host = a->ptr;
  }
  out->plugin_data = a;
  return HURRAY_OK;
}

void free_allocation(State *s, Allocation *a) noexcept {
  a->live.store(false, std::memory_order_relaxed);
  if (a->memory_class == HURRAY_MEMORY_UNIFIED) {
    std::lock_guard<std::mutex> lock(s->mu);
    s->svm.erase(reinterpret_cast<uintptr_t>(a->ptr));
  }
  release_resources(s->cl, s->devices[static_cast<size_t>(a->device)], a);
  s->records.push(a);
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
                         const Device **d, hurray_error *err) noexcept {
  *a = nullptr;
  if (s == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "opencl: %s: the plugin state is NULL (probe first)", what);
  if (const hurray_status st = hurray::kit::check_copy(alloc, offset, host, n, what, err)) return st;
  if (n == 0) return HURRAY_OK;
  const auto *rec = static_cast<const Allocation *>(alloc->plugin_data);
  if (rec == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "opencl: %s: the allocation was not made by this plugin (or was freed)", what);
  if (const hurray_status st = get_device(s, rec->device, d, err)) return st;
  *a = rec;
  return HURRAY_OK;
}

hurray_status copy_to_host(void *state, const hurray_backend_allocation *src, uint64_t offset,
                           void *dst, uint64_t n, hurray_error *err) {
  const auto *s = static_cast<const State *>(state);
  const Allocation *a = nullptr;
  const Device *d = nullptr;
  if (const hurray_status st = copy_check(s, src, offset, dst, n, "copy_to_host", &a, &d, err))
    return st;
  if (a == nullptr) return HURRAY_OK;
  const Api &cl = s->cl;
  if (a->memory_class == HURRAY_MEMORY_STANDARD) {
    const cl_int e = cl.clEnqueueReadBuffer(d->queue, a->mem, CL_TRUE, static_cast<size_t>(offset),
                                            static_cast<size_t>(n), dst, 0, nullptr, nullptr);
    if (e != CL_SUCCESS)
      return cl_fail(err, HURRAY_OK, "clEnqueueReadBuffer", e, "%llu bytes from '%s'",
                     static_cast<unsigned long long>(n), d->name.c_str());
    return HURRAY_OK;
  }
  // Host-visible memory: let the device's queued work finish, then read.
  const cl_int e = cl.clFinish(d->queue);
  if (e != CL_SUCCESS) return cl_fail(err, HURRAY_OK, "clFinish", e, "'%s'", d->name.c_str());
  std::memcpy(dst, static_cast<const char *>(a->ptr) + offset, static_cast<size_t>(n));
  return HURRAY_OK;
}

hurray_status copy_from_host(void *state, hurray_backend_allocation *dst, uint64_t offset,
                             const void *src, uint64_t n, hurray_error *err) {
  const auto *s = static_cast<const State *>(state);
  const Allocation *a = nullptr;
  const Device *d = nullptr;
  if (const hurray_status st = copy_check(s, dst, offset, src, n, "copy_from_host", &a, &d, err))
    return st;
  if (a == nullptr) return HURRAY_OK;
  const Api &cl = s->cl;
  if (a->memory_class == HURRAY_MEMORY_STANDARD) {
    const cl_int e = cl.clEnqueueWriteBuffer(d->queue, a->mem, CL_TRUE,
                                             static_cast<size_t>(offset), static_cast<size_t>(n),
                                             src, 0, nullptr, nullptr);
    if (e != CL_SUCCESS)
      return cl_fail(err, HURRAY_OK, "clEnqueueWriteBuffer", e, "%llu bytes to '%s'",
                     static_cast<unsigned long long>(n), d->name.c_str());
    return HURRAY_OK;
  }
  // Host-visible memory: no queued command may still use it while we write.
  const cl_int e = cl.clFinish(d->queue);
  if (e != CL_SUCCESS) return cl_fail(err, HURRAY_OK, "clFinish", e, "'%s'", d->name.c_str());
  std::memcpy(static_cast<char *>(a->ptr) + offset, src, static_cast<size_t>(n));
  return HURRAY_OK;
}

hurray_status classify(void *state, const void *ptr, int32_t *device, uint8_t *memory_class,
                       hurray_error *err) {
  auto *s = static_cast<State *>(state);
  if (s == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "opencl: the plugin state is NULL (probe first)");
  const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  {
    std::lock_guard<std::mutex> lock(s->mu);
    auto it = s->svm.upper_bound(p);
    if (ptr != nullptr && it != s->svm.begin()) {
      --it;
      if (p - it->first < it->second.size) {
        if (device != nullptr) *device = it->second.device;
        if (memory_class != nullptr) *memory_class = HURRAY_MEMORY_UNIFIED;
        return HURRAY_OK;
      }
    }
  }
  return fail(err, HURRAY_E_UNSUPPORTED,
              "opencl: %p is not fine-grained SVM allocated by this plugin; OpenCL cannot say "
              "what other pointers are",
              ptr);
}

// ---- events ---------------------------------------------------------------

hurray_status event_record(void *state, int32_t device, void *stream, void **event,
                           uint64_t *value, hurray_error *err) {
  const auto *s = static_cast<const State *>(state);
  const Device *d = nullptr;
  if (const hurray_status st = get_device(s, device, &d, err)) return st;
  if (event == nullptr || value == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "opencl: event_record: event and value must not be NULL");
  const Api &cl = s->cl;
  auto *queue = stream != nullptr ? static_cast<cl_command_queue>(stream) : d->queue;
  cl_event ev = nullptr;
  cl_int e = cl.clEnqueueMarkerWithWaitList(queue, 0, nullptr, &ev);
  if (e != CL_SUCCESS)
    return cl_fail(err, HURRAY_OK, "clEnqueueMarkerWithWaitList", e, "%s queue of '%s'",
                   stream != nullptr ? "the given" : "the default", d->name.c_str());
  // Submit it, so that a wait on another queue or on the host can complete.
  e = cl.clFlush(queue);
  if (e != CL_SUCCESS) {
    cl.clReleaseEvent(ev);
    return cl_fail(err, HURRAY_OK, "clFlush", e, "'%s'", d->name.c_str());
  }
  *event = ev;
  *value = 0;
  return HURRAY_OK;
}

hurray_status event_wait(void *state, int32_t device, void *event, uint64_t value, void *stream,
                         hurray_error *err) {
  const auto *s = static_cast<const State *>(state);
  const Device *d = nullptr;
  if (const hurray_status st = get_device(s, device, &d, err)) return st;
  if (event == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "opencl: event_wait: the event is NULL");
  if (value != 0)
    return fail(err, HURRAY_E_INVALID_ARGUMENT,
                "opencl: event_wait: OpenCL events are binary, the value must be 0 (not %llu)",
                static_cast<unsigned long long>(value));
  const Api &cl = s->cl;
  auto *ev = static_cast<cl_event>(event);
  if (stream == nullptr) {
    const cl_int e = cl.clWaitForEvents(1, &ev);
    if (e != CL_SUCCESS)
      return cl_fail(err, HURRAY_OK, "clWaitForEvents", e, "'%s'%s", d->name.c_str(),
                     e == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
                         ? " (the work before the event failed)"
                         : "");
    return HURRAY_OK;
  }
  const cl_int e = cl.clEnqueueBarrierWithWaitList(static_cast<cl_command_queue>(stream), 1, &ev,
                                                   nullptr);
  if (e != CL_SUCCESS)
    return cl_fail(err, HURRAY_OK, "clEnqueueBarrierWithWaitList", e, "'%s'%s", d->name.c_str(),
                   e == CL_INVALID_CONTEXT ? " (the event and the queue are of different contexts)"
                                           : "");
  return HURRAY_OK;
}

void event_release(void *state, int32_t device, void *event) {
  (void)device;
  const auto *s = static_cast<const State *>(state);
  if (s != nullptr && event != nullptr) s->cl.clReleaseEvent(static_cast<cl_event>(event));
}

// ---- native handles -------------------------------------------------------

hurray_status native(void *state, int32_t device, hurray_backend_native *out,
                     hurray_error *err) {
  const auto *s = static_cast<const State *>(state);
  const Device *d = nullptr;
  if (const hurray_status st = get_device(s, device, &d, err)) return st;
  if (out == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, "opencl: native: out must not be NULL");
  std::memset(out, 0, sizeof *out);
  out->handles[0] = d->platform;
  out->handles[1] = d->id;
  out->handles[2] = d->context;
  out->handles[3] = d->queue;
  out->handles[4] = s->lib;
  return HURRAY_OK;
}

constexpr hurray_backend_v1 make_table() noexcept {
  hurray_backend_v1 t = hurray::kit::make_table(HURRAY_DEVICE_OPENCL);
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
  HURRAY_KIT_ENTRY(t, native, native);
  return t;
}

constinit const hurray_backend_v1 kTable = make_table();

}  // namespace

extern "C" __attribute__((visibility("default"))) const hurray_backend_v1 *hurray_backend_entry(
    void) {
  return &kTable;
}
