// The DLPack bridge (hurray_dlpack.h): the struct layouts of DLPack's ABI,
// the device mapping of TABLES.md section 6 in both directions, export
// (handoff -> tensor) and import (tensor -> handoff) with their ownership:
// every free, deleter and event-free callback is counted.
#include <catch2/catch.hpp>

#include <hurray_dlpack.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Counter {
  std::atomic<int> frees{0}, events{0};
  std::atomic<std::thread::id> free_thread{};
  static void on_free(void *user, void *) {
    auto *c = static_cast<Counter *>(user);
    c->free_thread = std::this_thread::get_id();
    c->frees++;
  }
  static void on_event(void *user, void *) { static_cast<Counter *>(user)->events++; }
};

// 64-byte aligned host memory the test owns (freed by the fixture, not by
// the library: the counters tell whether the library would have freed it).
struct Host {
  unsigned char *p;
  explicit Host(size_t n)
      : p(static_cast<unsigned char *>(std::aligned_alloc(4096, (n + 4095) / 4096 * 4096))) {
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<unsigned char>(i);
  }
  ~Host() { std::free(p); }
  Host(const Host &) = delete;
  Host &operator=(const Host &) = delete;
};

hurray_handoff wrap_cpu(void *data, uint64_t n, Counter *c, uint32_t export_flags = 0) {
  hurray_buffer_desc d = HURRAY_BUFFER_DESC_INIT;
  d.handle.byte_size = n;
  d.handle.alignment = 64;
  d.data = data;
  d.free_fn = Counter::on_free;
  d.free_user = c;
  hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
  e.flags = export_flags;
  hurray_handoff h;
  hurray_error err;
  REQUIRE(hurray_handoff_wrap(nullptr, &d, &e, &h, &err) == HURRAY_OK);
  return h;
}

constexpr hurray_dl_data_type kF32 = {HURRAY_DL_FLOAT, 32, 1};
constexpr hurray_dl_data_type kU8 = {HURRAY_DL_UINT, 8, 1};

bool names_rule(const hurray_error &err, const char *rule) {
  return std::string(err.rule_id) == rule &&
         std::string(err.message).rfind(std::string(rule) + ":", 0) == 0;
}

// A DLPack producer of our own (what numpy or PyTorch would hand over).
struct Producer {
  std::atomic<int> deleted{0};
  int64_t shape[4] = {};
  int64_t strides[4] = {};
  hurray_dl_managed_tensor legacy{};
  hurray_dl_managed_tensor_versioned versioned{};

  static void delete_legacy(hurray_dl_managed_tensor *self) {
    static_cast<Producer *>(self->manager_ctx)->deleted++;
  }
  static void delete_versioned(hurray_dl_managed_tensor_versioned *self) {
    static_cast<Producer *>(self->manager_ctx)->deleted++;
  }
  void set(void *data, int32_t device_type, int32_t ndim, hurray_dl_data_type dtype,
           bool with_strides, uint64_t byte_offset = 0) {
    hurray_dl_tensor t{};
    t.data = data;
    t.device = {device_type, 0};
    t.ndim = ndim;
    t.dtype = dtype;
    t.shape = shape;
    t.strides = with_strides ? strides : nullptr;
    t.byte_offset = byte_offset;
    legacy.dl_tensor = t;
    legacy.manager_ctx = this;
    legacy.deleter = delete_legacy;
    versioned.version = {1, 0};
    versioned.dl_tensor = t;
    versioned.manager_ctx = this;
    versioned.deleter = delete_versioned;
  }
};

hurray_buffer_handle handle_of(const hurray_handoff &h) {
  hurray_buffer_handle hd;
  REQUIRE(hurray_handle_decode(h.handle, sizeof h.handle, &hd, nullptr) == HURRAY_OK);
  return hd;
}

}  // namespace

