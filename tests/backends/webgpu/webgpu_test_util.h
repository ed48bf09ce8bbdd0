// What the tests of libhurray-webgpu.so share, beside plugin_test_util.h:
// the plugin's table (dlopened as libhurray's loader does it), a probed
// state, and Dawn itself reached through dlsym on native slot 4 (the
// program links neither Dawn nor libhurray). A WebGPU device is required: the tests run where CI installed
// the package (scripts/webgpu.sh), so a failed probe fails the test, it is
// never skipped.
#pragma once

#include <dlfcn.h>
#include <hurray_backend.h>
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kit/library.h"
#include "plugin_test_util.h"
#include "webgpu/api.h"

namespace webgpu_test {

using gpu_test::pattern;

// The plugin's table; the plugin stays loaded for the whole process.
inline const hurray_backend_v1 *plugin() {
  static const hurray_backend_v1 *t = gpu_test::load_plugin(HURRAY_WEBGPU_PLUGIN);
  return t;
}

// A probed plugin and its device 0's native handles and Dawn functions.
struct Probed {
  const hurray_backend_v1 *b = plugin();
  void *state = nullptr;
  hurray_backend_native native{};
  hwgpu_api w{};

  Probed() {
    // OpenGL ES directly, the device CI has (unless the caller picks one):
    // the default order (Vulkan first) is what the conformance suite and
    // the hurray-inspect test probe. (Dawn's Vulkan probe on Debian 12 also
    // leaves a block of the Vulkan ICD behind: dawn.lsan.supp.)
    setenv("HURRAY_WEBGPU_BACKEND", "opengles", 0);
    hurray_error err{};
    const hurray_status st = b->probe(&state, &err);
    INFO("probe: " << err.message);
    REQUIRE(st == HURRAY_OK);
    REQUIRE(state != nullptr);
    REQUIRE(b->device_count(state) == 1);
    REQUIRE(b->native(state, 0, &native, &err) == HURRAY_OK);
    void *lib = native.handles[4];
    REQUIRE(lib != nullptr);
    const hurray::kit::Lookup in_dawn{
        [](void *dawn, const char *name) noexcept {
          return reinterpret_cast<hurray::kit::AnyFunction>(dlsym(dawn, name));
        },
        lib};
    hurray::kit::resolve_symbols<hwgpu_api>(in_dawn, hurray::webgpu::kFunctions, &w);
  }
  ~Probed() { b->shutdown(state); }
  Probed(const Probed &) = delete;
  Probed &operator=(const Probed &) = delete;

  WGPUInstance instance() const { return static_cast<WGPUInstance>(native.handles[0]); }
  WGPUDevice device() const { return static_cast<WGPUDevice>(native.handles[2]); }
  WGPUQueue queue() const { return static_cast<WGPUQueue>(native.handles[3]); }

  hurray_backend_allocation alloc(uint64_t size, uint32_t align = 64) const {
    hurray_backend_allocation a{};
    hurray_error err{};
    const hurray_status st =
        b->alloc(state, 0, HURRAY_MEMORY_STANDARD, size, align, 0, &a, &err);
    INFO("alloc " << size << ": " << err.message);
    REQUIRE(st == HURRAY_OK);
    return a;
  }
  // A STANDARD allocation holding in (written through copy_from_host).
  hurray_backend_allocation alloc_with(const std::vector<unsigned char> &in) const {
    hurray_backend_allocation a = alloc(in.size());
    write(a, 0, in.data(), in.size());
    return a;
  }
  // An event recorded on stream (NULL or the device queue); *value set.
  void *record(void *stream, uint64_t *value) const {
    void *event = nullptr;
    hurray_error err{};
    const hurray_status st = b->event_record(state, 0, stream, &event, value, &err);
    INFO("event_record: " << err.message);
    REQUIRE(st == HURRAY_OK);
    return event;
  }
  void write(hurray_backend_allocation &a, uint64_t off, const void *src, uint64_t n) const {
    hurray_error err{};
    const hurray_status st = b->copy_from_host(state, &a, off, src, n, &err);
    INFO("copy_from_host " << off << "+" << n << ": " << err.message);
    REQUIRE(st == HURRAY_OK);
  }
  void read(const hurray_backend_allocation &a, uint64_t off, void *dst, uint64_t n) const {
    hurray_error err{};
    const hurray_status st = b->copy_to_host(state, &a, off, dst, n, &err);
    INFO("copy_to_host " << off << "+" << n << ": " << err.message);
    REQUIRE(st == HURRAY_OK);
  }
};

}  // namespace webgpu_test
