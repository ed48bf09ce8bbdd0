// The Level Zero plugin through libhurray's public API: this program links
// libhurray, which finds libhurray-level-zero.so in the build tree's hurray/
// folder next to itself and loads it on first use of device_tag 0x07.
//
//  - "level-zero api: ..." runs with ZE_ENABLE_ALT_DRIVERS naming no real
//    driver (CTest sets it), so on every machine device_tag 0x07 is
//    unavailable, with the plugin's reason.
//  - "level-zero api (stand-in: loader null driver): ..." (hidden, tag
//    [standin]) runs only from CTest, against the loader's null driver (see level_zero_standin_test.cpp): one device,
//    buffers allocated, handed off and released, events recorded and
//    acquired. No byte is compared: the null driver copies nothing.
#include <dlfcn.h>

#include <hurray.h>
#include <hurray_backend.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace {

bool contains(const std::string &s, const char *part) { return s.find(part) != std::string::npos; }

struct Context {
  hurray_context *ctx = nullptr;
  Context() { REQUIRE(hurray_context_create(&ctx, nullptr) == HURRAY_OK); }
  ~Context() { hurray_context_destroy(ctx); }
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;
};

hurray_alloc_desc alloc_desc(uint8_t mc, uint64_t size, uint32_t align) {
  hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
  a.byte_size = size;
  a.alignment = align;
  a.device_tag = HURRAY_DEVICE_LEVEL_ZERO;
  a.memory_class = mc;
  a.device_ordinal = 0;
  return a;
}

void require_standin() {
  const char *env = std::getenv("ZE_ENABLE_NULL_DRIVER");
  INFO("stand-in tests run with ZE_ENABLE_NULL_DRIVER=1 and libze_null.so.1 on LD_LIBRARY_PATH "
       "(CTest sets both)");
  REQUIRE(env != nullptr);
  REQUIRE(std::string(env) == "1");
}

}  // namespace