TEST_CASE("the DLPack structs have DLPack's 64-bit ABI", "[dlpack][abi]") {
  STATIC_REQUIRE(sizeof(hurray_dl_device) == 8);
  STATIC_REQUIRE(sizeof(hurray_dl_data_type) == 4);
  STATIC_REQUIRE(sizeof(hurray_dl_tensor) == 48);
  STATIC_REQUIRE(offsetof(hurray_dl_tensor, device) == 8);
  STATIC_REQUIRE(offsetof(hurray_dl_tensor, ndim) == 16);
  STATIC_REQUIRE(offsetof(hurray_dl_tensor, dtype) == 20);
  STATIC_REQUIRE(offsetof(hurray_dl_tensor, shape) == 24);
  STATIC_REQUIRE(offsetof(hurray_dl_tensor, strides) == 32);
  STATIC_REQUIRE(offsetof(hurray_dl_tensor, byte_offset) == 40);
  STATIC_REQUIRE(sizeof(hurray_dl_managed_tensor) == 64);
  STATIC_REQUIRE(offsetof(hurray_dl_managed_tensor, manager_ctx) == 48);
  STATIC_REQUIRE(offsetof(hurray_dl_managed_tensor, deleter) == 56);
  STATIC_REQUIRE(sizeof(hurray_dl_managed_tensor_versioned) == 80);
  STATIC_REQUIRE(offsetof(hurray_dl_managed_tensor_versioned, manager_ctx) == 8);
  STATIC_REQUIRE(offsetof(hurray_dl_managed_tensor_versioned, deleter) == 16);
  STATIC_REQUIRE(offsetof(hurray_dl_managed_tensor_versioned, flags) == 24);
  STATIC_REQUIRE(offsetof(hurray_dl_managed_tensor_versioned, dl_tensor) == 32);
}

TEST_CASE("TABLES.md section 6, row by row, both directions", "[dlpack][mapping]") {
  struct Row {
    uint8_t tag, mc;
    int32_t dl;
    bool back;  // from_dl(dl) gives (tag, mc) back
  };
  const Row rows[] = {
      {HURRAY_DEVICE_CPU, HURRAY_MEMORY_STANDARD, 1, true},
      {HURRAY_DEVICE_CUDA, HURRAY_MEMORY_STANDARD, 2, true},
      {HURRAY_DEVICE_CUDA, HURRAY_MEMORY_HOST_PINNED, 3, true},
      {HURRAY_DEVICE_CUDA, HURRAY_MEMORY_UNIFIED, 13, true},
      {HURRAY_DEVICE_CUDA, HURRAY_MEMORY_PEER, 2, false},
      {HURRAY_DEVICE_ROCM, HURRAY_MEMORY_STANDARD, 10, true},
      {HURRAY_DEVICE_ROCM, HURRAY_MEMORY_HOST_PINNED, 11, true},
      {HURRAY_DEVICE_ROCM, HURRAY_MEMORY_UNIFIED, 10, false},
      {HURRAY_DEVICE_ROCM, HURRAY_MEMORY_PEER, 10, false},
      {HURRAY_DEVICE_METAL, HURRAY_MEMORY_STANDARD, 8, true},
      {HURRAY_DEVICE_METAL, HURRAY_MEMORY_HOST_PINNED, 8, false},
      {HURRAY_DEVICE_METAL, HURRAY_MEMORY_UNIFIED, 8, false},
      {HURRAY_DEVICE_VULKAN, HURRAY_MEMORY_STANDARD, 7, true},
      {HURRAY_DEVICE_VULKAN, HURRAY_MEMORY_HOST_PINNED, 7, false},
      {HURRAY_DEVICE_VULKAN, HURRAY_MEMORY_UNIFIED, 7, false},
      {HURRAY_DEVICE_WEBGPU, HURRAY_MEMORY_STANDARD, 15, true},
      {HURRAY_DEVICE_HEXAGON, HURRAY_MEMORY_STANDARD, 16, true},
      {HURRAY_DEVICE_HEXAGON, HURRAY_MEMORY_UNIFIED, 16, false},
      {HURRAY_DEVICE_LEVEL_ZERO, HURRAY_MEMORY_STANDARD, 14, true},
      {HURRAY_DEVICE_LEVEL_ZERO, HURRAY_MEMORY_HOST_PINNED, 14, false},
      {HURRAY_DEVICE_LEVEL_ZERO, HURRAY_MEMORY_UNIFIED, 14, false},
      {HURRAY_DEVICE_LEVEL_ZERO, HURRAY_MEMORY_PEER, 14, false},
      {HURRAY_DEVICE_OPENCL, HURRAY_MEMORY_STANDARD, 4, true},
      {HURRAY_DEVICE_OPENCL, HURRAY_MEMORY_HOST_PINNED, 4, false},
      {HURRAY_DEVICE_OPENCL, HURRAY_MEMORY_UNIFIED, 4, false},
  };
  for (const Row &r : rows) {
    INFO("device_tag " << int(r.tag) << ", memory_class " << int(r.mc));
    int32_t dl = -1;
    REQUIRE(hurray_dlpack_device_to_dl(r.tag, r.mc, &dl, nullptr) == HURRAY_OK);
    CHECK(dl == r.dl);
    uint8_t tag = 0xFF, mc = 0xFF;
    REQUIRE(hurray_dlpack_device_from_dl(dl, &tag, &mc, nullptr) == HURRAY_OK);
    CHECK(tag == r.tag);
    // "back from DLPack": the storage mode / peer-ness is not in DLPack.
    CHECK(mc == (r.back ? r.mc : uint8_t{HURRAY_MEMORY_STANDARD}));
  }
}

