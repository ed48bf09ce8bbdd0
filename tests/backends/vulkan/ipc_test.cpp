// IPC: shareable memory exported as an fd and imported (here, in the same
// process) as a second allocation of the same bytes; event export where the
// device can, and a clear refusal where it cannot.
#include <catch2/catch.hpp>

#include "vk_test_util.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using hvk::state;
using hvk::table;

namespace {
std::vector<unsigned char> bytes(size_t n, unsigned char seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(i * 31 + seed);
  return v;
}
// An IPC handle kind: four characters, the first in the lowest byte
// (docs/backends/vulkan.md, "IPC").
constexpr uint32_t fourcc(char a, char b, char c, char d) {
  return uint32_t(uint8_t(a)) | uint32_t(uint8_t(b)) << 8 | uint32_t(uint8_t(c)) << 16 |
         uint32_t(uint8_t(d)) << 24;
}
}  // namespace

TEST_CASE("vulkan: shareable memory exported as an fd imports as a second allocation") {
  const hurray_backend_v1 &t = table();
  void *s = state();
  const size_t n = 64 * 1024 + 100;
  int checked = 0;
  for (int32_t d = 0; d < t.device_count(s); ++d) {
    const hurray_backend_device_info info = hvk::info_of(d);
    hurray_error err{};
    if (!(info.ipc & HURRAY_BACKEND_IPC_MEMORY)) {
      hurray_backend_allocation a{};
      CHECK(t.alloc(s, d, 0, n, 4096, HURRAY_ALLOC_SHAREABLE, &a, &err) == HURRAY_E_UNSUPPORTED);
      WARN("device " << d << " cannot share memory: " << err.message);
      continue;
    }
    for (uint8_t c = 0; c < 3; ++c) {
      if (!(info.memory_classes & (1u << c))) continue;
      INFO("device " << d << " class " << int(c));
      ++checked;
      hurray_backend_allocation a{};
      REQUIRE(t.alloc(s, d, c, n, 4096, HURRAY_ALLOC_SHAREABLE, &a, &err) == HURRAY_OK);
      hurray_backend_ipc_handle h{};
      REQUIRE(t.ipc_export_memory(s, &a, &h, &err) == HURRAY_OK);
      CHECK(h.kind == fourcc('V', 'K', 'M', '1'));
      CHECK(h.fd >= 0);
      CHECK(h.byte_size == n);
      hurray_backend_allocation b{};
      const hurray_status st = t.ipc_import_memory(s, d, &h, c, &b, &err);
      INFO(err.message);
      REQUIRE(st == HURRAY_OK);
      close(h.fd);  // the import took its own reference
      CHECK(b.byte_size == n);
      CHECK(b.memory_class == c);
      CHECK(b.flags == a.flags);
      CHECK(b.data != nullptr);
      CHECK(b.data != a.data);
      if (b.host) {
        CHECK(b.alignment >= HURRAY_MIN_ALIGNMENT);
        CHECK(reinterpret_cast<uintptr_t>(b.data) % b.alignment == 0);
      }

      // Written through one, read through the other: the same bytes.
      const std::vector<unsigned char> one = bytes(n, 1), two = bytes(n, 2);
      std::vector<unsigned char> out(n);
      REQUIRE(t.copy_from_host(s, &a, 0, one.data(), n, &err) == HURRAY_OK);
      REQUIRE(t.copy_to_host(s, &b, 0, out.data(), n, &err) == HURRAY_OK);
      CHECK(out == one);
      REQUIRE(t.copy_from_host(s, &b, 0, two.data(), n, &err) == HURRAY_OK);
      REQUIRE(t.copy_to_host(s, &a, 0, out.data(), n, &err) == HURRAY_OK);
      CHECK(out == two);
      if (a.host && b.host) {  // and the two mappings alias the same memory
        static_cast<unsigned char *>(a.host)[n - 1] = 0x5A;
        CHECK(static_cast<volatile unsigned char *>(b.host)[n - 1] == 0x5A);
      }
      // The imported memory outlives the exporter's allocation.
      t.free(s, &a);
      REQUIRE(t.copy_to_host(s, &b, 0, out.data(), n, &err) == HURRAY_OK);
      if (b.host) CHECK(out[n - 1] == 0x5A);
      t.free(s, &b);
    }
    // Memory allocated without HURRAY_ALLOC_SHAREABLE is not exported.
    uint8_t c = 0;
    while (!(info.memory_classes & (1u << c))) ++c;
    hurray_backend_allocation plain{};
    REQUIRE(t.alloc(s, d, c, 4096, 4096, 0, &plain, &err) == HURRAY_OK);
    hurray_backend_ipc_handle h{};
    CHECK(t.ipc_export_memory(s, &plain, &h, &err) == HURRAY_E_UNSUPPORTED);
    CHECK(std::string(err.message).find("HURRAY_ALLOC_SHAREABLE") != std::string::npos);
    t.free(s, &plain);
    // A handle that is not ours is refused.
    hurray_backend_ipc_handle junk{};
    junk.kind = 77;
    junk.fd = 0;
    hurray_backend_allocation b{};
    CHECK(t.ipc_import_memory(s, d, &junk, c, &b, &err) == HURRAY_E_INVALID_ARGUMENT);
    CHECK(std::string(err.message).find("its kind is 0x0000004d, this plugin's is 'VKM1'") !=
          std::string::npos);
    junk.kind = fourcc('V', 'K', 'E', '1');  // an event handle is no memory handle
    CHECK(t.ipc_import_memory(s, d, &junk, c, &b, &err) == HURRAY_E_INVALID_ARGUMENT);
    CHECK(std::string(err.message).find("its kind is 'VKE1'") != std::string::npos);
  }
  if (!checked) WARN("no device can share memory: nothing imported");
}

