// include/hurray_dlpack.hpp: a handoff moved into a DLPack tensor and back,
// each release and deleter exactly once (also when the tensor or handoff
// leaves a scope by an exception), nothing moved on failure (the handoff or
// tensor still the caller's), the device mapping, dtype<T>() and bytes().
#include <hurray_dlpack.hpp>

#include <catch2/catch.hpp>

#include "hpp_test_util.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace {

using hpp_test::free_count;

// 256 bytes of CPU memory (64 floats 0..63), 64-aligned, freed through count_free.
hurray::buffer floats(free_count &frees) {
  return hpp_test::wrapped_256(frees, [](void *mem) {
    for (int i = 0; i < 64; ++i) static_cast<float *>(mem)[i] = static_cast<float>(i);
  });
}

const std::int64_t kShape[2] = {8, 8};
const hurray::dlpack::extents shape8x8{kShape, 2};

}  // namespace

TEST_CASE("dlpack: a handoff becomes a tensor whose destructor releases it once", "[hpp-dlpack]") {
  free_count frees;
  {
    hurray::buffer b = floats(frees);
    hurray::handoff h = b.export_handoff();
    hurray::dlpack::tensor t =
        hurray::dlpack::export_versioned(h, hurray::dlpack::dtype<float>(), shape8x8);
    CHECK_FALSE(h.live());  // moved into the tensor
    REQUIRE(t);
    CHECK(t->version.major == HURRAY_DLPACK_MAJOR_VERSION);
    CHECK(t.dl_tensor().ndim == 2);
    CHECK(t.dl_tensor().device.device_type == HURRAY_DL_CPU);
    REQUIRE(t.bytes().size() == 256);
    float f = 0;
    std::memcpy(&f, t.bytes().data() + 63 * sizeof f, sizeof f);
    CHECK(f == 63.0f);
    hurray::dlpack::tensor moved = std::move(t);
    CHECK_FALSE(t);  // NOLINT(bugprone-use-after-move): moved-from is empty
    b = hurray::buffer();
    CHECK(frees.n == 0);  // the tensor holds the handoff
  }
  CHECK(frees.n == 1);
}

TEST_CASE("dlpack: a tensor imported is released through the handoff, once", "[hpp-dlpack]") {
  free_count frees;
  {
    hurray::dlpack::tensor t = hurray::dlpack::export_versioned(
        floats(frees).export_handoff(), hurray::dlpack::dtype<float>(), shape8x8);
    hurray::handoff h = hurray::dlpack::import(t);
    CHECK_FALSE(t);  // moved into the handoff
    REQUIRE(h.live());
    CHECK(h.size() == 256);
    CHECK(h.bytes().size() == 256);
    CHECK(frees.n == 0);
  }
  CHECK(frees.n == 1);
  // And released by an exception leaving the scope.
  try {
    hurray::dlpack::tensor t = hurray::dlpack::export_versioned(
        floats(frees).export_handoff(), hurray::dlpack::dtype<float>(), shape8x8);
    hurray::handoff h = hurray::dlpack::import(t);
    throw std::runtime_error("leaving the scope");
  } catch (const std::runtime_error &) {
  }
  CHECK(frees.n == 2);
}

TEST_CASE("dlpack: a refused export leaves the handoff with the caller", "[hpp-dlpack]") {
  free_count frees;
  {
    hurray::buffer b = floats(frees);
    hurray::handoff h = b.export_handoff();
    const std::int64_t too_big[1] = {65};  // 65 floats in 256 bytes
    hurray::dlpack::tensor t;
    hurray_error e = hurray::no_error();
    CHECK(hurray::dlpack::export_versioned(std::nothrow, h, hurray::dlpack::dtype<float>(),
                                           {too_big, 1}, t, {}, 0, &e) ==
          HURRAY_E_INVALID_ARGUMENT);
    CHECK_FALSE(t);
    CHECK(h.live());  // still the caller's
    try {
      (void)hurray::dlpack::export_versioned(h, hurray::dlpack::dtype<float>(), {too_big, 1});
      FAIL("no exception");
    } catch (const hurray::error &err) {
      CHECK(err.status() == HURRAY_E_INVALID_ARGUMENT);
    }
    CHECK(h.live());
    // A read-only handoff has no legacy tensor (BP-ZC-NOMUT).
    hurray_export_desc ro = HURRAY_EXPORT_DESC_INIT;
    ro.flags = HURRAY_HANDOFF_READ_ONLY;
    hurray::handoff r = b.export_handoff(&ro);
    try {
      (void)hurray::dlpack::export_legacy(r, hurray::dlpack::dtype<float>(), shape8x8);
      FAIL("no exception");
    } catch (const hurray::error &err) {
      CHECK(err.status() == HURRAY_E_UNSUPPORTED);
      CHECK(std::string(err.rule_id()) == "BP-ZC-NOMUT");
    }
    CHECK(r.live());
    hurray::dlpack::tensor versioned =
        hurray::dlpack::export_versioned(r, hurray::dlpack::dtype<float>(), shape8x8);
    CHECK((versioned->flags & HURRAY_DLPACK_FLAG_READ_ONLY) != 0);
    CHECK(frees.n == 0);
  }
  CHECK(frees.n == 1);  // h by its destructor, r through the tensor, b: once
}