TEST_CASE("every (device_tag, memory_class) pair: mapped iff valid and not private",
          "[dlpack][mapping]") {
  int mapped = 0;
  for (unsigned tag = 0; tag < 256; ++tag)
    for (unsigned mc = 0; mc < 256; ++mc) {
      int32_t dl = 0;
      hurray_error err;
      const auto t = static_cast<uint8_t>(tag), m = static_cast<uint8_t>(mc);
      const hurray_status st = hurray_dlpack_device_to_dl(t, m, &dl, &err);
      const bool priv = tag >= 0xF0 && tag <= 0xFE;
      if (!priv && hurray_memory_class_valid_for(t, m)) {
        REQUIRE(st == HURRAY_OK);
        ++mapped;
        uint8_t back_tag = 0, back_mc = 0;
        REQUIRE(hurray_dlpack_device_from_dl(dl, &back_tag, &back_mc, nullptr) == HURRAY_OK);
        REQUIRE(back_tag == t);
      } else {
        REQUIRE(st != HURRAY_OK);
        REQUIRE(err.rule != HURRAY_RULE_NONE);  // refusal names the rule
        REQUIRE(std::string(err.message).rfind(err.rule_id, 0) == 0);
        if (priv) REQUIRE(names_rule(err, "BP-DEV-PRIVATE"));
      }
    }
  CHECK(mapped == 25);  // the valid pairs of TABLES.md section 3, private tags aside
}

TEST_CASE("DLPack device types without a Hurray device are refused, naming the rule",
          "[dlpack][mapping]") {
  for (int32_t dl : {0, 5, 6, 9, 12, 17, 18, -1, 1000}) {
    INFO("DLDeviceType " << dl);
    uint8_t tag = 0x42, mc = 0x42;
    hurray_error err;
    REQUIRE(hurray_dlpack_device_from_dl(dl, &tag, &mc, &err) == HURRAY_E_DEVICE_TAG);
    CHECK(names_rule(err, "BP-DEV-INVALID"));
    CHECK(tag == 0x42);  // untouched
  }
  hurray_error err;
  REQUIRE(hurray_dlpack_device_from_dl(9, nullptr, nullptr, &err) == HURRAY_E_INVALID_ARGUMENT);
  REQUIRE(hurray_dlpack_device_to_dl(0, 0, nullptr, &err) == HURRAY_E_INVALID_ARGUMENT);
}

TEST_CASE("export: a CPU handoff as a DLPack 1.x tensor, zero-copy, deleter releases once",
          "[dlpack][export]") {
  Host mem(4096);
  Counter c;
  hurray_handoff h = wrap_cpu(mem.p, 4096, &c);
  const int64_t shape[2] = {2, 3};
  hurray_dl_managed_tensor_versioned *t = nullptr;
  hurray_error err;
  REQUIRE(hurray_dlpack_export_versioned(&h, kF32, 2, shape, nullptr, 64, &t, &err) ==
          HURRAY_OK);
  CHECK(h.release == nullptr);  // moved into the tensor
  CHECK(t->version.major == 1);
  CHECK(t->version.minor == HURRAY_DLPACK_MINOR_VERSION);
  CHECK(t->flags == 0);
  CHECK(t->dl_tensor.data == mem.p + 64);  // the same bytes, not a copy (byte_offset folded in)
  CHECK(t->dl_tensor.device.device_type == HURRAY_DL_CPU);
  CHECK(t->dl_tensor.device.device_id == 0);
  CHECK(t->dl_tensor.ndim == 2);
  CHECK(t->dl_tensor.dtype.code == HURRAY_DL_FLOAT);
  CHECK(t->dl_tensor.dtype.bits == 32);
  CHECK(t->dl_tensor.dtype.lanes == 1);
  CHECK(t->dl_tensor.shape[0] == 2);
  CHECK(t->dl_tensor.shape[1] == 3);
  REQUIRE(t->dl_tensor.strides != nullptr);  // explicit row-major strides
  CHECK(t->dl_tensor.strides[0] == 3);
  CHECK(t->dl_tensor.strides[1] == 1);
  CHECK(t->dl_tensor.byte_offset == 0);  // folded into data for an address device
  CHECK(c.frees == 0);
  t->deleter(t);
  CHECK(c.frees == 1);
}

