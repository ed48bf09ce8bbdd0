// Allocation of every memory class a device serves, copies, classify,
// errors, and many threads at once.
#include <catch2/catch.hpp>

#include "vk_test_util.h"

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using hvk::state;
using hvk::table;

namespace {

const char *class_name(int c) {
  static const char *const names[] = {"STANDARD", "HOST_PINNED", "UNIFIED", "PEER"};
  return c >= 0 && c < 4 ? names[c] : "?";
}

std::vector<unsigned char> pattern(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    v[i] = static_cast<unsigned char>(x);
  }
  return v;
}

}  // namespace

TEST_CASE("vulkan: every served class allocates at alignments 64 256 4096 and 65536") {
  const hurray_backend_v1 &t = table();
  void *s = state();
  for (int32_t d = 0; d < t.device_count(s); ++d) {
    const hurray_backend_device_info info = hvk::info_of(d);
    for (uint8_t c = 0; c < 3; ++c) {
      if (!(info.memory_classes & (1u << c))) continue;
      for (uint32_t align : {64u, 256u, 4096u, 65536u}) {
        for (uint64_t size : {uint64_t{1}, uint64_t{1000}, uint64_t{1} << 20}) {
          INFO("device " << d << " class " << class_name(c) << " alignment " << align
                         << " size " << size);
          hurray_backend_allocation a{};
          hurray_error err{};
          const hurray_status st = t.alloc(s, d, c, size, align, 0, &a, &err);
          INFO(err.message);
          REQUIRE(st == HURRAY_OK);
          CHECK(a.byte_size == size);
          CHECK(a.device == d);
          CHECK(a.memory_class == c);
          CHECK(a.alignment >= align);
          CHECK((a.alignment & (a.alignment - 1)) == 0);
          CHECK(a.alignment >= info.min_alignment);
          CHECK(a.data != nullptr);
          CHECK(a.plugin_data != nullptr);
          if (c == HURRAY_MEMORY_STANDARD) {
            // Device-exclusive: the VkDeviceMemory handle, never a mapping.
            CHECK(a.flags == HURRAY_HANDOFF_OPAQUE_DATA);
            CHECK(a.host == nullptr);
          } else {
            CHECK(a.flags == 0);
            CHECK(a.host == a.data);
            CHECK(reinterpret_cast<uintptr_t>(a.data) % a.alignment == 0);
            // Every byte is writable and readable through the mapping.
            auto *p = static_cast<unsigned char *>(a.host);
            std::memset(p, 0xA5, size);
            CHECK(p[0] == 0xA5);
            CHECK(p[size - 1] == 0xA5);
          }
          int32_t cd = -1;
          uint8_t cc = 0xFF;
          CHECK(t.classify(s, a.data, &cd, &cc, &err) == HURRAY_OK);
          CHECK(cd == d);
          CHECK(cc == c);
          t.free(s, &a);
          CHECK(a.plugin_data == nullptr);
        }
      }
      // An empty buffer allocates nothing.
      hurray_backend_allocation e{};
      hurray_error err{};
      REQUIRE(t.alloc(s, d, c, 0, 64, 0, &e, &err) == HURRAY_OK);
      CHECK(e.data == nullptr);
      CHECK(e.byte_size == 0);
      t.free(s, &e);
    }
  }
  int32_t cd = -1;
  uint8_t cc = 0;
  hurray_error err{};
  int on_stack = 0;
  CHECK(t.classify(s, &on_stack, &cd, &cc, &err) == HURRAY_E_INVALID_ARGUMENT);
}

TEST_CASE("vulkan: copy_from_host then copy_to_host round-trips 1 MiB in every served class") {
  const hurray_backend_v1 &t = table();
  void *s = state();
  const size_t n = size_t{1} << 20;
  for (int32_t d = 0; d < t.device_count(s); ++d) {
    const hurray_backend_device_info info = hvk::info_of(d);
    for (uint8_t c = 0; c < 3; ++c) {
      if (!(info.memory_classes & (1u << c))) continue;
      INFO("device " << d << " class " << class_name(c));
      hurray_backend_allocation a{};
      hurray_error err{};
      REQUIRE(t.alloc(s, d, c, n, 4096, 0, &a, &err) == HURRAY_OK);
      const std::vector<unsigned char> in = pattern(n, c + 1u);
      REQUIRE(t.copy_from_host(s, &a, 0, in.data(), n, &err) == HURRAY_OK);
      std::vector<unsigned char> out(n, 0);
      REQUIRE(t.copy_to_host(s, &a, 0, out.data(), n, &err) == HURRAY_OK);
      CHECK(out == in);
      if (a.host) CHECK(std::memcmp(a.host, in.data(), n) == 0);

      // A range in the middle, at odd offsets and sizes.
      const std::vector<unsigned char> mid = pattern(777, 99);
      REQUIRE(t.copy_from_host(s, &a, 12345, mid.data(), mid.size(), &err) == HURRAY_OK);
      std::vector<unsigned char> back(777 + 2);
      REQUIRE(t.copy_to_host(s, &a, 12344, back.data(), back.size(), &err) == HURRAY_OK);
      CHECK(back.front() == in[12344]);
      CHECK(std::memcmp(back.data() + 1, mid.data(), mid.size()) == 0);
      CHECK(back.back() == in[12345 + 777]);

      // Out of range and NULL.
      CHECK(t.copy_to_host(s, &a, n - 10, out.data(), 11, &err) == HURRAY_E_INVALID_ARGUMENT);
      CHECK(std::string(err.message).find("outside") != std::string::npos);
      CHECK(t.copy_from_host(s, &a, n + 1, in.data(), 0, &err) == HURRAY_E_INVALID_ARGUMENT);
      CHECK(t.copy_to_host(s, &a, 0, nullptr, 1, &err) == HURRAY_E_INVALID_ARGUMENT);
      CHECK(t.copy_to_host(s, &a, n, out.data(), 0, &err) == HURRAY_OK);
      t.free(s, &a);
    }
  }
}

