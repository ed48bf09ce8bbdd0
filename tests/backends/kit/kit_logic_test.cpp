// Unit tests of the plugin kit (src/backends/kit), the logic the plugins
// share: error messages, alignment arithmetic, the over-allocate-and-align
// loop, the allocation registry, IPC handle packing, opening a library. No
// device and no vendor library needed. Not built by this folder's
// CMakeLists.txt: compiled into the tests of each GPU plugin
// (tests/backends/cuda, tests/backends/hip), named after it by
// GPU_COMMON_TEST_PREFIX ("cuda: gpu-common: ..." or "hip: gpu-common: ...").
#include "class_name.h"
#include "kit/align.h"
#include "kit/errors.h"
#include "kit/ipc.h"
#include "kit/library.h"
#include "kit/registry.h"

#include <dlfcn.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#ifndef GPU_COMMON_TEST_PREFIX
#error "define GPU_COMMON_TEST_PREFIX"
#endif
#define NAME(text) GPU_COMMON_TEST_PREFIX "gpu-common: " text

using namespace hurray::kit;
using hurray::plugin::class_name;

TEST_CASE(NAME("vendor errors read [function] NAME: description (details)")) {
  hurray_error err;
  std::memset(&err, 0x55, sizeof err);
  CHECK(vendor_fail(&err, HURRAY_E_OUT_OF_MEMORY, "cuMemAlloc", "CUDA_ERROR_OUT_OF_MEMORY",
                    "out of memory", nullptr) == HURRAY_E_OUT_OF_MEMORY);
  CHECK(std::string(err.message) == "[cuMemAlloc] CUDA_ERROR_OUT_OF_MEMORY: out of memory");
  CHECK(err.status == HURRAY_E_OUT_OF_MEMORY);
  CHECK(err.rule == HURRAY_RULE_NONE);
  CHECK(err.severity == HURRAY_SEVERITY_ERROR);
  CHECK(err.reserved0 == 0);
  CHECK(err.buffer_index == -1);
  CHECK(err.byte_offset == -1);
  CHECK(err.rule_id[0] == '\0');

  vendor_fail(&err, HURRAY_E_BACKEND, "hipMalloc", "hipErrorOutOfMemory", "out of memory",
              "%d bytes on '%s'", 4096, "gfx90a");
  CHECK(std::string(err.message) ==
        "[hipMalloc] hipErrorOutOfMemory: out of memory (4096 bytes on 'gfx90a')");
  CHECK(err.status == HURRAY_E_BACKEND);

  // No description, no details.
  vendor_fail(&err, HURRAY_E_BACKEND, "cuInit", "CUDA error 12345", nullptr, nullptr);
  CHECK(std::string(err.message) == "[cuInit] CUDA error 12345");
  vendor_fail(&err, HURRAY_E_BACKEND, "cuInit", "X", "", "%s", "d");
  CHECK(std::string(err.message) == "[cuInit] X (d)");

  // Long text is cut, and NUL-terminated.
  const std::string long_text(1000, 'x');
  vendor_fail(&err, HURRAY_E_BACKEND, "f", "N", long_text.c_str(), "%s", long_text.c_str());
  CHECK(std::strlen(err.message) == sizeof err.message - 1);

  // err may be NULL.
  CHECK(vendor_fail(nullptr, HURRAY_E_IO, "f", "N", "d", nullptr) == HURRAY_E_IO);
  CHECK(fail(nullptr, HURRAY_E_IO, "x") == HURRAY_E_IO);
}

TEST_CASE(NAME("memory class names")) {
  CHECK(std::string(class_name(HURRAY_MEMORY_STANDARD)) == "STANDARD");
  CHECK(std::string(class_name(HURRAY_MEMORY_HOST_PINNED)) == "HOST_PINNED");
  CHECK(std::string(class_name(HURRAY_MEMORY_UNIFIED)) == "UNIFIED");
  CHECK(std::string(class_name(HURRAY_MEMORY_PEER)) == "PEER");
  CHECK(std::string(class_name(0x04)) == "reserved");
  CHECK(std::string(class_name(0xF3)) == "private");
  CHECK(std::string(class_name(0xFF)) == "invalid");
}

