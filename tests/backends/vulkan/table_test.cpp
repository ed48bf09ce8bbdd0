// The plugin's table, probe (and how it fails), device_info, native handles.
#include <catch2/catch.hpp>

#include "plugin_test_util.h"
#include "vk_test_util.h"

#include <cstdio>
#include <cstring>
#include <string>

using hvk::state;
using hvk::table;

TEST_CASE("vulkan: entry table: api_version size device_tag name and functions") {
  const hurray_backend_v1 &t = table();
  REQUIRE(t.name != nullptr);
  gpu_test::check_table(&t, HURRAY_DEVICE_VULKAN, "vulkan");
  gpu_test::check_ipc_entries(&t, true);
}

namespace {
struct ChildResult {
  int exit_code = 0;
  int status = -2;
  std::string message;
};
ChildResult probe_with(const char *const *env) {
  ChildResult r;
  const std::string out = hvk::probe_in_child(env, &r.exit_code);
  INFO(out);
  std::sscanf(out.c_str(), "status=%d", &r.status);
  const size_t m = out.find("message=");
  if (m != std::string::npos) {
    r.message = out.substr(m + 8);
    while (!r.message.empty() && r.message.back() == '\n') r.message.pop_back();
  }
  return r;
}
}  // namespace

TEST_CASE("vulkan: probe without a loader is DEVICE_UNAVAILABLE with the dlerror text") {
  const char *env[] = {"HURRAY_VULKAN_LOADER=/nonexistent/libvulkan.so.1", nullptr};
  const ChildResult r = probe_with(env);
  INFO(r.message);
  CHECK(r.exit_code == 0);
  CHECK(r.status == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(r.message.find("/nonexistent/libvulkan.so.1") != std::string::npos);
  CHECK(r.message.find("cannot open shared object file") != std::string::npos);
}

TEST_CASE("vulkan: probe without a driver is DEVICE_UNAVAILABLE with the vkCreateInstance error") {
  (void)state();  // skips (77) where this machine has no Vulkan at all
  const char *env[] = {"VK_ICD_FILENAMES=/nonexistent/hurray-test-icd.json",
                       "VK_DRIVER_FILES=/nonexistent/hurray-test-icd.json", nullptr};
  const ChildResult r = probe_with(env);
  INFO(r.message);
  CHECK(r.exit_code == 0);
  CHECK(r.status == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(r.message == "[vkCreateInstance] VK_ERROR_INCOMPATIBLE_DRIVER");
}

TEST_CASE("vulkan: probe finds devices and device_info describes each") {
  const hurray_backend_v1 &t = table();
  void *s = state();
  const int32_t n = t.device_count(s);
  REQUIRE(n >= 1);
  for (int32_t d = 0; d < n; ++d) {
    const hurray_backend_device_info info = hvk::info_of(d);
    std::printf("vulkan device %d: name \"%s\", memory_classes 0x%x, ipc 0x%x, "
                "min_alignment %u\n  detail: %s\n",
                static_cast<int>(d), info.name, info.memory_classes, info.ipc,
                info.min_alignment, info.detail);
    CHECK(std::strlen(info.name) > 0);
    CHECK(info.memory_classes != 0);
    CHECK((info.memory_classes & ~0x7u) == 0);  // STANDARD, HOST_PINNED, UNIFIED only
    CHECK((info.ipc & ~(HURRAY_BACKEND_IPC_MEMORY | HURRAY_BACKEND_IPC_EVENTS)) == 0);
    CHECK(info.min_alignment >= HURRAY_MIN_ALIGNMENT);
    CHECK((info.min_alignment & (info.min_alignment - 1)) == 0);
    CHECK(std::strlen(info.detail) > 0);
    CHECK(std::string(info.detail).find("STANDARD") != std::string::npos);
  }
  hurray_backend_device_info info{};
  hurray_error err{};
  // A bad ordinal is DEVICE_UNAVAILABLE, as in every plugin (the kit's check).
  CHECK(t.device_info(s, n, &info, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(t.device_info(s, -1, &info, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
}

TEST_CASE("vulkan: native handles are the device's and resolve Vulkan without libvulkan") {
  const hurray_backend_v1 &t = table();
  void *s = state();
  for (int32_t d = 0; d < t.device_count(s); ++d) {
    const hurray_backend_native n = hvk::native_of(d);
    for (int i = 0; i < 7; ++i) {
      INFO("slot " << i);
      if (i != 4) CHECK(n.handles[i] != nullptr);  // slot 4 is a family index
    }
    CHECK(n.handles[7] == nullptr);
    hvk::Vk vk(d);
    CHECK(vk.family < 64);
    CHECK(vk.family_queue_count() >= 1);
    // Slot 6 is a timeline semaphore: its counter can be read.
    uint64_t value = UINT64_MAX;
    CHECK(vk.vkGetSemaphoreCounterValue(vk.device, vk.timeline, &value) == VK_SUCCESS);
    CHECK(value != UINT64_MAX);
    // It is the event that event_record on the plugin's queue returns.
    void *event = nullptr;
    uint64_t v = 0;
    hurray_error err{};
    REQUIRE(t.event_record(s, d, nullptr, &event, &v, &err) == HURRAY_OK);
    CHECK(event == n.handles[6]);
    CHECK(v > value);
    REQUIRE(t.event_wait(s, d, event, v, nullptr, &err) == HURRAY_OK);
    CHECK(vk.vkGetSemaphoreCounterValue(vk.device, vk.timeline, &value) == VK_SUCCESS);
    CHECK(value >= v);
    t.event_release(s, d, event);
  }
  hurray_backend_native n{};
  hurray_error err{};
  CHECK(t.native(s, t.device_count(s), &n, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
}
