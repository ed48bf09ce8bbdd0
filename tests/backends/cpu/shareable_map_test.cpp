// A shareable CPU buffer aligned above a page (src/backends/cpu/map.cpp,
// map_aligned) is mapped inside an address range it reserved first, with
// `alignment` bytes of slack, and never over a mapping it does not own: its
// MAP_FIXED mapping would silently replace whatever lies there.
//
// The test builds a trap: one mapping of known bytes with a hole punched in
// its middle, the hole exactly the size of a reservation. Every free range of
// the address space above the trap is filled first (PROT_NONE, from
// /proc/self/maps), so that the kernel's top-down search reaches the hole
// before any other range that fits. Two holes:
//  - len + alignment: the reservation of the code as written fills it, so the
//    buffer must lie inside the hole;
//  - len: a reservation without slack fills it and the aligned address falls
//    below it, into the known bytes, which then must still be there.
#include <hurray.h>

#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "../../common/shareable_alloc.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr uint64_t kMiB = 1u << 20;

unsigned char sentinel_byte(uint64_t i) { return static_cast<unsigned char>(0xA5 ^ (i * 7)); }

struct Range {
  uintptr_t lo, hi;
};

// The mappings of this process, lowest first, the stack (and vsyscall above
// it) apart: the free range below the stack is not one mmap chooses from.
void read_maps(std::vector<Range> *maps, uintptr_t *stack_lo) {
  std::ifstream in("/proc/self/maps");
  REQUIRE(in);
  *stack_lo = UINTPTR_MAX;
  std::string line;
  while (std::getline(in, line)) {
    unsigned long lo = 0, hi = 0;
    REQUIRE(std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) == 2);
    const bool stack = line.find("[stack]") != std::string::npos;
    if (stack) *stack_lo = lo;
    if (stack || line.find("[vsyscall]") != std::string::npos) continue;
    maps->push_back({lo, hi});
  }
}

// Known bytes, a hole of `hole` bytes, known bytes again; every free range
// between the trap and the highest mapping above it is filled, so that the
// hole is the highest free range the kernel can choose.
struct Trap {
  unsigned char *base = nullptr;
  uint64_t below = 0, hole = 0, above = 0;
  std::vector<Range> fillers;

  Trap(uint64_t guard, uint64_t hole_bytes) : below(guard), hole(hole_bytes), above(guard) {
    const uint64_t total = below + hole + above;
    void *p = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(p != MAP_FAILED);
    base = static_cast<unsigned char *>(p);
    for (uint64_t i = 0; i < total; ++i) base[i] = sentinel_byte(i);
    REQUIRE(munmap(base + below, hole) == 0);
    std::vector<Range> maps;
    uintptr_t stack_lo = 0;
    read_maps(&maps, &stack_lo);
    const auto top = reinterpret_cast<uintptr_t>(base) + total;
    for (size_t i = 0; i + 1 < maps.size(); ++i) {
      const uintptr_t lo = maps[i].hi, hi = maps[i + 1].lo;
      if (lo < top || hi <= lo || hi >= stack_lo) continue;
      void *f = mmap(reinterpret_cast<void *>(lo), hi - lo, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
      if (f == MAP_FAILED) continue;  // taken meanwhile: not a free range any more
      if (f != reinterpret_cast<void *>(lo)) {  // a kernel without MAP_FIXED_NOREPLACE
        munmap(f, hi - lo);
        continue;
      }
      fillers.push_back({lo, hi});
    }
  }
  ~Trap() {
    for (const Range &r : fillers) munmap(reinterpret_cast<void *>(r.lo), r.hi - r.lo);
    munmap(base, below);
    munmap(base + below + hole, above);
  }
  uintptr_t hole_lo() const { return reinterpret_cast<uintptr_t>(base) + below; }
  uintptr_t hole_hi() const { return hole_lo() + hole; }
  // The first byte of the known ones that differs, or -1.
  int64_t first_changed() const {
    for (uint64_t i = 0; i < below; ++i)
      if (base[i] != sentinel_byte(i)) return static_cast<int64_t>(i);
    const uint64_t from = below + hole;
    for (uint64_t i = from; i < from + above; ++i)
      if (base[i] != sentinel_byte(i)) return static_cast<int64_t>(i);
    return -1;
  }
};

using hurray_test::alloc_shareable;

}  // namespace

TEST_CASE("a shareable buffer aligned above a page lies inside its reservation and maps over "
          "nothing it does not own",
          "[cpu][shareable]") {
  const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  // The library's own start-up (backends, caches) before the traps.
  hurray_buffer_unref(alloc_shareable(page, 64));
  for (const uint32_t alignment : {64u << 10, 2u << 20}) {
    const uint64_t len = 2 * uint64_t(alignment) + 3 * page;  // not a multiple of the alignment
    INFO("alignment " << alignment << ", " << len << " bytes");
    {
      // A hole the reservation fills exactly: the buffer lies inside it.
      Trap trap(2 * uint64_t(alignment), len + alignment);
      hurray_buffer *b = alloc_shareable(len, alignment);
      const auto at = reinterpret_cast<uintptr_t>(hurray_buffer_data(b));
      INFO("hole " << std::hex << trap.hole_lo() << "-" << trap.hole_hi() << ", buffer at " << at
                   << std::dec << ", " << trap.fillers.size() << " free ranges filled above");
      CHECK(at % alignment == 0);
      CHECK(at >= trap.hole_lo());
      CHECK(at + len <= trap.hole_hi());
      CHECK(trap.first_changed() == -1);
      hurray_buffer_unref(b);
    }
    {
      // A hole of `len` bytes, too small for the reservation: the buffer lies
      // elsewhere, and the known bytes around the hole are still there.
      Trap trap(2 * uint64_t(alignment), len);
      hurray_buffer *b = alloc_shareable(len, alignment);
      const auto at = reinterpret_cast<uintptr_t>(hurray_buffer_data(b));
      const auto lo = reinterpret_cast<uintptr_t>(trap.base);
      INFO("known bytes " << std::hex << lo << "-" << trap.hole_hi() + trap.above
                          << ", buffer at " << at << std::dec);
      CHECK(at % alignment == 0);
      CHECK(trap.first_changed() == -1);
      CHECK((at + len <= lo || at >= trap.hole_hi() + trap.above));
      std::memset(hurray_buffer_data(b), 0x5A, len);
      CHECK(trap.first_changed() == -1);
      hurray_buffer_unref(b);
    }
  }
}