TEST_CASE("export: the legacy DLManagedTensor, and the deleter on another thread",
          "[dlpack][export]") {
  Host mem(256);
  Counter c;
  hurray_handoff h = wrap_cpu(mem.p, 256, &c);
  const int64_t shape[1] = {256};
  hurray_dl_managed_tensor *t = nullptr;
  REQUIRE(hurray_dlpack_export_legacy(&h, kU8, 1, shape, nullptr, 0, &t, nullptr) == HURRAY_OK);
  CHECK(t->dl_tensor.data == mem.p);
  CHECK(t->dl_tensor.shape[0] == 256);
  CHECK(t->dl_tensor.strides[0] == 1);
  std::thread other([t] { t->deleter(t); });
  const std::thread::id other_id = other.get_id();
  other.join();
  CHECK(c.frees == 1);
  CHECK(c.free_thread.load() == other_id);  // BP-REL-THREAD: released where deleted
}

TEST_CASE("export: tensors of every rank made and deleted in any order keep their own shape",
          "[dlpack][export]") {
  // The blocks of exported tensors are reused (one spare per thread, up to
  // 7 dimensions): a large tensor never gets a small block, and a tensor
  // alive is never handed out again, whatever rank was deleted before it.
  Host mem(4096);
  Counter c;
  const int32_t ranks[] = {0, 1, 7, 8, HURRAY_DLPACK_MAX_NDIM, 1, HURRAY_DLPACK_MAX_NDIM, 2};
  std::vector<hurray_dl_managed_tensor_versioned *> alive;
  auto check = [](const hurray_dl_managed_tensor_versioned *t) {
    const int32_t n = t->dl_tensor.ndim;
    for (int32_t k = 0; k < n; ++k) {
      CHECK(t->dl_tensor.shape[k] == (k == n - 1 ? n : 1));
      CHECK(t->dl_tensor.strides[k] == (k == n - 1 ? 1 : n));
    }
  };
  for (int round = 0; round < 3; ++round) {
    for (int32_t ndim : ranks) {
      int64_t shape[HURRAY_DLPACK_MAX_NDIM];
      for (int32_t k = 0; k < ndim; ++k) shape[k] = k == ndim - 1 ? ndim : 1;
      hurray_handoff h = wrap_cpu(mem.p, 4096, &c);
      hurray_dl_managed_tensor_versioned *t = nullptr;
      REQUIRE(hurray_dlpack_export_versioned(&h, kU8, ndim, shape, nullptr, 0, &t, nullptr) ==
              HURRAY_OK);
      for (auto *a : alive) CHECK(a != t);
      alive.push_back(t);
      for (auto *a : alive) check(a);
      if (alive.size() == 3) {  // delete the oldest, here or on another thread
        auto *old = alive.front();
        alive.erase(alive.begin());
        if (round == 1) std::thread([old] { old->deleter(old); }).join();
        else old->deleter(old);
      }
    }
  }
  for (auto *a : alive) check(a);
  for (auto *a : alive) a->deleter(a);
  CHECK(c.frees == 3 * static_cast<int>(std::size(ranks)));
}

TEST_CASE("export: READ_ONLY is carried over, and the legacy struct refuses it (BP-ZC-NOMUT)",
          "[dlpack][export]") {
  Host mem(128);
  Counter c;
  hurray_handoff h = wrap_cpu(mem.p, 128, &c, HURRAY_HANDOFF_READ_ONLY);
  const int64_t shape[1] = {32};
  hurray_dl_managed_tensor *legacy = nullptr;
  hurray_error err;
  REQUIRE(hurray_dlpack_export_legacy(&h, kF32, 1, shape, nullptr, 0, &legacy, &err) ==
          HURRAY_E_UNSUPPORTED);
  CHECK(names_rule(err, "BP-ZC-NOMUT"));
  CHECK(legacy == nullptr);
  REQUIRE(h.release != nullptr);  // still the caller's
  hurray_dl_managed_tensor_versioned *t = nullptr;
  REQUIRE(hurray_dlpack_export_versioned(&h, kF32, 1, shape, nullptr, 0, &t, &err) ==
          HURRAY_OK);
  CHECK((t->flags & HURRAY_DLPACK_FLAG_READ_ONLY) != 0);
  CHECK((t->flags & HURRAY_DLPACK_FLAG_IS_COPIED) == 0);
  t->deleter(t);
  CHECK(c.frees == 1);
}

