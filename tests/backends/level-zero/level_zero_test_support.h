// What the tests of libhurray-level-zero.so share (level_zero_backend_test.cpp,
// level_zero_standin_test.cpp): the plugin's table, a probed state, Level
// Zero's own functions through dlsym, byte patterns.
#pragma once

#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <hurray_backend.h>
#include <level_zero/ze_api.h>

#include "../../../src/backends/class_name.h"
#include "../../common/plugin_test_util.h"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

namespace l0test {

constexpr int kSkipCode = 77;
constexpr uint32_t kAlignments[] = {64, 256, 4096, 65536};

inline bool is_aligned(const void *p, uint64_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0; }
inline bool starts_with(const std::string &s, const char *prefix) { return s.rfind(prefix, 0) == 0; }
inline bool contains(const std::string &s, const char *part) { return s.find(part) != std::string::npos; }
// An IPC handle kind: four characters, the first in the lowest byte
// (docs/backends/level-zero.md, "IPC").
constexpr uint32_t fourcc(char a, char b, char c, char d) {
  return uint32_t(uint8_t(a)) | uint32_t(uint8_t(b)) << 8 | uint32_t(uint8_t(c)) << 16 |
         uint32_t(uint8_t(d)) << 24;
}

using hurray::plugin::class_name;

// The plugin's table; the plugin stays loaded for the whole process.
inline const hurray_backend_v1 *plugin() {
  static void *handle = dlopen(HURRAY_LEVEL_ZERO_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) FAIL("dlopen " HURRAY_LEVEL_ZERO_PLUGIN ": " << dlerror());
  auto entry = reinterpret_cast<hurray_backend_entry_fn>(dlsym(handle, HURRAY_BACKEND_ENTRY_SYMBOL));
  REQUIRE(entry != nullptr);
  const hurray_backend_v1 *table = entry();
  REQUIRE(table != nullptr);
  return table;
}

// A probed plugin.
struct Probed {
  const hurray_backend_v1 *b = plugin();
  void *state = nullptr;

  // standin == false: without a device the test is skipped (exit code 77).
  // standin == true: the loader's null driver must be what probe finds.
  explicit Probed(bool standin = false) {
    if (standin) {
      const char *env = std::getenv("ZE_ENABLE_NULL_DRIVER");
      INFO("stand-in tests run with ZE_ENABLE_NULL_DRIVER=1 and libze_null.so.1 on "
           "LD_LIBRARY_PATH (CTest sets both; see tests/backends/level-zero/CMakeLists.txt)");
      REQUIRE(env != nullptr);
      REQUIRE(std::string(env) == "1");
    }
    hurray_error err{};
    const hurray_status st = b->probe(&state, &err);
    if (st == HURRAY_E_DEVICE_UNAVAILABLE && !standin) {
      std::printf("SKIPPED: no Level Zero device: %s\n", err.message);
      std::fflush(stdout);
      std::exit(kSkipCode);
    }
    INFO("probe: " << err.message);
    REQUIRE(st == HURRAY_OK);
    REQUIRE(state != nullptr);
    if (standin) {
      REQUIRE(count() == 1);
      REQUIRE(std::string(info(0).name) == "Null Device");  // the null driver's device
    }
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
  std::vector<uint8_t> classes(int32_t dev) const {
    std::vector<uint8_t> out;
    const uint32_t mask = info(dev).memory_classes;
    for (uint8_t mc = 0; mc < 32; ++mc)
      if (mask & (1u << mc)) out.push_back(mc);
    return out;
  }
  hurray_backend_allocation alloc(int32_t dev, uint8_t mc, uint64_t size, uint32_t align) const {
    hurray_backend_allocation a{};
    hurray_error err{};
    const hurray_status st = b->alloc(state, dev, mc, size, align, 0, &a, &err);
    INFO(class_name(mc) << " " << size << " bytes aligned to " << align << ": " << err.message);
    REQUIRE(st == HURRAY_OK);
    return a;
  }
  void *record(int32_t dev, void *stream) const {
    void *ev = nullptr;
    uint64_t value = 99;
    hurray_error err{};
    const hurray_status st = b->event_record(state, dev, stream, &ev, &value, &err);
    INFO(err.message);
    REQUIRE(st == HURRAY_OK);
    REQUIRE(ev != nullptr);
    CHECK(value == 0);
    return ev;
  }
};

// Level Zero functions for the tests, from the plugin's dlopen handle (native [4]).
#define TEST_ZE_FUNCTIONS(XX)        \
  XX(zeDeviceGetProperties)          \
  XX(zeCommandListCreateImmediate)   \
  XX(zeCommandListDestroy)           \
  XX(zeCommandListAppendMemoryCopy)  \
  XX(zeMemAllocDevice)               \
  XX(zeMemFree)                      \
  XX(zeEventQueryStatus)

struct Ze {
#define TEST_ZE_XX_(name) decltype(&::name) name = nullptr;
  TEST_ZE_FUNCTIONS(TEST_ZE_XX_)
#undef TEST_ZE_XX_
  explicit Ze(void *lib) {
    REQUIRE(lib != nullptr);
#define TEST_ZE_XX_(name)                                           \
  name = reinterpret_cast<decltype(&::name)>(dlsym(lib, #name));    \
  INFO("dlsym " #name);                                             \
  REQUIRE(name != nullptr);
    TEST_ZE_FUNCTIONS(TEST_ZE_XX_)
#undef TEST_ZE_XX_
  }
};

inline std::vector<uint8_t> pattern(size_t n, unsigned seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>((i * 131 + seed) ^ (i >> 9));
  return v;
}

}  // namespace l0test
