// A PUT of a view (hurray_buffer_view, docs/spec/views.md) sends the view's
// bytes, not its parent's: from CPU memory (a handoff of the view, and the
// buffer path), and from Vulkan and OpenCL device memory (staged through
// the host by a copy that starts at the view's offset).
#include <catch2/catch.hpp>

#include <hurray_net.h>

#include <vector>

#include "net_support.h"
#include "../common/view_of.h"

using namespace nettest;

namespace {

using hurray_test::view_of;

// Do the n bytes of b equal pattern(off + i, seed)?
bool view_bytes(const hurray_buffer *b, uint64_t off, uint64_t n, uint64_t seed) {
  std::vector<unsigned char> host(n);
  if (n > 0 && hurray_buffer_copy_to_host(b, 0, host.data(), n, nullptr) != HURRAY_OK) return false;
  for (uint64_t i = 0; i < n; ++i)
    if (host[i] != pattern(off + i, seed)) return false;
  return true;
}

struct Piece {
  uint64_t off, len;
};
const std::vector<Piece> kPieces = {{4096, 65536}, {0, 4096}, {1u << 19, 100000}, {12288, 1}};

// PUT each of kPieces as a view of src from a client (*client), as a buffer
// of id i, or, with_handoffs, as a buffer of id 2i and as a handoff of id
// 2i + 1; the statuses in order.
std::vector<hurray_status> put_views(Server &srv, hurray_buffer *src, bool with_handoffs,
                                     hurray_net_client **client) {
  std::vector<hurray_status> results;
  hurray_net_client *c = nullptr;
  const uint64_t step = with_handoffs ? 2 : 1;
  with_client(srv, [&] {
    c = connect(srv.port(), nullptr);
    if (!c) return;
    for (size_t i = 0; i < kPieces.size(); ++i) {
      hurray_buffer *v = view_of(src, kPieces[i].off, kPieces[i].len);
      hurray_net_transfer_desc d = to(HURRAY_DEVICE_CPU, HURRAY_MEMORY_STANDARD, step * i);
      results.push_back(hurray_net_client_put_buffer(c, v, &d, nullptr));
      if (with_handoffs) {
        hurray_handoff h;
        REQUIRE(hurray_buffer_export(v, nullptr, &h, nullptr) == HURRAY_OK);
        d.buffer_id = 2 * i + 1;
        results.push_back(hurray_net_client_put(c, &h, &d, nullptr));
        hurray_handoff_release(&h, nullptr);
      }
      hurray_buffer_unref(v);
    }
  });
  *client = c;
  return results;
}

}  // namespace

TEST_CASE("a PUT of a CPU view lands the view's bytes, as a buffer and as a handoff",
          "[net][views]") {
  Server srv;
  const uint64_t n = 1u << 20;
  hurray_buffer *src = cpu_buffer(n, 5);
  hurray_net_client *c = nullptr;
  const std::vector<hurray_status> results = put_views(srv, src, true, &c);
  REQUIRE(c != nullptr);
  REQUIRE(results.size() == 2 * kPieces.size());
  for (auto r : results) CHECK(r == HURRAY_OK);
  REQUIRE(srv.landed.size() == 2 * kPieces.size());
  for (size_t i = 0; i < srv.landed.size(); ++i) {
    const Piece &p = kPieces[i / 2];
    INFO("view of " << p.len << " bytes at " << p.off);
    CHECK(srv.landed[i].buffer_id == i);
    CHECK(srv.landed[i].handle.byte_size == p.len);
    CHECK(view_bytes(srv.landed[i].buffer, p.off, p.len, 5));
  }
  hurray_buffer_unref(src);
  CHECK(srv.close(c) == 0);
}

TEST_CASE("a PUT of a Vulkan or OpenCL view stages the view's bytes", "[net][views]") {
  struct Src {
    uint8_t tag, mc;
  };
  const std::vector<Src> srcs = {{HURRAY_DEVICE_VULKAN, HURRAY_MEMORY_STANDARD},
                                 {HURRAY_DEVICE_OPENCL, HURRAY_MEMORY_STANDARD}};
  for (const Src &s : srcs) {
    INFO(hurray_device_tag_name(s.tag));
    REQUIRE(local_has(s.tag, s.mc));  // lavapipe and PoCL are here: absent is a failure
    Server srv;
    const uint64_t n = 1u << 20;
    hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
    a.byte_size = n;
    a.alignment = 4096;
    a.device_tag = s.tag;
    a.memory_class = s.mc;
    hurray_buffer *dev = nullptr;
    REQUIRE(hurray_buffer_alloc(nullptr, &a, &dev, nullptr) == HURRAY_OK);
    std::vector<unsigned char> host(n);
    for (uint64_t i = 0; i < n; ++i) host[i] = pattern(i, 6);
    REQUIRE(hurray_buffer_copy_from_host(dev, 0, host.data(), n, nullptr) == HURRAY_OK);
    hurray_net_client *c = nullptr;
    const std::vector<hurray_status> results = put_views(srv, dev, false, &c);
    REQUIRE(c != nullptr);
    REQUIRE(results.size() == kPieces.size());
    for (auto r : results) CHECK(r == HURRAY_OK);
    REQUIRE(srv.landed.size() == kPieces.size());
    for (size_t i = 0; i < kPieces.size(); ++i) {
      INFO("view of " << kPieces[i].len << " bytes at " << kPieces[i].off);
      CHECK(srv.landed[i].handle.byte_size == kPieces[i].len);
      CHECK(view_bytes(srv.landed[i].buffer, kPieces[i].off, kPieces[i].len, 6));
    }
    hurray_buffer_unref(dev);
    CHECK(srv.close(c) == 0);
  }
}