TEST_CASE("export: layouts outside the buffer are refused, the handoff stays the caller's",
          "[dlpack][export]") {
  Host mem(4096);
  Counter c;
  hurray_handoff h = wrap_cpu(mem.p, 96, &c);
  hurray_dl_managed_tensor_versioned *t = nullptr;
  hurray_error err;
  const int64_t too_big[1] = {25};  // 100 bytes of float32 > 96
  CHECK(hurray_dlpack_export_versioned(&h, kF32, 1, too_big, nullptr, 0, &t, &err) ==
        HURRAY_E_INVALID_ARGUMENT);
  const int64_t fits[1] = {24};
  CHECK(hurray_dlpack_export_versioned(&h, kF32, 1, fits, nullptr, 4, &t, &err) ==
        HURRAY_E_INVALID_ARGUMENT);  // the offset pushes the end out
  const int64_t back[1] = {-1};  // first element at the offset, the rest before it
  CHECK(hurray_dlpack_export_versioned(&h, kF32, 1, fits, back, 88, &t, &err) ==
        HURRAY_E_INVALID_ARGUMENT);
  const int64_t neg[1] = {-3};
  CHECK(hurray_dlpack_export_versioned(&h, kF32, 1, neg, nullptr, 0, &t, &err) ==
        HURRAY_E_INVALID_ARGUMENT);
  CHECK(hurray_dlpack_export_versioned(&h, kF32, 1, nullptr, nullptr, 0, &t, &err) ==
        HURRAY_E_INVALID_ARGUMENT);
  CHECK(hurray_dlpack_export_versioned(&h, hurray_dl_data_type{HURRAY_DL_INT, 4, 1}, 1, fits,
                                       nullptr, 0, &t, &err) == HURRAY_E_UNSUPPORTED);
  CHECK(t == nullptr);
  REQUIRE(h.release != nullptr);
  CHECK(c.frees == 0);
  // A reversed view: element 0 is the last float, strides -1, all inside.
  REQUIRE(hurray_dlpack_export_versioned(&h, kF32, 1, fits, back, 92, &t, &err) == HURRAY_OK);
  CHECK(t->dl_tensor.strides[0] == -1);
  t->deleter(t);
  CHECK(c.frees == 1);
}

TEST_CASE("export: a private device tag has no DLPack type (BP-DEV-PRIVATE)",
          "[dlpack][export]") {
  hurray_context *ctx = nullptr;
  hurray_policy *pol = nullptr;
  REQUIRE(hurray_context_create(&ctx, nullptr) == HURRAY_OK);
  REQUIRE(hurray_policy_create(&pol, nullptr) == HURRAY_OK);
  REQUIRE(hurray_policy_allow_private_tag(pol, 0xF0, 1, nullptr) == HURRAY_OK);
  REQUIRE(hurray_context_set_policy(ctx, pol, nullptr) == HURRAY_OK);
  Counter c;
  hurray_buffer_desc d = HURRAY_BUFFER_DESC_INIT;
  d.handle = {4096, 4096, 0xF0, 0, HURRAY_MEMORY_STANDARD, 0};
  d.flags = HURRAY_HANDOFF_OPAQUE_DATA;
  d.data = reinterpret_cast<void *>(uintptr_t{0x1234});
  d.free_fn = Counter::on_free;
  d.free_user = &c;
  hurray_handoff h;
  REQUIRE(hurray_handoff_wrap(ctx, &d, nullptr, &h, nullptr) == HURRAY_OK);
  const int64_t shape[1] = {4096};
  hurray_dl_managed_tensor_versioned *t = nullptr;
  hurray_error err;
  REQUIRE(hurray_dlpack_export_versioned(&h, kU8, 1, shape, nullptr, 0, &t, &err) ==
          HURRAY_E_DEVICE_TAG);
  CHECK(names_rule(err, "BP-DEV-PRIVATE"));
  REQUIRE(hurray_handoff_release(&h, nullptr) == HURRAY_OK);
  CHECK(c.frees == 1);
  hurray_policy_destroy(pol);
  hurray_context_destroy(ctx);
}

