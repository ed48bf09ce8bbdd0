// The CPU backend's aligned shared mapping, written once: a shareable
// allocation maps its new memfd with it (cpu.cpp), an import maps the memfd
// another process sent (ipc.cpp). An alignment above a page reserves
// `alignment` bytes of slack, maps at the aligned address inside it and
// gives the unused ends back.
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

#include "map.h"

namespace hurray::detail {

void *map_aligned(int fd, uint64_t offset, size_t len, uint32_t alignment, int prot,
                  int *error) noexcept {
  const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  if (alignment <= page) {  // mmap's own alignment is enough: one call
    void *p = mmap(nullptr, len, prot, MAP_SHARED, fd, static_cast<off_t>(offset));
    if (p == MAP_FAILED) {
      *error = errno;
      return nullptr;
    }
    return p;
  }
  const size_t slack = alignment;
  void *reserve = mmap(nullptr, len + slack, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (reserve == MAP_FAILED) {
    *error = errno;
    return nullptr;
  }
  const auto base = reinterpret_cast<uintptr_t>(reserve);
  const uintptr_t aligned = (base + slack - 1) & ~(uintptr_t(alignment) - 1);
  void *p = mmap(reinterpret_cast<void *>(aligned), len, prot, MAP_SHARED | MAP_FIXED, fd,
                 static_cast<off_t>(offset));
  if (p == MAP_FAILED) {
    *error = errno;
    munmap(reserve, len + slack);
    return nullptr;
  }
  if (aligned > base) munmap(reserve, aligned - base);
  const uintptr_t end = aligned + len, rend = base + len + slack;
  if (rend > end) munmap(reinterpret_cast<void *>(end), rend - end);
  return p;
}

}  // namespace hurray::detail
