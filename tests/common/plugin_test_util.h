// What the CUDA and HIP plugin tests share: loading a plugin as libhurray's
// loader does (dlopen, then its one entry symbol), a probed plugin that
// skips the test (exit code 77, the reason printed) when the machine has no
// device, one probe's answer, and the check of a full entry table.
// Header-only, for Catch2 test programs.
#pragma once

#include <dlfcn.h>
#include <hurray_backend.h>

#include "../../src/backends/class_name.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

inline bool starts_with(const std::string &s, const std::string &prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// Probe once and return the status; *message gets the error text. A failed
// probe leaves no state and fills the whole error: its status, no rule,
// ERROR, no buffer index or byte offset.
inline hurray_status probe_once(const hurray_backend_v1 *b, std::string *message) {
  void *state = nullptr;
  hurray_error err;
  std::memset(&err, 0x55, sizeof err);
  const hurray_status st = b->probe(&state, &err);
  if (st == HURRAY_OK) {
    REQUIRE(state != nullptr);
    b->shutdown(state);
    message->clear();
  } else {
    CHECK(state == nullptr);
    CHECK(err.status == st);
    CHECK(err.rule == HURRAY_RULE_NONE);
    CHECK(err.severity == HURRAY_SEVERITY_ERROR);
    CHECK(err.buffer_index == -1);
    CHECK(err.byte_offset == -1);
    *message = err.message;
  }
  return st;
}

// The table of a plugin that fills every entry (the CUDA and HIP plugins):
// its version, size, tag and name, every entry set, the reserved fields
// zero; before probe nothing works and nothing crashes, and release_after
// calls no done on its error.
inline void check_full_table(const hurray_backend_v1 *b, uint8_t tag, const char *name) {
  CHECK(b->api_version == HURRAY_BACKEND_API_VERSION);
  CHECK(b->size == sizeof(hurray_backend_v1));
  CHECK(b->device_tag == tag);
  CHECK(std::string(b->name) == name);
  CHECK(b->probe != nullptr);
  CHECK(b->shutdown != nullptr);
  CHECK(b->device_count != nullptr);
  CHECK(b->device_info != nullptr);
  CHECK(b->alloc != nullptr);
  CHECK(b->free != nullptr);
  CHECK(b->copy_to_host != nullptr);
  CHECK(b->copy_from_host != nullptr);
  CHECK(b->classify != nullptr);
  CHECK(b->event_record != nullptr);
  CHECK(b->event_wait != nullptr);
  CHECK(b->event_release != nullptr);
  CHECK(b->ipc_export_memory != nullptr);
  CHECK(b->ipc_import_memory != nullptr);
  CHECK(b->ipc_export_event != nullptr);
  CHECK(b->ipc_import_event != nullptr);
  CHECK(b->native != nullptr);
  CHECK(b->device_identity != nullptr);
  CHECK(b->release_after != nullptr);
  for (void *r : b->reserved) CHECK(r == nullptr);
  for (uint8_t r : b->reserved0) CHECK(r == 0);
  CHECK(b->device_count(nullptr) == 0);
  hurray_error err{};
  hurray_backend_allocation a{};
  CHECK(b->alloc(nullptr, 0, 0, 64, 64, 0, &a, &err) == HURRAY_E_INVALID_ARGUMENT);
  int calls = 0;
  if (b->release_after != nullptr)
    CHECK(b->release_after(nullptr, 0, nullptr, nullptr, 0, count_call, &calls, &err) ==
          HURRAY_E_INVALID_ARGUMENT);
  CHECK(calls == 0);  // never on an error
  b->shutdown(nullptr);
}

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