TEST_CASE("export: an EVENT handoff is refused until acquired (BP-SYNC-WAIT)",
          "[dlpack][export]") {
  int fake_event = 0;
  Counter c;
  hurray_buffer_desc d = HURRAY_BUFFER_DESC_INIT;
  d.handle = {1 << 20, 4096, HURRAY_DEVICE_CUDA, 0, HURRAY_MEMORY_UNIFIED, 0};
  d.data = reinterpret_cast<void *>(uintptr_t(0x7f0000000000));
  d.device_ordinal = 3;
  d.free_fn = Counter::on_free;
  d.free_user = &c;
  hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
  e.sync_mode = HURRAY_SYNC_EVENT;
  e.sync_object = &fake_event;
  e.event_free_fn = Counter::on_event;
  e.event_user = &c;
  hurray_handoff h;
  REQUIRE(hurray_handoff_wrap(nullptr, &d, &e, &h, nullptr) == HURRAY_OK);
  const int64_t shape[1] = {1 << 18};
  hurray_dl_managed_tensor_versioned *t = nullptr;
  hurray_error err;
  REQUIRE(hurray_dlpack_export_versioned(&h, kF32, 1, shape, nullptr, 0, &t, &err) ==
          HURRAY_E_SYNC);
  CHECK(names_rule(err, "BP-SYNC-WAIT"));
  // A consumer that waited on the event itself releases it, then exports.
  REQUIRE(hurray_handoff_release_event(&h, nullptr) == HURRAY_OK);
  CHECK(c.events == 1);
  REQUIRE(hurray_dlpack_export_versioned(&h, kF32, 1, shape, nullptr, 0, &t, &err) ==
          HURRAY_OK);
  CHECK(t->dl_tensor.device.device_type == HURRAY_DL_CUDA_MANAGED);
  CHECK(t->dl_tensor.device.device_id == 3);
  t->deleter(t);
  CHECK(c.frees == 1);
  CHECK(c.events == 1);
}

TEST_CASE("import: a legacy tensor becomes a checked CPU handoff, and release deletes once",
          "[dlpack][import]") {
  Host mem(4096);
  Producer p;
  p.shape[0] = 4;
  p.shape[1] = 8;
  p.set(mem.p, HURRAY_DL_CPU, 2, kF32, false, 128);
  hurray_handoff h;
  hurray_error err;
  REQUIRE(hurray_dlpack_import_legacy(nullptr, &p.legacy, &h, &err) == HURRAY_OK);
  REQUIRE(hurray_handoff_check(&h, nullptr, &err) == HURRAY_OK);
  const hurray_buffer_handle hd = handle_of(h);
  CHECK(hd.byte_size == 4 * 8 * 4);
  CHECK(hd.alignment == 128);  // the largest power of two dividing the address
  CHECK(hd.device_tag == HURRAY_DEVICE_CPU);
  CHECK(hd.memory_class == HURRAY_MEMORY_STANDARD);
  CHECK(hd.sync_mode == HURRAY_SYNC_PRODUCER_SYNCED);
  CHECK(h.data == mem.p + 128);
  CHECK((h.flags & HURRAY_HANDOFF_READ_ONLY) == 0);
  CHECK(p.deleted == 0);
  hurray_handoff copy = h;
  REQUIRE(hurray_handoff_release(&h, nullptr) == HURRAY_OK);
  CHECK(p.deleted == 1);
  // A stale copy never reaches the producer again (BP-REL-ONCE).
  REQUIRE(hurray_handoff_release(&copy, &err) == HURRAY_E_ALREADY_RELEASED);
  CHECK(p.deleted == 1);
}

TEST_CASE("import: a versioned tensor keeps READ_ONLY, and its deleter runs on any thread",
          "[dlpack][import]") {
  Host mem(4096);
  Producer p;
  p.shape[0] = 1000;
  p.set(mem.p, HURRAY_DL_CPU, 1, kF32, false);
  p.versioned.flags = HURRAY_DLPACK_FLAG_READ_ONLY;
  hurray_handoff h;
  REQUIRE(hurray_dlpack_import_versioned(nullptr, &p.versioned, &h, nullptr) == HURRAY_OK);
  CHECK((h.flags & HURRAY_HANDOFF_READ_ONLY) != 0);
  CHECK(handle_of(h).alignment == 4096);  // capped at a page
  std::thread([&h] { REQUIRE(hurray_handoff_release(&h, nullptr) == HURRAY_OK); }).join();
  CHECK(p.deleted == 1);
}