TEST_CASE("level-zero api: hurray_device_count(0x07) is DEVICE_UNAVAILABLE with the reason") {
  Context c;
  int32_t n = -1;
  hurray_error err{};
  const hurray_status st = hurray_device_count(c.ctx, HURRAY_DEVICE_LEVEL_ZERO, &n, &err);
  std::printf("hurray_device_count(LEVEL_ZERO): %s: %s\n", hurray_status_name(st), err.message);
  std::fflush(stdout);
  REQUIRE(st == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(n == 0);
  CHECK(err.status == HURRAY_E_DEVICE_UNAVAILABLE);
  // libhurray names the plugin, the plugin names the loader's answer (or
  // dlerror's, on a machine without the loader).
  std::string reason = "level-zero: [zeInit] ZE_RESULT_ERROR_UNINITIALIZED";
  if (void *lib = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(lib);
  } else {
    reason = "level-zero: libze_loader.so.1";
  }
  CHECK(contains(err.message, reason.c_str()));

  // Every use of the tag says the same, and no other device serves it
  // (BP-PUT-DEVICE).
  hurray_backend_device_info info;
  CHECK(hurray_device_info(c.ctx, HURRAY_DEVICE_LEVEL_ZERO, 0, &info, &err) ==
        HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(contains(err.message, reason.c_str()));
  hurray_alloc_desc a = alloc_desc(HURRAY_MEMORY_STANDARD, 4096, 4096);
  hurray_buffer *b = nullptr;
  CHECK(hurray_buffer_alloc(c.ctx, &a, &b, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(b == nullptr);
  hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
  CHECK(hurray_event_record(c.ctx, HURRAY_DEVICE_LEVEL_ZERO, 0, nullptr, &e, &err) ==
        HURRAY_E_DEVICE_UNAVAILABLE);

  // The backend report lists the plugin and why it has no device.
  const size_t len = hurray_backend_report(c.ctx, nullptr, 0);
  std::vector<char> report(len + 1);
  hurray_backend_report(c.ctx, report.data(), report.size());
  INFO(report.data());
  CHECK(contains(report.data(), reason.c_str()));
}

TEST_CASE("level-zero api (stand-in: loader null driver): one device, described through libhurray", "[.][standin]") {
  require_standin();
  Context c;
  int32_t n = 0;
  hurray_error err{};
  REQUIRE(hurray_device_count(c.ctx, HURRAY_DEVICE_LEVEL_ZERO, &n, &err) == HURRAY_OK);
  CHECK(n == 1);
  hurray_backend_device_info info;
  REQUIRE(hurray_device_info(c.ctx, HURRAY_DEVICE_LEVEL_ZERO, 0, &info, &err) == HURRAY_OK);
  CHECK(std::string(info.name) == "Null Device");
  hurray_backend_native nat;
  REQUIRE(hurray_device_native(c.ctx, HURRAY_DEVICE_LEVEL_ZERO, 0, &nat, &err) == HURRAY_OK);
  CHECK(nat.handles[3] != nullptr);
  CHECK(hurray_device_info(c.ctx, HURRAY_DEVICE_LEVEL_ZERO, 1, &info, &err) ==
        HURRAY_E_DEVICE_UNAVAILABLE);
}

TEST_CASE("level-zero api (stand-in: loader null driver): buffers of the served classes are allocated, handed off and released",
          "[.][standin]") {
  require_standin();
  Context c;
  for (uint8_t mc : {HURRAY_MEMORY_STANDARD, HURRAY_MEMORY_HOST_PINNED}) {
    for (uint32_t align : {64u, 4096u, 65536u}) {
      INFO(hurray_memory_class_name(mc) << " aligned to " << align);
      hurray_alloc_desc a = alloc_desc(mc, 65536 + 123, align);
      hurray_buffer *b = nullptr;
      hurray_error err{};
      REQUIRE(hurray_buffer_alloc(c.ctx, &a, &b, &err) == HURRAY_OK);
      hurray_buffer_handle h;
      REQUIRE(hurray_buffer_get_handle(b, &h, &err) == HURRAY_OK);
      CHECK(h.device_tag == HURRAY_DEVICE_LEVEL_ZERO);
      CHECK(h.memory_class == mc);
      CHECK(h.alignment == align);
      CHECK(hurray_handle_validate(&h, nullptr, &err) == HURRAY_OK);
      hurray_handoff ho;
      REQUIRE(hurray_buffer_export(b, nullptr, &ho, &err) == HURRAY_OK);
      CHECK((ho.flags & HURRAY_HANDOFF_OPAQUE_DATA) == 0);  // an address
      CHECK(reinterpret_cast<uintptr_t>(ho.data) % align == 0);
      CHECK(hurray_handoff_check(&ho, nullptr, &err) == HURRAY_OK);
      // Through the plugin's list; the null driver moves no byte.
      unsigned char bytes[64] = {};
      CHECK(hurray_buffer_copy_from_host(b, 0, bytes, sizeof bytes, &err) == HURRAY_OK);
      CHECK(hurray_buffer_copy_to_host(b, 64, bytes, sizeof bytes, &err) == HURRAY_OK);
      CHECK(hurray_handoff_release(&ho, &err) == HURRAY_OK);
      hurray_buffer_unref(b);
    }
  }
}

TEST_CASE("level-zero api (stand-in: loader null driver): UNIFIED and PEER are refused, never served by another class",
          "[.][standin]") {
  require_standin();
  Context c;
  for (uint8_t mc : {HURRAY_MEMORY_UNIFIED, HURRAY_MEMORY_PEER}) {
    hurray_alloc_desc a = alloc_desc(mc, 4096, 4096);
    hurray_buffer *b = nullptr;
    hurray_error err{};
    CHECK(hurray_buffer_alloc(c.ctx, &a, &b, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
    CHECK(b == nullptr);
    CHECK(contains(err.message, hurray_memory_class_name(mc)));
  }
}

TEST_CASE("level-zero api (stand-in: loader null driver): an EVENT handoff is recorded, acquired on the host and released once",
          "[.][standin]") {
  require_standin();
  Context c;
  hurray_alloc_desc a = alloc_desc(HURRAY_MEMORY_STANDARD, 1 << 16, 4096);
  hurray_buffer *b = nullptr;
  hurray_error err{};
  REQUIRE(hurray_buffer_alloc(c.ctx, &a, &b, &err) == HURRAY_OK);
  hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
  REQUIRE(hurray_event_record(c.ctx, HURRAY_DEVICE_LEVEL_ZERO, 0, nullptr, &e, &err) ==
          HURRAY_OK);
  CHECK(e.sync_mode == HURRAY_SYNC_EVENT);
  CHECK(e.sync_object != nullptr);
  CHECK(e.sync_value == 0);
  hurray_handoff h;
  REQUIRE(hurray_buffer_export(b, &e, &h, &err) == HURRAY_OK);
  CHECK(hurray_handoff_check(&h, nullptr, &err) == HURRAY_OK);
  REQUIRE(h.release_event != nullptr);
  REQUIRE(hurray_handoff_acquire(c.ctx, &h, nullptr, &err) == HURRAY_OK);
  CHECK(h.release_event == nullptr);  // waited on, then released once
  CHECK(hurray_handoff_release_event(&h, &err) == HURRAY_E_ALREADY_RELEASED);
  REQUIRE(hurray_handoff_release(&h, &err) == HURRAY_OK);

  // CONSUMER_STREAM on the plugin's list, then the host waits for it.
  hurray_backend_native nat;
  REQUIRE(hurray_device_native(c.ctx, HURRAY_DEVICE_LEVEL_ZERO, 0, &nat, &err) == HURRAY_OK);
  hurray_export_desc cs = HURRAY_EXPORT_DESC_INIT;
  cs.sync_mode = HURRAY_SYNC_CONSUMER_STREAM;
  cs.sync_object = nat.handles[3];
  REQUIRE(hurray_buffer_export(b, &cs, &h, &err) == HURRAY_OK);
  CHECK(hurray_handoff_acquire(c.ctx, &h, nat.handles[3], &err) == HURRAY_OK);
  CHECK(hurray_handoff_acquire(c.ctx, &h, nullptr, &err) == HURRAY_OK);
  REQUIRE(hurray_handoff_release(&h, &err) == HURRAY_OK);
  hurray_buffer_unref(b);
}