TEST_CASE("vulkan: event IPC works where semaphores export and is refused with a reason elsewhere") {
  const hurray_backend_v1 &t = table();
  void *s = state();
  for (int32_t d = 0; d < t.device_count(s); ++d) {
    const hurray_backend_device_info info = hvk::info_of(d);
    hurray_error err{};
    void *event = nullptr;
    uint64_t value = 0;
    REQUIRE(t.event_record(s, d, nullptr, &event, &value, &err) == HURRAY_OK);
    hurray_backend_ipc_handle h{};
    h.fd = -1;
    const hurray_status st = t.ipc_export_event(s, d, event, &h, &err);
    if (!(info.ipc & HURRAY_BACKEND_IPC_EVENTS)) {
      INFO(err.message);
      CHECK(st == HURRAY_E_UNSUPPORTED);
      CHECK(err.status == HURRAY_E_UNSUPPORTED);
      CHECK(std::string(err.message).find("semaphore") != std::string::npos);
      hurray_backend_ipc_handle junk{};
      junk.kind = fourcc('V', 'K', 'E', '1');  // the plugin's event kind
      junk.fd = 0;
      void *imported = nullptr;
      CHECK(t.ipc_import_event(s, d, &junk, &imported, &err) == HURRAY_E_UNSUPPORTED);
      std::printf("device %d: event IPC refused: %s\n", static_cast<int>(d), err.message);
    } else {
      REQUIRE(st == HURRAY_OK);
      CHECK(h.kind == fourcc('V', 'K', 'E', '1'));
      CHECK(h.fd >= 0);
      void *imported = nullptr;
      REQUIRE(t.ipc_import_event(s, d, &h, &imported, &err) == HURRAY_OK);
      close(h.fd);
      CHECK(imported != nullptr);
      CHECK(t.event_wait(s, d, imported, value, nullptr, &err) == HURRAY_OK);
      t.event_release(s, d, imported);
    }
    REQUIRE(t.event_wait(s, d, event, value, nullptr, &err) == HURRAY_OK);
    t.event_release(s, d, event);
  }
}