TEST_CASE("vulkan: a class the device lacks is DEVICE_UNAVAILABLE naming the class") {
  const hurray_backend_v1 &t = table();
  void *s = state();
  int absent = 0;
  for (int32_t d = 0; d < t.device_count(s); ++d) {
    const hurray_backend_device_info info = hvk::info_of(d);
    for (uint8_t c = 0; c < 3; ++c) {
      if (info.memory_classes & (1u << c)) continue;
      ++absent;
      INFO("device " << d << " class " << class_name(c));
      hurray_backend_allocation a{};
      hurray_error err{};
      CHECK(t.alloc(s, d, c, 4096, 64, 0, &a, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
      CHECK(err.status == HURRAY_E_DEVICE_UNAVAILABLE);
      INFO(err.message);
      CHECK(std::string(err.message).find(class_name(c)) != std::string::npos);
      CHECK(a.data == nullptr);
      CHECK(a.plugin_data == nullptr);
    }
    // PEER and unknown classes are not Vulkan classes at all.
    for (uint8_t c : {uint8_t{HURRAY_MEMORY_PEER}, uint8_t{0x07}, uint8_t{0xF0}}) {
      hurray_backend_allocation a{};
      hurray_error err{};
      CHECK(t.alloc(s, d, c, 4096, 64, 0, &a, &err) == HURRAY_E_MEMORY_CLASS);
      if (c == HURRAY_MEMORY_PEER) CHECK(std::string(err.message).find("PEER") != std::string::npos);
    }
  }
  if (!absent) WARN("every device serves every Vulkan memory class: nothing absent to check");
}

TEST_CASE("vulkan: bad arguments are INVALID_ARGUMENT with a message, a bad ordinal DEVICE_UNAVAILABLE") {
  const hurray_backend_v1 &t = table();
  void *s = state();
  hurray_backend_allocation a{};
  hurray_error err{};
  CHECK(t.alloc(s, t.device_count(s), 0, 64, 64, 0, &a, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(std::string(err.message).find("does not exist") != std::string::npos);
  const hurray_backend_device_info info = hvk::info_of(0);
  uint8_t c = 0;
  while (!(info.memory_classes & (1u << c))) ++c;
  CHECK(t.alloc(s, 0, c, 64, 100, 0, &a, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(std::string(err.message).find("power of two") != std::string::npos);
  CHECK(t.alloc(s, 0, c, 64, 64, 0x80, &a, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(t.alloc(s, 0, c, 64, 64, 0, nullptr, &err) == HURRAY_E_INVALID_ARGUMENT);
  // err may be NULL.
  CHECK(t.alloc(s, 0, c, 64, 100, 0, &a, nullptr) == HURRAY_E_INVALID_ARGUMENT);
  void *event = nullptr;
  uint64_t value = 0;
  CHECK(t.event_record(s, -1, nullptr, &event, &value, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(t.event_wait(s, 0, nullptr, 1, nullptr, &err) == HURRAY_E_INVALID_ARGUMENT);
  t.free(s, nullptr);            // harmless
  t.event_release(s, 0, nullptr);  // harmless
}

TEST_CASE("vulkan: threads allocate copy and record events at once") {
  const hurray_backend_v1 &t = table();
  void *s = state();
  const hurray_backend_device_info info = hvk::info_of(0);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      for (int round = 0; round < 10; ++round) {
        for (uint8_t c = 0; c < 3; ++c) {
          if (!(info.memory_classes & (1u << c))) continue;
          hurray_backend_allocation a{};
          hurray_error err{};
          const size_t n = 65536 + static_cast<size_t>(i) * 100;
          if (t.alloc(s, 0, c, n, 4096, 0, &a, &err) != HURRAY_OK) {
            ++failures;
            continue;
          }
          const std::vector<unsigned char> in = pattern(n, static_cast<unsigned>(i * 100 + round));
          std::vector<unsigned char> out(n);
          void *event = nullptr;
          uint64_t value = 0;
          if (t.copy_from_host(s, &a, 0, in.data(), n, &err) != HURRAY_OK ||
              t.event_record(s, 0, nullptr, &event, &value, &err) != HURRAY_OK ||
              t.event_wait(s, 0, event, value, nullptr, &err) != HURRAY_OK ||
              t.copy_to_host(s, &a, 0, out.data(), n, &err) != HURRAY_OK || out != in)
            ++failures;
          if (event) t.event_release(s, 0, event);
          t.free(s, &a);
        }
      }
    });
  }
  for (auto &th : threads) th.join();
  CHECK(failures.load() == 0);
}