TEST_CASE("import: strided and reversed tensors hand off the bytes they span",
          "[dlpack][import]") {
  Host mem(4096);
  Producer p;
  SECTION("a 2x2 window of a 2x4 row-major float array") {
    p.shape[0] = 2;
    p.shape[1] = 2;
    p.strides[0] = 4;
    p.strides[1] = 1;
    p.set(mem.p, HURRAY_DL_CPU, 2, kF32, true);
    hurray_handoff h;
    REQUIRE(hurray_dlpack_import_legacy(nullptr, &p.legacy, &h, nullptr) == HURRAY_OK);
    CHECK(handle_of(h).byte_size == 6 * 4);  // elements 0..5
    CHECK(h.data == mem.p);
    REQUIRE(hurray_handoff_release(&h, nullptr) == HURRAY_OK);
  }
  SECTION("a reversed vector: data points at the last element") {
    p.shape[0] = 16;
    p.strides[0] = -1;
    p.set(mem.p + 15 * 8, HURRAY_DL_CPU, 1, {HURRAY_DL_FLOAT, 64, 1}, true);
    hurray_handoff h;
    REQUIRE(hurray_dlpack_import_legacy(nullptr, &p.legacy, &h, nullptr) == HURRAY_OK);
    CHECK(handle_of(h).byte_size == 16 * 8);
    CHECK(h.data == mem.p);  // the lowest byte spanned
    REQUIRE(hurray_handoff_release(&h, nullptr) == HURRAY_OK);
  }
  SECTION("an empty tensor with no data") {
    p.shape[0] = 0;
    p.set(nullptr, HURRAY_DL_CPU, 1, kF32, false);
    hurray_handoff h;
    REQUIRE(hurray_dlpack_import_legacy(nullptr, &p.legacy, &h, nullptr) == HURRAY_OK);
    CHECK(handle_of(h).byte_size == 0);
    REQUIRE(hurray_handoff_release(&h, nullptr) == HURRAY_OK);
  }
  CHECK(p.deleted == 1);
}

TEST_CASE("import: refusals name the rule and leave the tensor to its owner",
          "[dlpack][import]") {
  Host mem(4096);
  Producer p;
  p.shape[0] = 16;
  hurray_handoff h;
  hurray_error err;
  SECTION("data aligned to less than 64 (BP-ALIGN-MIN)") {
    p.set(mem.p + 16, HURRAY_DL_CPU, 1, kF32, false);
    REQUIRE(hurray_dlpack_import_legacy(nullptr, &p.legacy, &h, &err) == HURRAY_E_ALIGNMENT);
    CHECK(names_rule(err, "BP-ALIGN-MIN"));
  }
  SECTION("byte_offset makes a 64-aligned pointer misaligned (BP-ALIGN-MIN)") {
    p.set(mem.p, HURRAY_DL_CPU, 1, kF32, false, 4);
    REQUIRE(hurray_dlpack_import_versioned(nullptr, &p.versioned, &h, &err) ==
            HURRAY_E_ALIGNMENT);
    CHECK(names_rule(err, "BP-ALIGN-MIN"));
  }
  SECTION("negative strides that put the first byte at address 0 (BP-ALIGN-ADDR)") {
    p.strides[0] = -1;
    p.set(reinterpret_cast<void *>(uintptr_t{15 * 4}), HURRAY_DL_CPU, 1, kF32, true);
    REQUIRE(hurray_dlpack_import_legacy(nullptr, &p.legacy, &h, &err) == HURRAY_E_ALIGNMENT);
    CHECK(names_rule(err, "BP-ALIGN-ADDR"));
  }
  SECTION("a device DLPack has but Hurray does not (BP-DEV-INVALID)") {
    p.set(mem.p, HURRAY_DL_EXT_DEV, 1, kF32, false);
    REQUIRE(hurray_dlpack_import_legacy(nullptr, &p.legacy, &h, &err) == HURRAY_E_DEVICE_TAG);
    CHECK(names_rule(err, "BP-DEV-INVALID"));
  }
  SECTION("an opaque OpenCL handle with a byte_offset (BP-ZC-NOCOPY)") {
    p.set(mem.p, HURRAY_DL_OPENCL, 1, kF32, false, 64);
    REQUIRE(hurray_dlpack_import_legacy(nullptr, &p.legacy, &h, &err) == HURRAY_E_UNSUPPORTED);
    CHECK(names_rule(err, "BP-ZC-NOCOPY"));
  }
  SECTION("a DLPack major version this library does not read") {
    p.set(mem.p, HURRAY_DL_CPU, 1, kF32, false);
    p.versioned.version = {2, 0};
    REQUIRE(hurray_dlpack_import_versioned(nullptr, &p.versioned, &h, &err) ==
            HURRAY_E_UNSUPPORTED);
  }
  SECTION("malformed tensors") {
    p.set(mem.p, HURRAY_DL_CPU, -1, kF32, false);
    REQUIRE(hurray_dlpack_import_legacy(nullptr, &p.legacy, &h, &err) ==
            HURRAY_E_INVALID_ARGUMENT);
    p.set(mem.p, HURRAY_DL_CPU, 1, {HURRAY_DL_FLOAT, 0, 1}, false);
    REQUIRE(hurray_dlpack_import_legacy(nullptr, &p.legacy, &h, &err) ==
            HURRAY_E_INVALID_ARGUMENT);
    p.set(nullptr, HURRAY_DL_CPU, 1, kF32, false);
    REQUIRE(hurray_dlpack_import_legacy(nullptr, &p.legacy, &h, &err) ==
            HURRAY_E_INVALID_ARGUMENT);
    p.shape[0] = int64_t{1} << 61;  // 2^64 bytes of float64
    p.set(mem.p, HURRAY_DL_CPU, 1, {HURRAY_DL_FLOAT, 64, 1}, false);
    REQUIRE(hurray_dlpack_import_legacy(nullptr, &p.legacy, &h, &err) ==
            HURRAY_E_INVALID_ARGUMENT);
    p.shape[0] = (int64_t{1} << 62) - 1;  // fits in 64 bits, not in the address space
    p.set(mem.p, HURRAY_DL_CPU, 1, kF32, false);
    REQUIRE(hurray_dlpack_import_legacy(nullptr, &p.legacy, &h, &err) ==
            HURRAY_E_INVALID_ARGUMENT);
    REQUIRE(hurray_dlpack_import_legacy(nullptr, nullptr, &h, &err) ==
            HURRAY_E_INVALID_ARGUMENT);
  }
  CHECK(p.deleted == 0);  // refused: the caller still owns (and deletes) it
}

