// What only the HIP plugin has, through its function table (dlopened; this
// program links neither libamdhip64 nor libhurray) and in its pure logic
// (src/backends/hip/hip_api.cpp): probe's answer on this machine, the error
// text, reading hipPointerGetAttributes across HIP versions, the runtime
// functions by name. What every plugin on src/backends/gpu-stream has is
// tested in tests/backends/gpu-stream/gpu_stream_plugin_test.cpp, built into
// the same program.
//
// Debian's libamdhip64 is installed in CI but there is no AMD GPU: probe
// must say hipGetDeviceCount's error by name.
#include <dlfcn.h>
#include <hip/hip_runtime_api.h>
#include <hurray_backend.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kit/errors.h"
#include "kit/member_name.h"
#include "plugin_under_test.h"

using gpu_test::starts_with;

// ---- probe on this machine ------------------------------------------------------

// What probe must have answered on this machine (the test is in
// gpu_stream_plugin_test.cpp), found out independently.
void plugin_under_test::check_probe_on_this_machine(hurray_status st,
                                                     const std::string &message) {
  void *lib = nullptr;
  std::string why;
  for (const char *name : {"libamdhip64.so", "libamdhip64.so.5", "libamdhip64.so.6"}) {
    dlerror();
    lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib != nullptr) break;
    why += (why.empty() ? "" : "; ") + std::string(dlerror());
  }
  if (lib == nullptr) {
    CHECK(st == HURRAY_E_DEVICE_UNAVAILABLE);
    CHECK(message == why);  // each name tried, with its dlerror() text
    return;
  }
  auto count = reinterpret_cast<hipError_t (*)(int *)>(dlsym(lib, "hipGetDeviceCount"));
  auto name_of = reinterpret_cast<const char *(*)(hipError_t)>(dlsym(lib, "hipGetErrorName"));
  REQUIRE(count != nullptr);
  int n = 0;
  const hipError_t r = count(&n);
  if (r != hipSuccess) {
    CHECK(st == HURRAY_E_DEVICE_UNAVAILABLE);
    const std::string name = name_of != nullptr ? name_of(r) : hurray::hip::error_name(r);
    INFO("hipGetDeviceCount returned " << static_cast<int>(r));
    CHECK(starts_with(message, "[hipGetDeviceCount] " + name + ": "));
    return;
  }
  if (n == 0) {
    CHECK(st == HURRAY_E_DEVICE_UNAVAILABLE);
    CHECK(starts_with(message, "[hipGetDeviceCount] no HIP device"));
    return;
  }
  INFO(message);
  CHECK(st == HURRAY_OK);
}

// ---- pure logic -------------------------------------------------------------------

namespace {
const char *fake_name(hipError_t e) {
  return e == hipErrorNoDevice ? "hipErrorNoDevice" : "hipErrorUnknown";
}
// HIP 5's hipGetErrorString answers the name again.
const char *fake_string_is_name(hipError_t e) { return fake_name(e); }
const char *fake_string_words(hipError_t) { return "the runtime's own words"; }
}  // namespace

TEST_CASE("hip: the error text is the runtime's when it says more, else the plugin's") {
  hurray::hip::ErrorText t;
  hurray::hip::error_text(nullptr, hipErrorNoDevice, &t);
  CHECK(std::string(t.name) == "hipErrorNoDevice");
  REQUIRE(t.description != nullptr);

  hurray::hip::Api api;
  api.hipGetErrorName = fake_name;
  api.hipGetErrorString = fake_string_is_name;
  hurray::hip::error_text(&api, hipErrorNoDevice, &t);
  CHECK(std::string(t.name) == "hipErrorNoDevice");
  CHECK(std::string(t.description) == "the HIP runtime found no usable GPU");  // not the name again
  hurray::hip::error_text(&api, 12345, &t);  // HIP names it hipErrorUnknown: keep the number
  CHECK(std::string(t.name) == "HIP error 12345");
  api.hipGetErrorString = fake_string_words;
  hurray::hip::error_text(&api, hipErrorNoDevice, &t);
  CHECK(std::string(t.description) == "the runtime's own words");

  hurray::hip::error_text(nullptr, hipErrorOutOfMemory, &t);
  hurray_error err;
  hurray::kit::vendor_fail(&err, hurray::hip::status_of(hipErrorOutOfMemory), "hipMalloc", t.name,
                           t.description, "%d bytes", 4096);
  CHECK(std::string(err.message) == "[hipMalloc] hipErrorOutOfMemory: out of memory (4096 bytes)");
  CHECK(err.status == HURRAY_E_OUT_OF_MEMORY);
}