TEST_CASE(NAME("alignment arithmetic")) {
  CHECK(is_pow2(1));
  CHECK(is_pow2(256));
  CHECK(is_pow2(uint64_t{1} << 63));
  CHECK_FALSE(is_pow2(0));
  CHECK_FALSE(is_pow2(96));

  CHECK(alignment_of(0x1000) == 0x1000);
  CHECK(alignment_of(0x7f0000200100) == 0x100);
  CHECK(alignment_of(0x7f0000200000) == 0x200000);
  CHECK(alignment_of(1) == 1);
  CHECK(alignment_of(0) == 0x80000000u);                   // every alignment: capped
  CHECK(alignment_of(uintptr_t{1} << 40) == 0x80000000u);  // capped to a u32

  CHECK(align_up(0, 256) == 0);
  CHECK(align_up(1, 256) == 256);
  CHECK(align_up(256, 256) == 256);
  CHECK(align_up(0x10001, 0x1000) == 0x11000);
  CHECK(align_up(UINTPTR_MAX - 10, 4096) == 0);  // does not fit: 0

  uint64_t n = 0;
  REQUIRE(padded_size(1000, 64, 256, &n));  // the runtime's alignment covers it
  CHECK(n == 1000);
  REQUIRE(padded_size(1000, 256, 256, &n));
  CHECK(n == 1000);
  REQUIRE(padded_size(1000, 65536, 256, &n));  // worst case: base at 256 past a 64 KiB line
  CHECK(n == 1000 + 65536 - 256);
  REQUIRE(padded_size(1000, 4096, 1, &n));
  CHECK(n == 1000 + 4095);
  CHECK_FALSE(padded_size(UINT64_MAX - 100, 65536, 256, &n));

  // place: the first aligned address, if the bytes fit in the block.
  CHECK(place(0x10100, 0x10000 + 0x100, 0x100, 0x10000) == 0x20000);
  CHECK(place(0x10100, 0x10000, 0x100, 0x10000) == 0x20000);  // exactly fits
  CHECK(place(0x10100, 0x10000 - 1, 0x100, 0x10000) == 0);    // one byte short
  CHECK(place(0x20000, 0x100, 0x100, 0x10000) == 0x20000);    // already aligned
  CHECK(place(UINTPTR_MAX - 0x10, 0x10, 1, 0x1000) == 0);     // overflow
  // Worst case of padded_size: base 256 past an alignment line.
  REQUIRE(padded_size(5000, 65536, 256, &n));
  const uintptr_t d = place(0x7f0000000100, n, 5000, 65536);
  CHECK(d == 0x7f0000010000);
  CHECK(d + 5000 <= 0x7f0000000100 + n);
}

namespace {

// A stand-in for a runtime allocator: hands out the addresses queued in
// `next`, records every request and every release.
struct FakeRuntime {
  std::vector<uintptr_t> next;
  std::vector<uint64_t> asked;
  std::vector<uintptr_t> released;
  bool fail = false;
  bool alloc(uint64_t n, uintptr_t *base) {
    asked.push_back(n);
    if (fail || next.empty()) return false;
    *base = next.front();
    next.erase(next.begin());
    return true;
  }
  void release(uintptr_t b) { released.push_back(b); }
};

AllocResult run(FakeRuntime &rt, uint64_t size, uint64_t align, uintptr_t *base, uintptr_t *data) {
  return alloc_aligned(
      size, align, 256, [&](uint64_t n, uintptr_t *b) { return rt.alloc(n, b); },
      [&](uintptr_t b) { rt.release(b); }, base, data);
}

}  // namespace

