// One backend conformance suite, run once per device tag (HURRAY_TEST_DEVICE
// or --hurray-device=TAG): every present device of that tag is allocated in
// each memory class it offers at several alignments, its handles validate,
// bytes written through the backend read back, and an EVENT handoff is
// waited on by the consumer before it reads. A tag whose backend is absent
// exits 77 with the loader's reason: CTest reports it skipped, not passed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <hurray.h>
#include <hurray_backend.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

uint8_t g_tag = 0;
hurray_context *g_ctx = nullptr;
hurray_policy *g_policy = nullptr;  // agrees the tag when it is private

int32_t device_count() {
  int32_t n = 0;
  REQUIRE(hurray_device_count(g_ctx, g_tag, &n, nullptr) == HURRAY_OK);
  return n;
}

hurray_backend_device_info info_of(int32_t d) {
  hurray_backend_device_info info;
  REQUIRE(hurray_device_info(g_ctx, g_tag, d, &info, nullptr) == HURRAY_OK);
  return info;
}

hurray_buffer *alloc(int32_t d, uint8_t mc, uint64_t size, uint32_t align, hurray_error *err) {
  hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
  a.byte_size = size;
  a.alignment = align;
  a.device_tag = g_tag;
  a.memory_class = mc;
  a.device_ordinal = d;
  hurray_buffer *b = nullptr;
  return hurray_buffer_alloc(g_ctx, &a, &b, err) == HURRAY_OK ? b : nullptr;
}

std::vector<unsigned char> pattern(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>((i * 31 + seed) ^ (i >> 8));
  return v;
}

}  // namespace

TEST_CASE("every offered memory class allocates at 64..65536 and its handle validates", "[conformance]") {
  for (int32_t d = 0; d < device_count(); ++d) {
    const hurray_backend_device_info info = info_of(d);
    INFO("device " << d << ": " << info.name);
    for (uint8_t mc = 0; mc <= HURRAY_MEMORY_PEER; ++mc) {
      if (!hurray_memory_class_valid_for(g_tag, mc)) continue;
      hurray_error err{};
      if (!(info.memory_classes & (1u << mc))) {
        // BP-PUT-DEVICE: refused, never served from another class
        CHECK(alloc(d, mc, 4096, 4096, &err) == nullptr);
        CHECK(err.status == HURRAY_E_DEVICE_UNAVAILABLE);
        continue;
      }
      for (uint32_t align : {64u, 256u, 4096u, 65536u}) {
        INFO("class " << hurray_memory_class_name(mc) << " alignment " << align);
        hurray_buffer *b = alloc(d, mc, 65536 + 123, align, &err);
        INFO(err.message);
        REQUIRE(b != nullptr);
        hurray_buffer_handle h;
        REQUIRE(hurray_buffer_get_handle(b, &h, nullptr) == HURRAY_OK);
        CHECK(h.device_tag == g_tag);
        CHECK(h.memory_class == mc);
        CHECK(h.alignment == align);
        CHECK(hurray_handle_validate(&h, g_policy, &err) == HURRAY_OK);
        hurray_handoff ho;
        REQUIRE(hurray_buffer_export(b, nullptr, &ho, &err) == HURRAY_OK);
        CHECK(ho.device_ordinal == d);
        if (!(ho.flags & HURRAY_HANDOFF_OPAQUE_DATA))
          CHECK(reinterpret_cast<uintptr_t>(ho.data) % align == 0);
        CHECK(hurray_handoff_check(&ho, g_policy, &err) == HURRAY_OK);
        CHECK(hurray_handoff_release(&ho, &err) == HURRAY_OK);
        hurray_buffer_unref(b);
      }
    }
  }
}

TEST_CASE("bytes written through the backend read back", "[conformance]") {
  for (int32_t d = 0; d < device_count(); ++d) {
    const hurray_backend_device_info info = info_of(d);
    for (uint8_t mc = 0; mc <= HURRAY_MEMORY_PEER; ++mc) {
      if (!(info.memory_classes & (1u << mc))) continue;
      INFO("device " << d << " class " << hurray_memory_class_name(mc));
      hurray_error err{};
      const size_t n = 1 << 20;
      hurray_buffer *b = alloc(d, mc, n, 4096, &err);
      INFO(err.message);
      REQUIRE(b != nullptr);
      const auto in = pattern(n, mc + 7u * unsigned(d));
      REQUIRE(hurray_buffer_copy_from_host(b, 0, in.data(), n, &err) == HURRAY_OK);
      std::vector<unsigned char> out(n, 0);
      REQUIRE(hurray_buffer_copy_to_host(b, 0, out.data(), n, &err) == HURRAY_OK);
      CHECK(out == in);
      // a window in the middle
      REQUIRE(hurray_buffer_copy_to_host(b, 1000, out.data(), 100, &err) == HURRAY_OK);
      CHECK(std::memcmp(out.data(), in.data() + 1000, 100) == 0);
      CHECK(hurray_buffer_copy_to_host(b, n - 10, out.data(), 11, &err) == HURRAY_E_INVALID_ARGUMENT);
      hurray_buffer_unref(b);
    }
  }
}

