#include "cpu.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "../../core/internal.h"

namespace hurray::detail {

hurray_status cpu_alloc(uint64_t byte_size, uint32_t alignment, bool shareable,
                        CpuAllocation *out, hurray_error *err) noexcept {
  *out = CpuAllocation{};
  if (byte_size == 0) return HURRAY_OK;  // an empty buffer has no memory
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  if (byte_size > (UINT64_MAX - alignment - page) / 2)
    return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE,
                "cpu: %llu bytes cannot be allocated", static_cast<unsigned long long>(byte_size));

  if (!shareable) {
    void *p = nullptr;
    const int rc = posix_memalign(&p, alignment, byte_size);
    if (rc != 0)
      return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE,
                  "[posix_memalign] %s: %llu bytes aligned to %u", std::strerror(rc),
                  static_cast<unsigned long long>(byte_size), alignment);
    out->data = out->map_base = p;
    return HURRAY_OK;
  }

  // Shareable: a memfd the IPC transport can pass to another process, mapped
  // here at an address aligned to max(page, alignment).
  const size_t len = static_cast<size_t>((byte_size + page - 1) / page * page);
  const int fd = memfd_create("hurray-buffer", MFD_CLOEXEC);
  if (fd < 0)
    return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "[memfd_create] %s", std::strerror(errno));
  if (ftruncate(fd, static_cast<off_t>(len)) != 0) {
    const int e = errno;
    close(fd);
    return fail(err, e == ENOMEM || e == EFBIG ? HURRAY_E_OUT_OF_MEMORY : HURRAY_E_IO,
                HURRAY_RULE_NONE, "[ftruncate] %s: %zu bytes", std::strerror(e), len);
  }
  const size_t slack = alignment > page ? alignment : 0;
  void *reserve = mmap(nullptr, len + slack, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (reserve == MAP_FAILED) {
    const int e = errno;
    close(fd);
    return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "[mmap] %s", std::strerror(e));
  }
  const uintptr_t base = reinterpret_cast<uintptr_t>(reserve);
  const uintptr_t aligned = slack ? (base + slack - 1) & ~(uintptr_t(alignment) - 1) : base;
  void *p = mmap(reinterpret_cast<void *>(aligned), len, PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_FIXED, fd, 0);
  if (p == MAP_FAILED) {
    const int e = errno;
    munmap(reserve, len + slack);
    close(fd);
    return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "[mmap] %s", std::strerror(e));
  }
  // give back the unused ends of the reservation
  if (aligned > base) munmap(reserve, aligned - base);
  const uintptr_t end = aligned + len, rend = base + len + slack;
  if (rend > end) munmap(reinterpret_cast<void *>(end), rend - end);
  out->data = out->map_base = p;
  out->map_len = len;
  out->fd = fd;
  return HURRAY_OK;
}

void cpu_free(const CpuAllocation &a) noexcept {
  if (a.map_len) {
    munmap(a.map_base, a.map_len);
    close(a.fd);
  } else {
    std::free(a.map_base);
  }
}

}  // namespace hurray::detail
