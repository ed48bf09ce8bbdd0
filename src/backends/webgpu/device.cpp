// The WebGPU plugin: finding the library, probe (instance, adapter, device),
// shutdown and the description of the device.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "api.h"
#include "kit/probe.h"
#include "reason.h"
#include "startup.h"
#include "state.h"

namespace hurray::webgpu {

// Where scripts/webgpu.sh installs the npm package bun-webgpu-linux-x64
// (Dawn as libwebgpu_wrapper.so), below its cache folder.
constexpr const char *kPackageFile =
    "/0.1.7/node_modules/bun-webgpu-linux-x64/libwebgpu_wrapper.so";

// The names probe() tries when HURRAY_WEBGPU_LIBRARY is not set: Dawn's and
// wgpu-native's usual sonames, the npm package's file by name (on the
// library path), then the package where scripts/webgpu.sh installs it by
// default ($HURRAY_WEBGPU_CACHE, else $HOME/.cache/hurray-webgpu).
std::vector<std::string> library_names() {
  std::vector<std::string> names{"libwebgpu_dawn.so", "libwgpu_native.so",
                                 "libwebgpu_wrapper.so"};
  const char *cache = std::getenv("HURRAY_WEBGPU_CACHE");
  const char *home = std::getenv("HOME");
  if (cache != nullptr && *cache != '\0') {
    names.push_back(std::string(cache) + kPackageFile);
  } else if (home != nullptr && *home != '\0') {
    names.push_back(std::string(home) + "/.cache/hurray-webgpu" + kPackageFile);
  }
  return names;
}

namespace {

// What a request callback (an adapter's or a device's) hands back.
template <class Handle>
struct Requested {
  uint32_t status = 0;
  Handle handle = nullptr;
  std::string message;
};

template <class Handle>
void on_requested(uint32_t status, Handle handle, WGPUStringView message, void *userdata1,
                  void *) {
  auto *r = static_cast<Requested<Handle> *>(userdata1);
  r->status = status;
  r->handle = handle;
  try {
    r->message = to_string(message);
  } catch (...) {
  }
}

struct Request {
  uint32_t feature_level;
  uint32_t backend;
};

// What to ask Dawn for, in order: HURRAY_WEBGPU_BACKEND names one backend
// (vulkan, opengles, opengl, metal, d3d12, d3d11); by default Vulkan at the
// Core feature level, then OpenGL ES at the Compatibility level (Mesa's
// llvmpipe through EGL). An adapter of Dawn's Null backend (no device at
// all) is never taken.
bool requests(std::vector<Request> *out, std::string *why) {
  const char *env = std::getenv("HURRAY_WEBGPU_BACKEND");
  if (env == nullptr || *env == '\0') {
    *out = {{HWGPU_FEATURE_LEVEL_CORE, HWGPU_BACKEND_VULKAN},
            {HWGPU_FEATURE_LEVEL_COMPATIBILITY, HWGPU_BACKEND_OPENGLES}};
    return true;
  }
  static constexpr struct {
    const char *name;
    Request r;
  } kNamed[] = {
      {"vulkan", {HWGPU_FEATURE_LEVEL_CORE, HWGPU_BACKEND_VULKAN}},
      {"opengles", {HWGPU_FEATURE_LEVEL_COMPATIBILITY, HWGPU_BACKEND_OPENGLES}},
      {"opengl", {HWGPU_FEATURE_LEVEL_COMPATIBILITY, HWGPU_BACKEND_OPENGL}},
      {"metal", {HWGPU_FEATURE_LEVEL_CORE, HWGPU_BACKEND_METAL}},
      {"d3d12", {HWGPU_FEATURE_LEVEL_CORE, HWGPU_BACKEND_D3D12}},
      {"d3d11", {HWGPU_FEATURE_LEVEL_COMPATIBILITY, HWGPU_BACKEND_D3D11}},
  };
  for (const auto &n : kNamed) {
    if (std::strcmp(env, n.name) == 0) {
      *out = {n.r};
      return true;
    }
  }
  *why = std::string("HURRAY_WEBGPU_BACKEND='") + env +
         "' is none of vulkan, opengles, opengl, metal, d3d12, d3d11";
  return false;
}

// An unavailable reason: `head` (what failed and the fix, short) then as
// much of `why` (Dawn's words) as hurray_error.message holds (reason.h).
hurray_status fail_unavailable(hurray_error *err, const std::string &head, const std::string &why) {
  const size_t prefix = std::strlen(hurray::kit::kPlugin) + 2;  // refuse's "webgpu: "
  const std::string text = clip_reason(head, why, sizeof(hurray_error::message) - 1 - prefix);
  return refuse(err, HURRAY_E_DEVICE_UNAVAILABLE, "%s", text.c_str());
}

const char *level_name(uint32_t level) noexcept {
  return level == HWGPU_FEATURE_LEVEL_CORE ? "Core" : "Compatibility";
}

// One adapter request; on success d->adapter, name, description, backend.
bool request_adapter(State *s, const Request &rq, Device *d, std::string *why) {
  const hwgpu_api &w = s->wgpu;
  WGPURequestAdapterOptions options{};
  options.featureLevel = rq.feature_level;
  options.backendType = rq.backend;
  Requested<WGPUAdapter> r;
  const WGPURequestAdapterCallbackInfo info{nullptr, HWGPU_CALLBACK_MODE_WAIT_ANY_ONLY,
                                            on_requested<WGPUAdapter>, &r, nullptr};
  hurray_error err{};
  if (wait_future(s, w.wgpuInstanceRequestAdapter(s->instance, &options, info),
                  "wgpuInstanceRequestAdapter", &err) != HURRAY_OK) {
    hurray::kit::note(why, "%s", err.message);
    return false;
  }
  if (r.status != HWGPU_STATUS_SUCCESS || r.handle == nullptr) {
    hurray::kit::note(why, "[wgpuInstanceRequestAdapter] WGPURequestAdapterStatus %u: %s (%s, %s)",
                      r.status, r.message.empty() ? "no adapter" : r.message.c_str(),
                      backend_name(rq.backend), level_name(rq.feature_level));
    if (r.handle != nullptr) w.wgpuAdapterRelease(r.handle);
    return false;
  }
  // Dawn writes the whole struct; the tail guards against a longer one.
  struct {
    WGPUAdapterInfo info;
    unsigned char tail[64];
  } out{};
  if (w.wgpuAdapterGetInfo(r.handle, &out.info) != HWGPU_STATUS_OK) {
    hurray::kit::note(why, "[wgpuAdapterGetInfo] WGPUStatus_Error (%s)", backend_name(rq.backend));
    w.wgpuAdapterRelease(r.handle);
    return false;
  }
  d->name = to_string(out.info.device);
  d->description = to_string(out.info.description);
  d->backend = out.info.backendType;
  w.wgpuAdapterInfoFreeMembers(out.info);
  if (d->backend == HWGPU_BACKEND_NULL || d->backend != rq.backend) {
    hurray::kit::note(why, "asked for %s, Dawn gave its %s backend ('%s'): refused",
                      backend_name(rq.backend), backend_name(d->backend), d->name.c_str());
    w.wgpuAdapterRelease(r.handle);
    return false;
  }
  d->adapter = r.handle;
  d->feature_level = rq.feature_level;
  return true;
}

}  // namespace

void close_devices(State *s) noexcept {
  const hwgpu_api &w = s->wgpu;
  for (Device &d : s->devices) {
    if (d.queue != nullptr) w.wgpuQueueRelease(d.queue);
    if (d.device != nullptr) {
      w.wgpuDeviceDestroy(d.device);
      w.wgpuDeviceRelease(d.device);
    }
    if (d.adapter != nullptr) w.wgpuAdapterRelease(d.adapter);
    d = Device{};
  }
  s->devices.clear();
  if (s->instance != nullptr) {
    w.wgpuInstanceProcessEvents(s->instance);  // callbacks of the destroyed device
    w.wgpuInstanceRelease(s->instance);
  }
  s->instance = nullptr;
}

hurray_status open_devices(State *s, hurray_error *err) {
  const hwgpu_api &w = s->wgpu;
  std::vector<Request> tries;
  std::string why;
  if (!requests(&tries, &why)) return refuse(err, HURRAY_E_INVALID_ARGUMENT, "%s", why.c_str());
  s->instance = w.wgpuCreateInstance(nullptr);
  if (s->instance == nullptr)
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "[wgpuCreateInstance] NULL (%s)",
                s->lib_name.c_str());
  Device d;
  bool found = false;
  for (const Request &rq : tries)
    if ((found = request_adapter(s, rq, &d, &why))) break;
  if (!found)
    return fail_unavailable(
        err,
        "no adapter from Dawn (fix: a Vulkan driver, or Mesa's libEGL for OpenGL ES; "
        "no display: EGL_PLATFORM=surfaceless or unset; HURRAY_LOG=debug shows Dawn's output)",
        why);
  Requested<WGPUDevice> r;
  const WGPURequestDeviceCallbackInfo info{nullptr, HWGPU_CALLBACK_MODE_WAIT_ANY_ONLY,
                                           on_requested<WGPUDevice>, &r, nullptr};
  const hurray_status st = wait_future(
      s, w.wgpuAdapterRequestDevice(d.adapter, nullptr, info), "wgpuAdapterRequestDevice", err);
  if (st != HURRAY_OK || r.status != HWGPU_STATUS_SUCCESS || r.handle == nullptr) {
    if (r.handle != nullptr) w.wgpuDeviceRelease(r.handle);
    w.wgpuAdapterRelease(d.adapter);
    if (st != HURRAY_OK) return st;
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                "[wgpuAdapterRequestDevice] WGPURequestDeviceStatus %u: %s ('%s', %s)", r.status,
                r.message.c_str(), d.name.c_str(), backend_name(d.backend));
  }
  d.device = r.handle;
  d.queue = w.wgpuDeviceGetQueue(d.device);
  s->devices.push_back(d);  // (reserved below: no throw after the device exists)
  return HURRAY_OK;
}

