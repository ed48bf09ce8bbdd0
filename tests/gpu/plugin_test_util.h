// What the CUDA and HIP plugin tests share: loading a plugin as libhurray's
// loader does (dlopen, then its one entry symbol), and a probed plugin that
// skips the test (exit code 77, the reason printed) when the machine has no
// device. Header-only, for Catch2 test programs.
#pragma once

#include <dlfcn.h>
#include <hurray_backend.h>

#include "../../src/backends/class_name.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace gpu_test {

constexpr int kSkipCode = 77;

// The plugin's table; the plugin stays loaded for the whole process.
inline const hurray_backend_v1 *load_plugin(const char *path) {
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) FAIL("dlopen " << path << ": " << dlerror());
  auto entry =
      reinterpret_cast<hurray_backend_entry_fn>(dlsym(handle, HURRAY_BACKEND_ENTRY_SYMBOL));
  REQUIRE(entry != nullptr);
  const hurray_backend_v1 *table = entry();
  REQUIRE(table != nullptr);
  return table;
}

// Print why and leave with 77, which CTest reports as skipped (never passed).
[[noreturn]] inline void skip(const char *what, const char *why) {
  std::printf("SKIPPED: %s: %s\n", what, why);
  std::fflush(stdout);
  std::exit(kSkipCode);
}

using hurray::plugin::class_name;

// A probed plugin; without a device the test is skipped.
struct Probed {
  const hurray_backend_v1 *b;
  void *state = nullptr;

  Probed(const char *path, const char *no_device) : b(load_plugin(path)) {
    hurray_error err{};
    const hurray_status st = b->probe(&state, &err);
    if (st == HURRAY_E_DEVICE_UNAVAILABLE) skip(no_device, err.message);
    INFO("probe: " << err.message);
    REQUIRE(st == HURRAY_OK);
    REQUIRE(state != nullptr);
  }
  ~Probed() { b->shutdown(state); }
  Probed(const Probed &) = delete;
  Probed &operator=(const Probed &) = delete;

  int32_t count() const { return b->device_count(state); }
  hurray_backend_device_info info(int32_t dev) const {
    hurray_backend_device_info out{};
    hurray_error err{};
    const hurray_status st = b->device_info(state, dev, &out, &err);
    INFO(err.message);
    REQUIRE(st == HURRAY_OK);
    return out;
  }
  hurray_backend_native native(int32_t dev) const {
    hurray_backend_native out{};
    hurray_error err{};
    const hurray_status st = b->native(state, dev, &out, &err);
    INFO(err.message);
    REQUIRE(st == HURRAY_OK);
    return out;
  }
  hurray_backend_allocation alloc(int32_t dev, uint8_t mc, uint64_t size, uint32_t align,
                                  uint32_t flags = 0) const {
    hurray_backend_allocation a{};
    hurray_error err{};
    const hurray_status st = b->alloc(state, dev, mc, size, align, flags, &a, &err);
    INFO(class_name(mc) << " " << size << " bytes aligned to " << align << ": " << err.message);
    REQUIRE(st == HURRAY_OK);
    return a;
  }
};

// Frees an allocation when the test leaves its scope, passed or not.
struct AllocGuard {
  const Probed &p;
  hurray_backend_allocation a;
  ~AllocGuard() { p.b->free(p.state, &a); }
};

// A release_after done that counts its calls into the int at user.
inline void count_call(void *user) { ++*static_cast<int *>(user); }

inline std::vector<unsigned char> pattern(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>((i * 131 + seed) ^ (i >> 9));
  return v;
}

// Set an environment variable for the life of the object, then restore it.
struct ScopedEnv {
  std::string name;
  bool had = false;
  std::string old;
  ScopedEnv(const char *n, const char *value) : name(n) {
    if (const char *v = std::getenv(n)) {
      had = true;
      old = v;
    }
    if (value != nullptr)
      setenv(n, value, 1);
    else
      unsetenv(n);
  }
  ~ScopedEnv() {
    if (had)
      setenv(name.c_str(), old.c_str(), 1);
    else
      unsetenv(name.c_str());
  }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;
};

}  // namespace gpu_test
