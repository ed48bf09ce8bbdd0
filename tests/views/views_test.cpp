// Views (hurray_buffer_view, docs/spec/views.md) in one process: the handle a
// view gets (alignment derived from the offset, BP-VIEW-BOUNDS), its bytes
// (copies to and from the host through the view land at the parent's
// offset) on the CPU and on the real Vulkan (lavapipe) and OpenCL (PoCL)
// devices, its lifetime (the parent's memory lives while a view or a
// handoff of one lives, freed exactly once), its handoffs (the address, or
// an opaque handle with HURRAY_HANDOFF_OPAQUE_OFFSET) and DLPack's pointer.
// Device cases are tagged [vulkan] / [opencl]; CTest runs them with the
// plugins on HURRAY_BACKEND_PATH.
#include <catch2/catch.hpp>
#include <hurray.h>
#include <hurray_dlpack.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "../common/view_of.h"

namespace {

unsigned char pattern(uint64_t i) { return static_cast<unsigned char>((i * 7 + 3) ^ (i >> 8)); }

struct Frees {
  std::atomic<int> n{0};
  static void on_free(void *user, void *data) {
    static_cast<Frees *>(user)->n.fetch_add(1);
    std::free(data);
  }
};

// A wrapped CPU buffer of `size` bytes aligned to `align`, filled with pattern().
hurray_buffer *wrapped(uint64_t size, uint32_t align, Frees *frees) {
  void *p = std::aligned_alloc(align, size ? size : align);
  REQUIRE(p);
  for (uint64_t i = 0; i < size; ++i) static_cast<unsigned char *>(p)[i] = pattern(i);
  hurray_buffer_desc d = HURRAY_BUFFER_DESC_INIT;
  d.handle = {size, align, HURRAY_DEVICE_CPU, HURRAY_SYNC_PRODUCER_SYNCED, HURRAY_MEMORY_STANDARD, 0};
  d.data = p;
  d.free_fn = Frees::on_free;
  d.free_user = frees;
  hurray_buffer *b = nullptr;
  hurray_error err{};
  const hurray_status st = hurray_buffer_wrap(nullptr, &d, &b, &err);
  INFO(err.message);
  REQUIRE(st == HURRAY_OK);
  return b;
}

hurray_buffer_handle handle_of(const hurray_buffer *b) {
  hurray_buffer_handle h{};
  REQUIRE(hurray_buffer_get_handle(b, &h, nullptr) == HURRAY_OK);
  return h;
}

using hurray_test::view_of;

// h exported as a one-dimensional uint8 DLPack tensor of shape[0] bytes at
// byte_offset (hurray_dlpack_export_versioned), checked.
hurray_dl_managed_tensor_versioned *u8_tensor(hurray_handoff *h, const int64_t *shape,
                                              uint64_t byte_offset) {
  hurray_dl_managed_tensor_versioned *t = nullptr;
  hurray_error err{};
  const hurray_status st = hurray_dlpack_export_versioned(
      h, hurray_dl_data_type{HURRAY_DL_UINT, 8, 1}, 1, shape, nullptr, byte_offset, &t, &err);
  INFO(err.message);
  REQUIRE(st == HURRAY_OK);
  return t;
}

hurray_status view(hurray_buffer *p, uint64_t off, uint64_t len, hurray_buffer **v,
                   hurray_error *err) {
  *v = nullptr;
  return hurray_buffer_view(p, off, len, v, err);
}

}  // namespace

