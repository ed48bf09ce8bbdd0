// What the tests of libhurray-level-zero.so share (level_zero_backend_test.cpp,
// level_zero_standin_test.cpp), beside what every plugin's tests share
// (tests/common/plugin_test_util.h): the plugin's table, a probed state on a
// device or on the loader's null driver, Level Zero's own functions.
#pragma once

#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <hurray_backend.h>
#include <level_zero/ze_api.h>

#include "plugin_test_util.h"

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

using gpu_test::class_name;
using gpu_test::contains;
using gpu_test::is_aligned;
using gpu_test::kAlignments;
using gpu_test::pattern;
using gpu_test::starts_with;
// An IPC handle kind: four characters, the first in the lowest byte
// (docs/backends/level-zero.md, "IPC").
constexpr uint32_t fourcc(char a, char b, char c, char d) {
  return uint32_t(uint8_t(a)) | uint32_t(uint8_t(b)) << 8 | uint32_t(uint8_t(c)) << 16 |
         uint32_t(uint8_t(d)) << 24;
}

// The plugin's table; the plugin stays loaded for the whole process.
inline const hurray_backend_v1 *plugin() {
  static const hurray_backend_v1 *t = gpu_test::load_plugin(HURRAY_LEVEL_ZERO_PLUGIN);
  return t;
}

// The stand-in tests run against the loader's null driver only.
inline const char *require_null_driver() {
  const char *env = std::getenv("ZE_ENABLE_NULL_DRIVER");
  INFO("stand-in tests run with ZE_ENABLE_NULL_DRIVER=1 and libze_null.so.1 on "
       "LD_LIBRARY_PATH (CTest sets both; see tests/backends/level-zero/CMakeLists.txt)");
  REQUIRE(env != nullptr);
  REQUIRE(std::string(env) == "1");
  return HURRAY_LEVEL_ZERO_PLUGIN;
}

// A probed plugin.
//  standin == false: without a device the test is skipped (exit code 77).
//  standin == true: the loader's null driver must be what probe finds.
struct Probed : gpu_test::Probed {
  explicit Probed(bool standin = false)
      : gpu_test::Probed(standin ? require_null_driver() : HURRAY_LEVEL_ZERO_PLUGIN,
                         standin ? nullptr : "no Level Zero device") {
    if (standin) {
      REQUIRE(count() == 1);
      REQUIRE(std::string(info(0).name) == "Null Device");  // the null driver's device
    }
  }
};

// Level Zero functions for the tests, from the plugin's dlopen handle (native [4]).
struct Ze {
  decltype(&::zeDeviceGetProperties) zeDeviceGetProperties = nullptr;
  decltype(&::zeCommandListCreateImmediate) zeCommandListCreateImmediate = nullptr;
  decltype(&::zeCommandListDestroy) zeCommandListDestroy = nullptr;
  decltype(&::zeCommandListAppendMemoryCopy) zeCommandListAppendMemoryCopy = nullptr;
  decltype(&::zeMemAllocDevice) zeMemAllocDevice = nullptr;
  decltype(&::zeMemFree) zeMemFree = nullptr;
  decltype(&::zeEventQueryStatus) zeEventQueryStatus = nullptr;
  explicit Ze(void *lib);
};

constexpr hurray::kit::Symbol<Ze> kZeSymbols[] = {
    hurray::kit::required<&Ze::zeDeviceGetProperties>,
    hurray::kit::required<&Ze::zeCommandListCreateImmediate>,
    hurray::kit::required<&Ze::zeCommandListDestroy>,
    hurray::kit::required<&Ze::zeCommandListAppendMemoryCopy>,
    hurray::kit::required<&Ze::zeMemAllocDevice>,
    hurray::kit::required<&Ze::zeMemFree>,
    hurray::kit::required<&Ze::zeEventQueryStatus>,
};
static_assert(hurray::kit::names_every_member(kZeSymbols));

inline Ze::Ze(void *lib) { gpu_test::load_symbols(lib, kZeSymbols, this); }

}  // namespace l0test