TEST_CASE("EVENT handoff: the consumer waits on the event, then reads", "[conformance]") {
  for (int32_t d = 0; d < device_count(); ++d) {
    INFO("device " << d);
    hurray_error err{};
    hurray_buffer *b = alloc(d, HURRAY_MEMORY_STANDARD, 1 << 16, 4096, &err);
    INFO(err.message);
    REQUIRE(b != nullptr);
    const auto in = pattern(1 << 16, 3);
    REQUIRE(hurray_buffer_copy_from_host(b, 0, in.data(), in.size(), &err) == HURRAY_OK);
    hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
    const hurray_status rec = hurray_event_record(g_ctx, g_tag, d, nullptr, &e, &err);
    if (g_tag == HURRAY_DEVICE_CPU) {  // BP-SYNC-CPU: no events on the CPU
      CHECK(rec == HURRAY_E_UNSUPPORTED);
      CHECK(std::string(err.rule_id) == "BP-SYNC-CPU");
      hurray_buffer_unref(b);
      continue;
    }
    REQUIRE(rec == HURRAY_OK);
    hurray_handoff h;
    REQUIRE(hurray_buffer_export(b, &e, &h, &err) == HURRAY_OK);
    CHECK(hurray_handoff_check(&h, g_policy, &err) == HURRAY_OK);
    REQUIRE(h.release_event != nullptr);
    REQUIRE(hurray_handoff_acquire(g_ctx, &h, nullptr, &err) == HURRAY_OK);
    CHECK(h.release_event == nullptr);  // waited on, then released once
    std::vector<unsigned char> out(in.size());
    REQUIRE(hurray_buffer_copy_to_host(b, 0, out.data(), out.size(), &err) == HURRAY_OK);
    CHECK(out == in);
    REQUIRE(hurray_handoff_release(&h, &err) == HURRAY_OK);
    hurray_buffer_unref(b);
  }
}

TEST_CASE("CONSUMER_STREAM handoff: another stream first waits for the declared one", "[conformance]") {
  for (int32_t d = 0; d < device_count(); ++d) {
    hurray_backend_native native;
    hurray_error err{};
    if (hurray_device_native(g_ctx, g_tag, d, &native, &err) != HURRAY_OK || !native.handles[3]) {
      // CPU and the example plugin have no streams of their own to declare
      CHECK((g_tag == HURRAY_DEVICE_CPU || g_tag >= 0xF0));
      continue;
    }
    INFO("device " << d);
    hurray_buffer *b = alloc(d, HURRAY_MEMORY_STANDARD, 4096, 4096, &err);
    REQUIRE(b != nullptr);
    hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
    e.sync_mode = HURRAY_SYNC_CONSUMER_STREAM;
    e.sync_object = native.handles[3];  // the backend's default stream, declared
    hurray_handoff h;
    REQUIRE(hurray_buffer_export(b, &e, &h, &err) == HURRAY_OK);
    CHECK(hurray_handoff_check(&h, g_policy, &err) == HURRAY_OK);
    CHECK(hurray_handoff_acquire(g_ctx, &h, native.handles[3], &err) == HURRAY_OK);  // same stream
    INFO(err.message);
    CHECK(hurray_handoff_acquire(g_ctx, &h, nullptr, &err) == HURRAY_OK);  // the host waits first
    REQUIRE(hurray_handoff_release(&h, &err) == HURRAY_OK);
    hurray_buffer_unref(b);
  }
}

int main(int argc, char **argv) {
  // --hurray-device=TAG selects the device tag; everything else is Catch's.
  std::vector<char *> args;
  const char *tag = std::getenv("HURRAY_TEST_DEVICE");
  bool listing = false;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--hurray-device=", 16) == 0) {
      tag = argv[i] + 16;
      continue;
    }
    listing = listing || std::strncmp(argv[i], "--list", 6) == 0;
    args.push_back(argv[i]);
  }
  if (listing) return Catch::Session().run(static_cast<int>(args.size()), args.data());
  if (!tag) {
    std::fprintf(stderr, "conformance: give --hurray-device=TAG\n");
    return 2;
  }
  g_tag = static_cast<uint8_t>(std::strtoul(tag, nullptr, 0));
  hurray_context_create(&g_ctx, nullptr);
  hurray_policy_create(&g_policy, nullptr);
  if (g_tag >= 0xF0) hurray_policy_allow_private_tag(g_policy, g_tag, 1, nullptr);
  hurray_context_set_policy(g_ctx, g_policy, nullptr);
  int status;
  int32_t n = 0;
  hurray_error err{};
  if (!listing && hurray_device_count(g_ctx, g_tag, &n, &err) != HURRAY_OK) {
    std::printf("SKIPPED: device_tag 0x%02X %s: %s\n", g_tag, hurray_device_tag_name(g_tag),
                err.message);
    status = 77;
  } else {
    if (!listing)
      std::printf("device_tag 0x%02X %s: %d device(s)\n", g_tag, hurray_device_tag_name(g_tag), n);
    status = Catch::Session().run(static_cast<int>(args.size()), args.data());
  }
  hurray_policy_destroy(g_policy);
  hurray_context_destroy(g_ctx);
  return status;
}