TEST_CASE(NAME("over-allocate and align: one try, then a padded block")) {
  uintptr_t base = 0, data = 0;
  SECTION("the first block is aligned: kept as is") {
    FakeRuntime rt;
    rt.next = {0x7f0000010000};
    REQUIRE(run(rt, 5000, 65536, &base, &data) == AllocResult::kOk);
    CHECK(base == 0x7f0000010000);
    CHECK(data == base);
    CHECK(rt.asked == std::vector<uint64_t>{5000});
    CHECK(rt.released.empty());
  }
  SECTION("the first block is not: given back, and the data placed in a padded one") {
    FakeRuntime rt;
    rt.next = {0x7f0000000100, 0x7f0000000300};
    REQUIRE(run(rt, 5000, 65536, &base, &data) == AllocResult::kOk);
    CHECK(rt.released == std::vector<uintptr_t>{0x7f0000000100});
    CHECK(rt.asked == (std::vector<uint64_t>{5000, 5000 + 65536 - 256}));
    CHECK(base == 0x7f0000000300);
    CHECK(data == 0x7f0000010000);
    CHECK(data % 65536 == 0);
    CHECK(data + 5000 <= base + rt.asked[1]);
  }
  SECTION("the runtime fails: kFailed, nothing to free") {
    FakeRuntime rt;
    rt.fail = true;
    CHECK(run(rt, 5000, 4096, &base, &data) == AllocResult::kFailed);
    CHECK(rt.released.empty());
  }
  SECTION("the runtime fails the padded try: kFailed, the first block given back") {
    FakeRuntime rt;
    rt.next = {0x7f0000000100};
    CHECK(run(rt, 5000, 4096, &base, &data) == AllocResult::kFailed);
    CHECK(rt.released == std::vector<uintptr_t>{0x7f0000000100});
  }
  SECTION("a runtime that breaks its base alignment: kMisaligned, both blocks given back") {
    FakeRuntime rt;
    rt.next = {0x7f0000000010, 0x7f0000000010};
    CHECK(run(rt, 5000, 65536, &base, &data) == AllocResult::kMisaligned);
    CHECK(rt.released.size() == 2);
  }
  SECTION("a size that overflows once padded: kTooLarge") {
    FakeRuntime rt;
    rt.next = {0x7f0000000100};
    CHECK(run(rt, UINT64_MAX - 10, 65536, &base, &data) == AllocResult::kTooLarge);
    CHECK(rt.released == std::vector<uintptr_t>{0x7f0000000100});
  }
}

TEST_CASE(NAME("the registry finds the allocation that holds an address")) {
  Registry r;
  Allocation a, b, empty;
  a.data = 0x1000;
  a.byte_size = 0x100;
  a.memory_class = HURRAY_MEMORY_PEER;
  a.device = 1;
  b.data = 0x1100;  // right after a
  b.byte_size = 1;
  empty.data = 0x5000;
  empty.byte_size = 0;
  REQUIRE(r.add(&a));
  REQUIRE(r.add(&b));
  REQUIRE(r.add(&empty));
  Allocation out;
  REQUIRE(r.find(0x1000, &out));
  CHECK(out.memory_class == HURRAY_MEMORY_PEER);
  CHECK(out.device == 1);
  REQUIRE(r.find(0x10ff, &out));
  CHECK(out.data == 0x1000);
  REQUIRE(r.find(0x1100, &out));  // the end of a is b
  CHECK(out.data == 0x1100);
  CHECK_FALSE(r.find(0x1101, &out));
  CHECK_FALSE(r.find(0xfff, &out));
  CHECK_FALSE(r.find(0x5000, &out));  // an empty range holds nothing
  r.remove(&a);
  CHECK_FALSE(r.find(0x1000, &out));
  int taken = 0;
  while (r.take_any() != nullptr) ++taken;
  CHECK(taken == 2);
  CHECK(r.take_any() == nullptr);
}