namespace {
// hipPointerGetAttributes' memory type (and isManaged) in one HIP version,
// and the class it reads as (kNone: no class).
struct PointerType {
  int runtime_major, memory_type, is_managed;
  uint8_t memory_class;
};
constexpr uint8_t kNone = 0xFF;
constexpr PointerType kPointerTypes[] = {
    // HIP 5: Host 0, Device 1, Array 2, Unified 3; managed memory reads as
    // device + isManaged.
    {5, 0, 0, HURRAY_MEMORY_HOST_PINNED}, {5, 1, 0, HURRAY_MEMORY_STANDARD}, {5, 2, 0, kNone},
    {5, 3, 0, HURRAY_MEMORY_UNIFIED}, {5, 1, 1, HURRAY_MEMORY_UNIFIED},
    // HIP 6: Unregistered 0, Host 1, Device 2, Managed 3, Array 10, Unified 11.
    {6, 0, 0, kNone}, {6, 1, 0, HURRAY_MEMORY_HOST_PINNED}, {6, 2, 0, HURRAY_MEMORY_STANDARD},
    {6, 3, 0, HURRAY_MEMORY_UNIFIED}, {6, 10, 0, kNone}, {7, 11, 0, HURRAY_MEMORY_UNIFIED},
    {5, 42, 0, kNone}};
}  // namespace

TEST_CASE("hip: hipPointerGetAttributes reads by HIP version (6 renumbered hipMemoryType)") {
  for (const PointerType &t : kPointerTypes) {
    INFO("HIP " << t.runtime_major << ", memory type " << t.memory_type << ", isManaged "
                << t.is_managed);
    uint8_t mc = 0xFF;
    if (t.memory_class == kNone) {
      CHECK_FALSE(hurray::hip::class_of_pointer(t.runtime_major, t.memory_type, t.is_managed, &mc));
      continue;
    }
    REQUIRE(hurray::hip::class_of_pointer(t.runtime_major, t.memory_type, t.is_managed, &mc));
    CHECK(mc == t.memory_class);
  }
  // The header this is built with is HIP 5's numbering.
  CHECK(static_cast<int>(hipMemoryTypeHost) == 0);
  CHECK(static_cast<int>(hipMemoryTypeDevice) == 1);
}

namespace {

using hurray::hip::Api;

// One VMM call of Api (gpu-stream/runtime_vmm.cpp): resolved in `loaded` (when not NULL),
// and optional in load_api's table.
template <auto Function>
void check_vmm_function(const Api *loaded) {
  const std::string name = hurray::kit::member_name<Function>;
  INFO(name);
  if (loaded != nullptr) CHECK(loaded->*Function != nullptr);
  const auto table = hurray::hip::symbols();
  const auto symbol =
      std::find_if(table.begin(), table.end(), [&](const auto &s) { return s.name == name; });
  REQUIRE(symbol != table.end());
  CHECK_FALSE(symbol->required);
}
template <auto... Functions>
void check_vmm_functions(const Api *loaded) {
  (check_vmm_function<Functions>(loaded), ...);
}

}  // namespace

TEST_CASE("hip: the runtime functions are resolved by name") {
  CHECK(plugin_under_test::first_missing_in_libm() == "hipGetDeviceCount");
  Api api;
  const Api *loaded = nullptr;
  void *hip = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_LOCAL);
  if (hip == nullptr) hip = dlopen("libamdhip64.so", RTLD_NOW | RTLD_LOCAL);
  if (hip != nullptr) {  // Debian's HIP 5.2 has every one
    CHECK(hurray::hip::load_api(hip, &api) == nullptr);
    CHECK(api.hipMemGetAddressRange != nullptr);
    loaded = &api;
  }
  // the VMM calls (hip/vmm.cpp): HIP 5.1 and later export every one, and
  // none is required: a runtime without them loads, with no VMM
  check_vmm_functions<&Api::hipMemCreate, &Api::hipMemRelease, &Api::hipMemAddressReserve,
                      &Api::hipMemAddressFree, &Api::hipMemMap, &Api::hipMemUnmap,
                      &Api::hipMemSetAccess, &Api::hipMemGetAllocationGranularity,
                      &Api::hipMemRetainAllocationHandle, &Api::hipMemExportToShareableHandle,
                      &Api::hipMemImportFromShareableHandle>(loaded);
}