TEST_CASE("every offset class gets the alignment it can promise, and bounds are checked") {
  Frees frees;
  const uint64_t size = 1 << 20;
  hurray_buffer *p = wrapped(size, 4096, &frees);
  hurray_error err{};
  struct Case {
    uint64_t off, len;
    uint32_t align;
  };
  // the largest power of two dividing both the offset and the parent's 4096
  const Case ok[] = {{0, size, 4096},          {0, 64, 4096},         {64, 64, 64},
                     {128, 1000, 128},         {192, 64, 64},         {256, 256, 256},
                     {4096, 4096, 4096},       {8192, 100, 4096},     {1 << 19, 1 << 19, 4096},
                     {size - 64, 64, 64},      {size, 0, 4096},       {32, 0, 32},
                     {1, 0, 1},                {size - 1, 1 - 1, 1},  {4096 * 3 + 512, 512, 512}};
  for (const Case &c : ok) {
    INFO("offset " << c.off << " length " << c.len);
    hurray_buffer *v = view_of(p, c.off, c.len);
    const hurray_buffer_handle h = handle_of(v);
    CHECK(h.byte_size == c.len);
    CHECK(h.alignment == c.align);
    CHECK(h.device_tag == HURRAY_DEVICE_CPU);
    CHECK(h.memory_class == HURRAY_MEMORY_STANDARD);
    CHECK(h.sync_mode == HURRAY_SYNC_PRODUCER_SYNCED);
    CHECK(hurray_handle_validate(&h, nullptr, nullptr) == HURRAY_OK);
    CHECK(hurray_buffer_data(v) == static_cast<unsigned char *>(hurray_buffer_data(p)) + c.off);
    CHECK(hurray_handle_check_address(&h, hurray_buffer_data(v), nullptr) == HURRAY_OK);
    CHECK(hurray_buffer_fd(v) == -1);
    hurray_buffer_unref(v);
  }
  // outside the parent: BP-VIEW-BOUNDS
  const Case outside[] = {{size + 1, 0, 0},    {0, size + 1, 0},       {size, 1, 0},
                          {size - 64, 128, 0}, {UINT64_MAX, 64, 0},    {64, UINT64_MAX, 0},
                          {UINT64_MAX - 63, 64, 0}};
  for (const Case &c : outside) {
    INFO("offset " << c.off << " length " << c.len);
    hurray_buffer *v = nullptr;
    CHECK(view(p, c.off, c.len, &v, &err) == HURRAY_E_INVALID_ARGUMENT);
    CHECK(v == nullptr);
    CHECK(std::string(err.message).find("BP-VIEW-BOUNDS") == 0);
  }
  // a non-empty view the handle cannot describe: below 64 (BP-ALIGN-MIN)
  for (uint64_t off : std::initializer_list<uint64_t>{1ull, 8ull, 32ull, 96ull, 4096ull + 32, size - 32}) {
    INFO("offset " << off);
    hurray_buffer *v = nullptr;
    CHECK(view(p, off, 32, &v, &err) == HURRAY_E_ALIGNMENT);
    CHECK(std::string(err.rule_id) == "BP-ALIGN-MIN");
    CHECK(v == nullptr);
  }
  // arguments
  hurray_buffer *v = nullptr;
  CHECK(hurray_buffer_view(nullptr, 0, 0, &v, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(hurray_buffer_view(p, 0, 0, nullptr, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(hurray_buffer_view(p, 0, 0, nullptr, nullptr) == HURRAY_E_INVALID_ARGUMENT);
  hurray_buffer_unref(p);
  CHECK(frees.n == 1);
}

TEST_CASE("a view of a view is a view of the parent at the summed offset") {
  Frees frees;
  hurray_buffer *p = wrapped(65536, 65536, &frees);
  hurray_buffer *a = nullptr, *b = nullptr, *c = nullptr;
  hurray_error err{};
  REQUIRE(view(p, 8192, 32768, &a, &err) == HURRAY_OK);
  CHECK(handle_of(a).alignment == 8192);
  REQUIRE(view(a, 1024, 4096, &b, &err) == HURRAY_OK);  // at 9216 in p
  CHECK(handle_of(b).alignment == 1024);
  CHECK(handle_of(b).byte_size == 4096);
  CHECK(hurray_buffer_data(b) == static_cast<unsigned char *>(hurray_buffer_data(p)) + 9216);
  // bounds are the view's own, not the parent's
  CHECK(view(a, 32768 - 64, 128, &c, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(view(b, 4096, 0, &c, &err) == HURRAY_OK);
  hurray_buffer_unref(c);
  // a view's alignment bounds its views' (1024-aligned b: a view at 2048 is 1024)
  REQUIRE(view(b, 2048, 64, &c, &err) == HURRAY_OK);
  CHECK(handle_of(c).alignment == 1024);
  unsigned char got[64];
  REQUIRE(hurray_buffer_copy_to_host(c, 0, got, sizeof got, &err) == HURRAY_OK);
  for (uint64_t i = 0; i < sizeof got; ++i) CHECK(got[i] == pattern(9216 + 2048 + i));
  hurray_buffer_unref(p);
  hurray_buffer_unref(a);
  hurray_buffer_unref(b);
  CHECK(frees.n == 0);
  hurray_buffer_unref(c);
  CHECK(frees.n == 1);
}

TEST_CASE("copies through a view are the parent's bytes at the offset (CPU)") {
  Frees frees;
  const uint64_t size = 65536;
  hurray_buffer *p = wrapped(size, 4096, &frees);
  hurray_error err{};
  for (uint64_t off : std::initializer_list<uint64_t>{0ull, 64ull, 4096ull, 12288ull + 192, size - 64}) {
    INFO("offset " << off);
    const uint64_t len = off == size - 64 ? 64 : 4096;
    hurray_buffer *v = nullptr;
    REQUIRE(view(p, off, len, &v, &err) == HURRAY_OK);
    std::vector<unsigned char> got(len);
    REQUIRE(hurray_buffer_copy_to_host(v, 0, got.data(), len, &err) == HURRAY_OK);
    for (uint64_t i = 0; i < len; ++i) REQUIRE(got[i] == pattern(off + i));
    // within the view, at an offset
    unsigned char mid[16];
    REQUIRE(hurray_buffer_copy_to_host(v, len - 16, mid, 16, &err) == HURRAY_OK);
    CHECK(mid[0] == pattern(off + len - 16));
    // writes land in the parent at the offset
    const unsigned char w[4] = {0xDE, 0xAD, 0xBE, 0xEF};
    REQUIRE(hurray_buffer_copy_from_host(v, 16, w, 4, &err) == HURRAY_OK);
    const auto *pp = static_cast<const unsigned char *>(hurray_buffer_data(p));
    CHECK(std::memcmp(pp + off + 16, w, 4) == 0);
    CHECK(pp[off + 15] == pattern(off + 15));
    CHECK(pp[off + 20] == pattern(off + 20));
    std::memcpy(static_cast<unsigned char *>(hurray_buffer_data(p)) + off + 16, got.data() + 16, 4);
    // a copy past the view's end is refused, though the parent has the bytes
    if (off + len < size) {
      CHECK(hurray_buffer_copy_to_host(v, len - 8, mid, 16, &err) == HURRAY_E_INVALID_ARGUMENT);
      CHECK(hurray_buffer_copy_from_host(v, len, w, 1, &err) == HURRAY_E_INVALID_ARGUMENT);
    }
    hurray_buffer_unref(v);
  }
  hurray_buffer_unref(p);
  CHECK(frees.n == 1);
}

TEST_CASE("the parent's memory lives while a view or a handoff of one lives") {
  hurray_error err{};
  SECTION("parent released first, then the view") {
    Frees frees;
    hurray_buffer *p = wrapped(8192, 4096, &frees);
    hurray_buffer *v = nullptr;
    REQUIRE(view(p, 4096, 4096, &v, &err) == HURRAY_OK);
    hurray_buffer_unref(p);
    CHECK(frees.n == 0);
    unsigned char got[8];
    REQUIRE(hurray_buffer_copy_to_host(v, 0, got, 8, &err) == HURRAY_OK);
    CHECK(got[0] == pattern(4096));
    hurray_buffer_unref(v);
    CHECK(frees.n == 1);
  }
  SECTION("a handoff of a view outlives the parent and the view") {
    Frees frees;
    hurray_buffer *p = wrapped(8192, 4096, &frees);
    hurray_buffer *v = nullptr;
    REQUIRE(view(p, 4096, 1024, &v, &err) == HURRAY_OK);
    hurray_handoff h1, h2;
    REQUIRE(hurray_buffer_export(v, nullptr, &h1, &err) == HURRAY_OK);
    REQUIRE(hurray_buffer_export(v, nullptr, &h2, &err) == HURRAY_OK);
    hurray_buffer_unref(v);
    hurray_buffer_unref(p);
    CHECK(frees.n == 0);
    CHECK(hurray_handoff_check(&h1, nullptr, &err) == HURRAY_OK);
    hurray_buffer_handle hd;
    REQUIRE(hurray_handle_decode(h1.handle, sizeof h1.handle, &hd, nullptr) == HURRAY_OK);
    CHECK(hd.byte_size == 1024);
    CHECK(hd.alignment == 4096);
    CHECK(h1.flags == 0);
    CHECK(h1.reserved[0] == 0);
    CHECK(static_cast<const unsigned char *>(h1.data)[0] == pattern(4096));
    REQUIRE(hurray_handoff_release(&h1, &err) == HURRAY_OK);
    CHECK(frees.n == 0);
    REQUIRE(hurray_handoff_release(&h2, &err) == HURRAY_OK);
    CHECK(frees.n == 1);
    // exactly once: a second release is refused and frees nothing more
    CHECK(hurray_handoff_release(&h2, &err) == HURRAY_E_ALREADY_RELEASED);
    CHECK(frees.n == 1);
  }
  SECTION("views of views, released in any order, free once") {
    Frees frees;
    hurray_buffer *p = wrapped(65536, 4096, &frees);
    std::vector<hurray_buffer *> vs;
    hurray_buffer *cur = p;
    for (int i = 0; i < 6; ++i) {
      hurray_buffer *v = nullptr;
      REQUIRE(view(cur, 4096, 65536 - 4096 * (i + 1), &v, &err) == HURRAY_OK);
      vs.push_back(v);
      cur = v;
    }
    hurray_buffer_unref(p);
    for (size_t i = 0; i < vs.size(); i += 2) hurray_buffer_unref(vs[i]);
    CHECK(frees.n == 0);
    for (size_t i = 1; i < vs.size(); i += 2) hurray_buffer_unref(vs[i]);
    CHECK(frees.n == 1);
  }
}

TEST_CASE("OPAQUE_OFFSET needs OPAQUE_DATA and an offset") {
  Frees frees;
  hurray_buffer *p = wrapped(4096, 4096, &frees);
  hurray_handoff h;
  REQUIRE(hurray_buffer_export(p, nullptr, &h, nullptr) == HURRAY_OK);
  hurray_error err{};
  hurray_handoff bad = h;
  bad.flags |= HURRAY_HANDOFF_OPAQUE_OFFSET;
  bad.reserved[0] = 4096;
  CHECK(hurray_handoff_check(&bad, nullptr, &err) == HURRAY_E_INVALID_ARGUMENT);
  bad.flags |= HURRAY_HANDOFF_OPAQUE_DATA;
  CHECK(hurray_handoff_check(&bad, nullptr, &err) == HURRAY_OK);
  bad.reserved[0] = 0;
  CHECK(hurray_handoff_check(&bad, nullptr, &err) == HURRAY_E_INVALID_ARGUMENT);
  bad = h;
  bad.reserved[0] = 4096;  // without the flag, reserved[0] stays reserved
  CHECK(hurray_handoff_check(&bad, nullptr, &err) == HURRAY_E_UNSUPPORTED);
  REQUIRE(hurray_handoff_release(&h, nullptr) == HURRAY_OK);
  hurray_buffer_unref(p);
}

TEST_CASE("DLPack's data pointer of a CPU view is the parent's address plus the offset") {
  Frees frees;
  hurray_buffer *p = wrapped(65536, 4096, &frees);
  hurray_buffer *v = nullptr;
  hurray_error err{};
  REQUIRE(view(p, 8192 + 256, 1024, &v, &err) == HURRAY_OK);
  hurray_handoff h;
  REQUIRE(hurray_buffer_export(v, nullptr, &h, &err) == HURRAY_OK);
  hurray_buffer_unref(v);
  hurray_buffer_unref(p);
  const int64_t shape[1] = {256};
  hurray_dl_managed_tensor_versioned *t = u8_tensor(&h, shape, 512);
  const auto *bytes = static_cast<const unsigned char *>(t->dl_tensor.data) + t->dl_tensor.byte_offset;
  CHECK(t->dl_tensor.byte_offset == 0);
  for (int i = 0; i < 256; ++i) CHECK(bytes[i] == pattern(8192 + 256 + 512 + i));
  // past the view's 1024 bytes is refused, though the parent has them
  hurray_handoff h2;
  REQUIRE(hurray_dlpack_import_versioned(nullptr, t, &h2, &err) == HURRAY_OK);
  REQUIRE(hurray_handoff_release(&h2, &err) == HURRAY_OK);
  CHECK(frees.n == 1);
}

// ---- real devices: Vulkan (lavapipe) and OpenCL (PoCL) ----

namespace {

struct DeviceCase {
  uint8_t tag;
  uint8_t mc;
};

void device_views(DeviceCase dc) {
  hurray_error err{};
  int32_t n = 0;
  const hurray_status cst = hurray_device_count(nullptr, dc.tag, &n, &err);
  INFO(err.message);
  REQUIRE(cst == HURRAY_OK);  // these devices are present here: absent is a failure
  REQUIRE(n >= 1);
  const uint64_t size = 65536;
  hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
  a.byte_size = size;
  a.alignment = 4096;
  a.device_tag = dc.tag;
  a.memory_class = dc.mc;
  hurray_buffer *p = nullptr;
  const hurray_status ast = hurray_buffer_alloc(nullptr, &a, &p, &err);
  INFO(err.message);
  REQUIRE(ast == HURRAY_OK);
  std::vector<unsigned char> all(size);
  for (uint64_t i = 0; i < size; ++i) all[i] = pattern(i);
  REQUIRE(hurray_buffer_copy_from_host(p, 0, all.data(), size, &err) == HURRAY_OK);
  hurray_handoff ph;
  REQUIRE(hurray_buffer_export(p, nullptr, &ph, &err) == HURRAY_OK);
  const bool opaque = ph.flags & HURRAY_HANDOFF_OPAQUE_DATA;
  REQUIRE(hurray_handoff_release(&ph, nullptr) == HURRAY_OK);
  for (uint64_t off : std::initializer_list<uint64_t>{0ull, 4096ull, 8192ull + 64, 20480ull, size - 4096, size}) {
    INFO("offset " << off);
    const uint64_t len = off == size ? 0 : 4096 - (off % 4096 ? 64 : 0);
    hurray_buffer *v = view_of(p, off, len);
    const hurray_buffer_handle h = handle_of(v);
    CHECK(h.device_tag == dc.tag);
    CHECK(h.memory_class == dc.mc);
    CHECK(h.byte_size == len);
    CHECK(h.alignment == (off % 4096 ? 64u : 4096u));
    if (len) {
      std::vector<unsigned char> got(len);
      REQUIRE(hurray_buffer_copy_to_host(v, 0, got.data(), len, &err) == HURRAY_OK);
      CHECK(std::memcmp(got.data(), all.data() + off, len) == 0);
      // a write through the view lands in the parent at the offset
      const unsigned char w[8] = {1, 2, 3, 4, 5, 6, 7, 8};
      REQUIRE(hurray_buffer_copy_from_host(v, 8, w, 8, &err) == HURRAY_OK);
      unsigned char back[24];
      REQUIRE(hurray_buffer_copy_to_host(p, off, back, 24, &err) == HURRAY_OK);
      CHECK(std::memcmp(back, all.data() + off, 8) == 0);
      CHECK(std::memcmp(back + 8, w, 8) == 0);
      CHECK(std::memcmp(back + 16, all.data() + off + 16, 8) == 0);
      REQUIRE(hurray_buffer_copy_from_host(p, off + 8, all.data() + off + 8, 8, &err) == HURRAY_OK);
      CHECK(hurray_buffer_copy_to_host(v, len - 4, back, 8, &err) == HURRAY_E_INVALID_ARGUMENT);
    }
    // its handoff: the address moved by the offset, or the handle with the offset beside it
    hurray_handoff vh;
    REQUIRE(hurray_buffer_export(v, nullptr, &vh, &err) == HURRAY_OK);
    CHECK(hurray_handoff_check(&vh, nullptr, &err) == HURRAY_OK);
    if (opaque) {
      CHECK((vh.flags & HURRAY_HANDOFF_OPAQUE_DATA));
      CHECK(vh.data == hurray_buffer_data(p));
      CHECK(bool(vh.flags & HURRAY_HANDOFF_OPAQUE_OFFSET) == (off != 0));
      CHECK(vh.reserved[0] == off);
      // DLPack: the handle, and byte_offset = view offset + the caller's
      if (len) {
        const int64_t shape[1] = {64};
        hurray_dl_managed_tensor_versioned *t = u8_tensor(&vh, shape, 128);
        CHECK(t->dl_tensor.data == hurray_buffer_data(p));
        CHECK(t->dl_tensor.byte_offset == off + 128);
        t->deleter(t);
      }
    } else {
      CHECK(vh.data == static_cast<unsigned char *>(hurray_buffer_data(p)) + off);
      CHECK(!(vh.flags & HURRAY_HANDOFF_OPAQUE_OFFSET));
      if (len) CHECK(std::memcmp(vh.data, all.data() + off, 16) == 0);
    }
    if (vh.release) REQUIRE(hurray_handoff_release(&vh, &err) == HURRAY_OK);
    // the parent goes first; the view still reads its bytes
    if (off == 4096) {
      hurray_buffer *keep = nullptr;
      REQUIRE(view(v, 0, len, &keep, &err) == HURRAY_OK);
      hurray_buffer_unref(v);
      v = keep;
    }
    hurray_buffer_unref(v);
  }
  // the view outlives its parent on the device too
  hurray_buffer *last = nullptr;
  REQUIRE(view(p, 12288, 4096, &last, &err) == HURRAY_OK);
  hurray_buffer_unref(p);
  std::vector<unsigned char> got(4096);
  REQUIRE(hurray_buffer_copy_to_host(last, 0, got.data(), 4096, &err) == HURRAY_OK);
  CHECK(std::memcmp(got.data(), all.data() + 12288, 4096) == 0);
  hurray_buffer_unref(last);
}

}  // namespace

TEST_CASE("Vulkan STANDARD (opaque) views read and write the parent's bytes", "[vulkan]") {
  device_views({HURRAY_DEVICE_VULKAN, HURRAY_MEMORY_STANDARD});
}
TEST_CASE("Vulkan UNIFIED (mapped) views read and write the parent's bytes", "[vulkan]") {
  device_views({HURRAY_DEVICE_VULKAN, HURRAY_MEMORY_UNIFIED});
}
TEST_CASE("OpenCL STANDARD (cl_mem) views read and write the parent's bytes", "[opencl]") {
  device_views({HURRAY_DEVICE_OPENCL, HURRAY_MEMORY_STANDARD});
}