TEST_CASE(NAME("IPC handles carry the kind, size, offset and 64 vendor bytes")) {
  CHECK(fourcc('C', 'U', 'M', '1') == 0x314D5543u);
  unsigned char vendor[64];
  for (int i = 0; i < 64; ++i) vendor[i] = static_cast<unsigned char>(i * 7 + 1);
  hurray_backend_ipc_handle h;
  std::memset(&h, 0xEE, sizeof h);
  pack_ipc(fourcc('C', 'U', 'M', '1'), vendor, sizeof vendor, 1 << 20, 4096, &h);
  CHECK(h.kind == fourcc('C', 'U', 'M', '1'));
  CHECK(h.fd == -1);
  CHECK(h.byte_size == 1 << 20);
  CHECK(h.offset == 4096);
  CHECK(std::memcmp(h.bytes, vendor, 64) == 0);

  unsigned char back[64] = {};
  const char *why = nullptr;
  REQUIRE(unpack_ipc(&h, fourcc('C', 'U', 'M', '1'), back, sizeof back, &why));
  CHECK(std::memcmp(back, vendor, 64) == 0);
  // Another kind (an event handle, another backend's memory) is refused.
  CHECK_FALSE(unpack_ipc(&h, fourcc('C', 'U', 'E', '1'), back, sizeof back, &why));
  CHECK(std::string(why).find("another kind") != std::string::npos);
  CHECK_FALSE(unpack_ipc(&h, fourcc('H', 'P', 'M', '1'), back, sizeof back, &why));
  CHECK_FALSE(unpack_ipc(nullptr, fourcc('C', 'U', 'M', '1'), back, sizeof back, &why));
  unsigned char big[65];
  CHECK_FALSE(unpack_ipc(&h, fourcc('C', 'U', 'M', '1'), big, sizeof big, &why));

  // A shorter vendor handle leaves zeros after it.
  pack_ipc(7, vendor, 16, 0, 0, &h);
  CHECK(std::memcmp(h.bytes, vendor, 16) == 0);
  for (size_t i = 16; i < sizeof h.bytes; ++i) CHECK(h.bytes[i] == 0);
}

