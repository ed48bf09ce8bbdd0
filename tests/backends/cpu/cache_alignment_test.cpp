// The CPU backend's cache of freed large blocks (src/backends/cpu/cpu.cpp)
// hands a block out again only where it has the size and the alignment
// asked for. The block must be in the cache when the stricter request comes,
// or the test sees a fresh allocation and proves nothing: so each test first
// shows the block is reused for a request it does honour.
#include <hurray.h>

#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

namespace {

constexpr uint64_t kSize = 1u << 20;  // cached: 256 KiB and more
constexpr uint32_t kHuge = 1u << 21;  // 2 MiB

hurray_buffer *alloc(uint32_t alignment, uint64_t size = kSize) {
  hurray_alloc_desc d = HURRAY_ALLOC_DESC_INIT;
  d.byte_size = size;
  d.alignment = alignment;
  hurray_buffer *b = nullptr;
  hurray_error err{};
  REQUIRE(hurray_buffer_alloc(nullptr, &d, &b, &err) == HURRAY_OK);
  return b;
}

uintptr_t address(const hurray_buffer *b) {
  return reinterpret_cast<uintptr_t>(hurray_buffer_data(b));
}

}  // namespace

TEST_CASE("a cached 64-aligned block is not handed out for a 2 MiB-aligned request",
          "[cpu][cache]") {
  // A 64-aligned block that is not 2 MiB-aligned by chance (bounded tries;
  // the others are held meanwhile so that they are not given back).
  std::vector<hurray_buffer *> held;
  hurray_buffer *a = nullptr;
  for (int i = 0; i < 8 && !a; ++i) {
    hurray_buffer *b = alloc(64);
    if (address(b) % kHuge != 0) a = b;
    else held.push_back(b);
  }
  REQUIRE(a != nullptr);
  const uintptr_t first = address(a);
  hurray_buffer_unref(a);  // into the cache

  // It is in the cache: the next 64-aligned request of its size gets it.
  hurray_buffer *again = alloc(64);
  REQUIRE(address(again) == first);
  hurray_buffer_unref(again);  // into the cache again

  // A 2 MiB-aligned request of the same size must not get it.
  hurray_buffer *huge = alloc(kHuge);
  CHECK(address(huge) % kHuge == 0);
  CHECK(address(huge) != first);
  hurray_buffer_unref(huge);
  for (hurray_buffer *b : held) hurray_buffer_unref(b);
}

TEST_CASE("a cached block is reused for a request of its size whose alignment it honours",
          "[cpu][cache]") {
  constexpr uint64_t kOwnSize = kSize + 4096;  // a size no other test leaves cached
  hurray_buffer *a = alloc(kHuge, kOwnSize);
  const uintptr_t first = address(a);
  REQUIRE(first % kHuge == 0);
  hurray_buffer_unref(a);
  // 2 MiB-aligned is 4096-aligned: the cached block serves it.
  hurray_buffer *b = alloc(4096, kOwnSize);
  CHECK(address(b) == first);
  hurray_buffer_unref(b);
}