// The library probe() opens: HURRAY_WEBGPU_LIBRARY alone when set, else
// the first of library_names() that dlopen loads, held in *lib. On failure
// *why says why for each name, shortly (four of dlopen's full messages
// would not fit in hurray_error.message): "NAME: not found" for a missing
// file, dlopen's text otherwise (kit::Reasons::kShort).
bool find_library(void **lib, std::string *path, std::string *why) {
  const std::vector<std::string> names = library_names();
  std::vector<const char *> sonames;
  for (const std::string &n : names) sonames.push_back(n.c_str());
  sonames.push_back(nullptr);
  *lib = hurray::kit::open_library("HURRAY_WEBGPU_LIBRARY", sonames.data(), path, why,
                                   hurray::kit::Reasons::kShort);
  return *lib != nullptr;
}

hurray_status probe(void **state, hurray_error *err) {
  void *lib = nullptr;
  std::string path, why;
  if (state != nullptr && !find_library(&lib, &path, &why)) {
    *state = nullptr;
    // A short head: four paths of dlopen's reasons follow.
    return fail_unavailable(err, "no Dawn (fix: scripts/webgpu.sh)", why);
  }
  if (state != nullptr) choose_headless_egl();
  // Dawn, Mesa and the loaders print on stderr while adapters are found:
  // caught, and shown only under HURRAY_LOG=debug (startup.h).
  const QuietStderr quiet;
  // The kit opens it again (its own reference, kept by the state).
  const char *const sonames[] = {path.c_str(), nullptr};
  const hurray_status st = hurray::kit::probe_state<State>(
      state, err, nullptr, sonames,
      "a Dawn build of mid-2025 is needed, e.g. npm's bun-webgpu-linux-x64 0.1.7: "
      "scripts/webgpu.sh",
      &State::wgpu, load_api,
      [](State *s, hurray_error *e) {
        s->devices.reserve(1);
        s->worker.start();
        return on_worker(s, [&] { return open_devices(s, e); });
      },
      [](State *s) {
        on_worker(s, [&] { close_devices(s); });
        s->worker.stop();
      });
  if (lib != nullptr) dlclose(lib);
  return st;
}