TEST_CASE(NAME("an import refuses another kind, naming both by their four characters")) {
  CHECK(std::string(kind_name(fourcc('V', 'K', 'M', '1')).text) == "'VKM1'");
  CHECK(std::string(kind_name(1234).text) == "0x000004d2");  // not printable
  CHECK(std::string(kind_name(0).text) == "0x00000000");
  hurray_backend_ipc_handle h{};
  h.kind = fourcc('C', 'U', 'E', '1');
  hurray_error err{};
  CHECK(check_kind(&h, fourcc('C', 'U', 'E', '1'), "ipc_import_event", "an event handle", &err) ==
        HURRAY_OK);
  CHECK(check_kind(&h, fourcc('C', 'U', 'M', '1'), "ipc_import_memory", "a memory handle", &err) ==
        HURRAY_E_INVALID_ARGUMENT);
  CHECK(err.status == HURRAY_E_INVALID_ARGUMENT);
  CHECK(std::string(err.message)
            .find(": ipc_import_memory: not a memory handle: its kind is 'CUE1', this plugin's is "
                  "'CUM1'") != std::string::npos);
  CHECK(check_kind(nullptr, fourcc('C', 'U', 'M', '1'), "ipc_import_memory", "a memory handle",
                   &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(std::string(err.message).find("the IPC handle is NULL") != std::string::npos);
}

TEST_CASE(NAME("the vendor library: an override, a list of names, dlerror text")) {
  std::string opened, why;
  const char *const none[] = {"libhurray-test-absent-1.so", "libhurray-test-absent-2.so", nullptr};
  unsetenv("HURRAY_GPU_COMMON_TEST_LIBRARY");
  CHECK(open_library("HURRAY_GPU_COMMON_TEST_LIBRARY", none, &opened, &why) == nullptr);
  CHECK(why ==
        "libhurray-test-absent-1.so: cannot open shared object file: No such file or directory; "
        "libhurray-test-absent-2.so: cannot open shared object file: No such file or directory");

  const char *const libm[] = {"libhurray-test-absent-1.so", "libm.so.6", nullptr};
  void *lib = open_library("HURRAY_GPU_COMMON_TEST_LIBRARY", libm, &opened, &why);
  REQUIRE(lib != nullptr);
  CHECK(opened == "libm.so.6");
  CHECK(why.empty());
  dlclose(lib);

  // The environment names one file, and only that one is tried.
  setenv("HURRAY_GPU_COMMON_TEST_LIBRARY", "/nonexistent/libvendor.so", 1);
  CHECK(open_library("HURRAY_GPU_COMMON_TEST_LIBRARY", libm, &opened, &why) == nullptr);
  CHECK(why ==
        "/nonexistent/libvendor.so: cannot open shared object file: No such file or directory");
  setenv("HURRAY_GPU_COMMON_TEST_LIBRARY", "", 1);  // empty: as if unset
  lib = open_library("HURRAY_GPU_COMMON_TEST_LIBRARY", libm, &opened, &why);
  CHECK(lib != nullptr);
  if (lib != nullptr) dlclose(lib);
  unsetenv("HURRAY_GPU_COMMON_TEST_LIBRARY");
}

TEST_CASE(NAME("the vendor library: short reasons for several names")) {
  std::string opened, why;
  const char *const none[] = {"libhurray-test-absent-1.so", "libhurray-test-absent-2.so", nullptr};
  unsetenv("HURRAY_GPU_COMMON_TEST_LIBRARY");
  CHECK(open_library("HURRAY_GPU_COMMON_TEST_LIBRARY", none, &opened, &why, Reasons::kShort) ==
        nullptr);
  CHECK(why == "libhurray-test-absent-1.so: not found; libhurray-test-absent-2.so: not found");
  // One name (here the environment's): dlopen's whole text, clipped at 255.
  const std::string path = "/nonexistent/" + std::string(300, 'x') + ".so";
  setenv("HURRAY_GPU_COMMON_TEST_LIBRARY", path.c_str(), 1);
  CHECK(open_library("HURRAY_GPU_COMMON_TEST_LIBRARY", none, &opened, &why, Reasons::kShort) ==
        nullptr);
  CHECK(why.size() == 255);
  CHECK(why.rfind("/nonexistent/xxx", 0) == 0);
  unsetenv("HURRAY_GPU_COMMON_TEST_LIBRARY");
}

namespace {

// A table of three functions of libm, one of which libm lacks.
struct MathApi {
  double (*cos)(double) = nullptr;
  double (*absent)(double) = nullptr;
  double (*sin)(double) = nullptr;
};
constexpr Symbol<MathApi> kMathRequired[] = {
    {"cos", slot<&MathApi::cos>, true},
    {"hurray_test_absent_1", slot<&MathApi::absent>, true},
    {"sin", slot<&MathApi::sin>, true},
    {"hurray_test_absent_2", slot<&MathApi::absent>, true},
};
constexpr Symbol<MathApi> kMathOptional[] = {
    {"cos", slot<&MathApi::cos>, true},
    {"hurray_test_absent_1", slot<&MathApi::absent>, false},
    {"sin", slot<&MathApi::sin>, true},
};

// A lookup that is no library: it counts the names asked for.
AnyFunction counting_lookup(void *context, const char *name) noexcept {
  ++*static_cast<int *>(context);
  return std::strcmp(name, "cos") == 0 ? reinterpret_cast<AnyFunction>(&counting_lookup)
                                       : nullptr;
}

}  // namespace

TEST_CASE(NAME("the vendor symbols: one table, required and optional, any lookup")) {
  void *libm = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
  REQUIRE(libm != nullptr);
  MathApi api;
  std::string missing = "stale";
  // Every symbol is looked up; the first required one missing is named,
  // and all of them in *missing.
  CHECK(std::string(resolve_symbols<MathApi>(from_library(libm), kMathRequired, &api,
                                             &missing)) == "hurray_test_absent_1");
  CHECK(missing == "hurray_test_absent_1, hurray_test_absent_2");
  CHECK(api.cos != nullptr);
  CHECK(api.sin != nullptr);
  CHECK(api.absent == nullptr);
  CHECK(api.cos(0.0) == 1.0);
  // A missing optional one is no failure: its slot is nullptr.
  MathApi optional;
  optional.absent = [](double x) { return x; };
  CHECK(resolve_symbols<MathApi>(from_library(libm), kMathOptional, &optional, &missing) ==
        nullptr);
  CHECK(missing.empty());
  CHECK(optional.absent == nullptr);
  CHECK(optional.sin(0.0) == 0.0);
  dlclose(libm);

  // Any lookup: it is asked once per entry, in order.
  int asked = 0;
  MathApi counted;
  CHECK(std::string(resolve_symbols<MathApi>(Lookup{counting_lookup, &asked}, kMathOptional,
                                             &counted)) == "sin");
  CHECK(asked == 3);
  CHECK(reinterpret_cast<AnyFunction>(counted.cos) ==
        reinterpret_cast<AnyFunction>(&counting_lookup));
}
