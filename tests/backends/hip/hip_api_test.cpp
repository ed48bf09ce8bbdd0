// The HIP plugin through libhurray's public API (this program links
// libhurray, which finds libhurray-hip.so in the hurray/ folder next to
// itself): device 0x02 is counted where a GPU exists, and is
// HURRAY_E_DEVICE_UNAVAILABLE with the reason where not. The allocation
// test needs a device (exit 77 without one).
#include <dlfcn.h>
#include <hip/hip_runtime_api.h>
#include <hurray.h>
#include <hurray_backend.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "plugin_test_util.h"

TEST_CASE("hip: public API: hurray_device_count(0x02) counts devices or says why not") {
  int32_t n = -1;
  hurray_error err{};
  const hurray_status st = hurray_device_count(nullptr, HURRAY_DEVICE_ROCM, &n, &err);
  std::printf("hurray_device_count(0x02): %s, %d device(s)%s%s\n", hurray_status_name(st), n,
              st != HURRAY_OK ? ": " : "", st != HURRAY_OK ? err.message : "");
  void *lib = nullptr;
  for (const char *name : {"libamdhip64.so", "libamdhip64.so.5", "libamdhip64.so.6"})
    if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
  const std::string prefix = "device_tag 0x02 ROCM is unavailable: hip: ";
  if (lib == nullptr) {
    CHECK(st == HURRAY_E_DEVICE_UNAVAILABLE);
    CHECK(std::string(err.message).find(prefix + "libamdhip64.so: ") == 0);
    return;
  }
  auto count = reinterpret_cast<hipError_t (*)(int *)>(dlsym(lib, "hipGetDeviceCount"));
  REQUIRE(count != nullptr);
  int devices = 0;
  if (count(&devices) != hipSuccess || devices == 0) {
    CHECK(st == HURRAY_E_DEVICE_UNAVAILABLE);
    CHECK(n == 0);
    CHECK(std::string(err.message).find(prefix + "[hipGetDeviceCount] ") == 0);
  } else {
    CHECK(st == HURRAY_OK);
    CHECK(n >= 1);
  }
  // release_after: deferred where there is a device (hipLaunchHostFunc or
  // hipStreamAddCallback); without one the query is refused the same way.
  int deferred = -1;
  hurray_error derr{};
  CHECK(hurray_device_release_after_deferred(nullptr, HURRAY_DEVICE_ROCM, 0, &deferred, &derr) ==
        st);
  CHECK(deferred == (st == HURRAY_OK ? 1 : 0));
  if (st != HURRAY_OK) CHECK(std::string(derr.message) == err.message);
}

TEST_CASE("hip: public API: a buffer allocated on device 0x02 round-trips its bytes") {
  int32_t n = 0;
  hurray_error err{};
  if (hurray_device_count(nullptr, HURRAY_DEVICE_ROCM, &n, &err) != HURRAY_OK)
    gpu_test::skip("no HIP device", err.message);
  hurray_alloc_desc desc = HURRAY_ALLOC_DESC_INIT;
  desc.byte_size = 1 << 20;
  desc.alignment = 4096;
  desc.device_tag = HURRAY_DEVICE_ROCM;
  desc.memory_class = HURRAY_MEMORY_STANDARD;
  hurray_buffer *b = nullptr;
  REQUIRE(hurray_buffer_alloc(nullptr, &desc, &b, &err) == HURRAY_OK);
  const auto in = gpu_test::pattern(desc.byte_size, 9);
  std::vector<unsigned char> out(in.size());
  REQUIRE(hurray_buffer_copy_from_host(b, 0, in.data(), in.size(), &err) == HURRAY_OK);
  REQUIRE(hurray_buffer_copy_to_host(b, 0, out.data(), out.size(), &err) == HURRAY_OK);
  CHECK(out == in);
  hurray_buffer_unref(b);
}