void shutdown(void *state) {
  auto *s = static_cast<State *>(state);
  if (s == nullptr) return;
  stop_releaser(s->releaser.get());  // first: its thread pumps the device's events
  {
    std::lock_guard<std::mutex> lock(s->mu);
    on_worker(s, [&] {
      for (WGPUBuffer b : s->live) release_buffer(s, b);
      close_devices(s);
    });
    s->live.clear();
    // What is still pending is dropped (done is never called), after the
    // instance is gone: Dawn ran or dropped its callbacks by then.
    s->releaser.reset();
  }
  s->worker.stop();
  delete s;
}

int32_t device_count(void *state) { return hurray::kit::count_devices<State>(state); }

hurray_status device_info(void *state, int32_t device, hurray_backend_device_info *out,
                          hurray_error *err) {
  auto [refused, s, d] = kit::enter_out<const State>(state, device, out, err, "device_info: out");
  if (refused != HURRAY_OK) return refused;
  std::snprintf(out->name, sizeof out->name, "%s", d->name.c_str());
  out->memory_classes = 1u << HURRAY_MEMORY_STANDARD;
  out->ipc = 0;
  out->min_alignment = HURRAY_MIN_ALIGNMENT;
  std::snprintf(out->detail, sizeof out->detail,
                "Dawn %s (%.40s), %s; STANDARD: a WGPUBuffer (opaque, CopySrc|CopyDst|"
                "Storage); events: queue work-done futures; no IPC: WebGPU defines none",
                backend_name(d->backend), d->description.c_str(), level_name(d->feature_level));
  return HURRAY_OK;
}

// The device's stable identity: NONE. WGPUAdapterInfo has a vendor and a
// device ID only (two boards of one model share them) and the webgpu.h ABI
// this plugin binds exposes no UUID or PCI address, so imports (there is no
// WebGPU IPC) and hurray_device_find have nothing to match.
hurray_status device_identity(void *state, int32_t device, hurray_backend_device_identity *out,
                              hurray_error *err) {
  auto [refused, s, d] = kit::enter_identity<const State>(state, device, out, err);
  if (refused != HURRAY_OK) return refused;
  (void)s, (void)d;
  return HURRAY_OK;
}

}  // namespace hurray::webgpu