namespace {
int deleted = 0;
void count_delete(hurray_dl_managed_tensor_versioned *self) {
  ++deleted;
  self->deleter = nullptr;
}
}  // namespace

TEST_CASE("dlpack: a refused import leaves the tensor with the caller", "[hpp-dlpack]") {
  deleted = 0;
  alignas(64) static float data[16];
  std::int64_t shape[1] = {16};
  // DLPack 2.x: refused (major version), the tensor still ours.
  hurray_dl_managed_tensor_versioned raw;
  std::memset(&raw, 0, sizeof raw);
  raw.version.major = 2;
  raw.deleter = count_delete;
  raw.dl_tensor.data = data;
  raw.dl_tensor.device.device_type = HURRAY_DL_CPU;
  raw.dl_tensor.ndim = 1;
  raw.dl_tensor.dtype = hurray::dlpack::dtype<float>();
  raw.dl_tensor.shape = shape;
  {
    hurray::dlpack::tensor t(&raw);
    hurray::handoff h;
    hurray_error e = hurray::no_error();
    CHECK(hurray::dlpack::import(std::nothrow, t, h, nullptr, hurray::context(), &e) ==
          HURRAY_E_UNSUPPORTED);
    CHECK(t);
    CHECK_FALSE(h.live());
    CHECK_THROWS_AS(hurray::dlpack::import(t), hurray::error);
    CHECK(t);
    CHECK(deleted == 0);
  }
  CHECK(deleted == 1);  // the tensor's destructor
  // Version 1: imported; the handoff's release deletes it, once.
  raw.version.major = 1;
  raw.deleter = count_delete;
  {
    hurray::dlpack::tensor t(&raw);
    hurray::handoff h = hurray::dlpack::import(t);
    CHECK_FALSE(t);
    CHECK(h.bytes().data() == reinterpret_cast<std::byte *>(data));
    CHECK(deleted == 1);
  }
  CHECK(deleted == 2);
}

TEST_CASE("dlpack: the device mapping and element types", "[hpp-dlpack]") {
  CHECK(hurray::dlpack::device_to_dl(HURRAY_DEVICE_CPU, HURRAY_MEMORY_STANDARD) == HURRAY_DL_CPU);
  CHECK(hurray::dlpack::device_to_dl(HURRAY_DEVICE_CUDA, HURRAY_MEMORY_HOST_PINNED) ==
        HURRAY_DL_CUDA_HOST);
  const auto back = hurray::dlpack::device_from_dl(HURRAY_DL_CUDA_MANAGED);
  CHECK(back.first == HURRAY_DEVICE_CUDA);
  CHECK(back.second == HURRAY_MEMORY_UNIFIED);
  try {
    (void)hurray::dlpack::device_from_dl(HURRAY_DL_VPI);
    FAIL("no exception");
  } catch (const hurray::error &e) {
    CHECK(e.status() == HURRAY_E_DEVICE_TAG);
    CHECK(std::string(e.rule_id()) == "BP-DEV-INVALID");
  }
  std::uint8_t tag = 0, cls = 0;
  CHECK(hurray::dlpack::device_from_dl(std::nothrow, HURRAY_DL_EXT_DEV, tag, cls) ==
        HURRAY_E_DEVICE_TAG);
  constexpr hurray_dl_data_type f64 = hurray::dlpack::dtype<double>();
  static_assert(f64.code == HURRAY_DL_FLOAT && f64.bits == 64 && f64.lanes == 1, "double");
  static_assert(hurray::dlpack::dtype<std::int16_t>().code == HURRAY_DL_INT, "int16");
  static_assert(hurray::dlpack::dtype<std::uint8_t>().code == HURRAY_DL_UINT, "uint8");
  static_assert(hurray::dlpack::dtype<bool>().code == HURRAY_DL_BOOL, "bool");
  static_assert(hurray::dlpack::dtype<bool>().bits == 8, "bool is a byte");
}
