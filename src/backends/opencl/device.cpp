// The OpenCL plugin: probe, shutdown and the description of each device.
#include "kit/identity.h"
#include "kit/probe.h"
#include "state.h"

namespace hurray::opencl {

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

using hurray::kit::note;

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
    return code_fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "clGetPlatformIDs", cl_code(e), nullptr);
  if (count == 0)
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                "[clGetPlatformIDs] no OpenCL platform (the ICD loader found no driver)");
  std::vector<cl_platform_id> platforms(count);
  e = cl.clGetPlatformIDs(count, platforms.data(), &count);
  if (e != CL_SUCCESS)
    return code_fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "clGetPlatformIDs", cl_code(e), nullptr);
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
    return refuse(err, HURRAY_E_DEVICE_UNAVAILABLE, "no usable OpenCL device: %s", why.c_str());
  return HURRAY_OK;
}

// From open_devices on the ICD loader may have loaded drivers: it stays loaded.
hurray_status probe(void **state, hurray_error *err) {
  return kit::probe_state<State>(state, err, kLoader, &State::cl, load_api, open_devices,
                                 close_devices);
}

// Allocations still alive are freed with the state, then the records.
static void free_left(State *s) {
  const uint64_t n = s->records.capacity();
  for (uint64_t i = 0; i < n; ++i) {
    Allocation *a = s->records.find(i);
    if (a != nullptr && a->live.load(std::memory_order_acquire)) free_allocation(s, a);
  }
  s->records.destroy();
}

void shutdown(void *state) { hurray::kit::shutdown_state<State>(state, free_left, close_devices); }

hurray_status device_info(void *state, int32_t device, hurray_backend_device_info *out,
                          hurray_error *err) {
  auto [refused, s, d] = kit::enter_out<const State>(state, device, out, err, "device_info: out");
  if (refused != HURRAY_OK) return refused;
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

// The device's stable identity: CL_DEVICE_UUID_KHR where the device offers
// cl_khr_device_uuid, else its PCI address (cl_khr_pci_bus_info), else NONE
// (PoCL's CPU device offers neither).
hurray_status device_identity(void *state, int32_t device, hurray_backend_device_identity *out,
                              hurray_error *err) {
  auto [refused, s, d] = kit::enter_identity<const State>(state, device, out, err);
  if (refused != HURRAY_OK) return refused;
  const Api &cl = s->cl;
  std::string ext;
  if (device_string(cl, d->id, CL_DEVICE_EXTENSIONS, &ext) != CL_SUCCESS) return HURRAY_OK;
  auto offers = [&](const char *name) {
    const size_t n = std::strlen(name);
    for (size_t at = ext.find(name); at != std::string::npos; at = ext.find(name, at + 1))
      if ((at == 0 || ext[at - 1] == ' ') && (at + n == ext.size() || ext[at + n] == ' '))
        return true;
    return false;
  };
  if (offers("cl_khr_device_uuid")) {
    cl_uchar uuid[CL_UUID_SIZE_KHR] = {};
    if (cl.clGetDeviceInfo(d->id, CL_DEVICE_UUID_KHR, sizeof uuid, uuid, nullptr) == CL_SUCCESS) {
      hurray::kit::set_identity(out, HURRAY_BACKEND_ID_UUID, uuid, sizeof uuid);
      if (out->kind != HURRAY_BACKEND_ID_NONE) return HURRAY_OK;
    }
  }
  if (offers("cl_khr_pci_bus_info")) {
    cl_device_pci_bus_info_khr pci{};
    if (cl.clGetDeviceInfo(d->id, CL_DEVICE_PCI_BUS_INFO_KHR, sizeof pci, &pci, nullptr) ==
        CL_SUCCESS)
      hurray::kit::set_pci_identity(out, pci.pci_domain, pci.pci_bus, pci.pci_device,
                                    pci.pci_function);
  }
  return HURRAY_OK;
}

}  // namespace hurray::opencl