TEST_CASE("import: device types map to their handle, opaque where DLPack says so",
          "[dlpack][import]") {
  Host mem(4096);
  Producer p;
  p.shape[0] = 1024;
  SECTION("kDLCUDAHost: (CUDA, HOST_PINNED), device_id kept") {
    p.set(mem.p, HURRAY_DL_CUDA_HOST, 1, kF32, false);
    p.legacy.dl_tensor.device.device_id = 2;
    hurray_handoff h;
    REQUIRE(hurray_dlpack_import_legacy(nullptr, &p.legacy, &h, nullptr) == HURRAY_OK);
    CHECK(handle_of(h).device_tag == HURRAY_DEVICE_CUDA);
    CHECK(handle_of(h).memory_class == HURRAY_MEMORY_HOST_PINNED);
    CHECK(h.device_ordinal == 2);
    CHECK((h.flags & HURRAY_HANDOFF_OPAQUE_DATA) == 0);
    REQUIRE(hurray_handoff_release(&h, nullptr) == HURRAY_OK);
  }
  SECTION("kDLOpenCL: data is a cl_mem, OPAQUE_DATA, alignment 64") {
    p.set(reinterpret_cast<void *>(uintptr_t{0x1003}), HURRAY_DL_OPENCL, 1, kF32, false);
    hurray_handoff h;
    REQUIRE(hurray_dlpack_import_legacy(nullptr, &p.legacy, &h, nullptr) == HURRAY_OK);
    CHECK(handle_of(h).device_tag == HURRAY_DEVICE_OPENCL);
    CHECK(handle_of(h).alignment == 64);
    CHECK((h.flags & HURRAY_HANDOFF_OPAQUE_DATA) != 0);
    CHECK(h.data == reinterpret_cast<void *>(uintptr_t{0x1003}));
    REQUIRE(hurray_handoff_release(&h, nullptr) == HURRAY_OK);
  }
  CHECK(p.deleted == 1);
}

TEST_CASE("round trip: export, import the tensor, release: the producer frees once",
          "[dlpack][roundtrip]") {
  Host mem(4096);
  Counter c;
  hurray_handoff h = wrap_cpu(mem.p, 4096, &c, HURRAY_HANDOFF_READ_ONLY);
  const int64_t shape[2] = {16, 64};
  hurray_dl_managed_tensor_versioned *t = nullptr;
  REQUIRE(hurray_dlpack_export_versioned(&h, kF32, 2, shape, nullptr, 0, &t, nullptr) ==
          HURRAY_OK);
  hurray_handoff back;
  REQUIRE(hurray_dlpack_import_versioned(nullptr, t, &back, nullptr) == HURRAY_OK);
  CHECK(back.data == mem.p);
  CHECK(handle_of(back).byte_size == 4096);
  CHECK((back.flags & HURRAY_HANDOFF_READ_ONLY) != 0);
  CHECK(c.frees == 0);
  REQUIRE(hurray_handoff_release(&back, nullptr) == HURRAY_OK);
  CHECK(c.frees == 1);
}
