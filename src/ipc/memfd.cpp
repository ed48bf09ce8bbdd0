// The rules for memory files that cross a channel (docs/spec/ipc.md):
// BP-IPC-SEAL (the consumer maps only a memfd sealed against shrinking, so
// its producer cannot make it die of SIGBUS) and BP-IPC-RO (a read-only
// handoff travels as a descriptor that cannot be mapped writable), and
// mapping what arrived.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "../core/internal.h"
#include "internal.h"

namespace hurray::ipc {

using hurray::detail::fail;

hurray_status check_sealed(int fd, hurray_error *err) {
  const int seals = fcntl(fd, F_GET_SEALS);
  if (seals < 0)
    return fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                "BP-IPC-SEAL: the memory descriptor is not a sealable memfd (F_GET_SEALS: %s)",
                std::strerror(errno));
  if (!(seals & F_SEAL_SHRINK))
    return fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                "BP-IPC-SEAL: the memfd is not sealed against shrinking (seals 0x%X): its "
                "producer could truncate it under this mapping",
                static_cast<unsigned>(seals));
  return HURRAY_OK;
}

int reopen_read_only(int fd, hurray_error *err) {
  // A new open file description of the same memory file, read-only: the
  // kernel refuses PROT_WRITE with MAP_SHARED on it. The CPU backend makes
  // its memfds mode 0400, so the consumer cannot reopen it writable either.
  char path[40];
  std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  const int ro = open(path, O_RDONLY | O_CLOEXEC);
  if (ro < 0)
    fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_NONE,
         "BP-IPC-RO: a read-only descriptor of the memfd cannot be opened (%s: %s)", path,
         std::strerror(errno));
  return ro;
}

hurray_status fresh_copy(hurray_buffer *src, const hurray_buffer_handle &h, hurray_buffer **out,
                         hurray_error *err) {
  const void *from = hurray_buffer_data(src);
  if (!from)
    return fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_NONE,
                "hurray_ipc_send: HURRAY_IPC_COPY_PER_SEND needs a CPU buffer with an address");
  hurray_alloc_desc d = HURRAY_ALLOC_DESC_INIT;
  d.flags = HURRAY_ALLOC_SHAREABLE;
  d.byte_size = h.byte_size;
  d.alignment = h.alignment;
  HURRAY_RETURN_NOT_OK(hurray_buffer_alloc(nullptr, &d, out, err));
  std::memcpy(hurray_buffer_data(*out), from, static_cast<size_t>(h.byte_size));
  return HURRAY_OK;
}

// Why a received memfd could not be mapped: out of memory (address space,
// map count) is this side's; anything else is the descriptor the peer sent
// (a writable handoff of a read-only descriptor, say), a protocol error.
namespace {

void map_fail(int e, bool writable, hurray_error *err) {
  if (e == ENOMEM)
    fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "[mmap] %s", std::strerror(e));
  else
    fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
         "ipc message: the memory descriptor cannot be mapped%s ([mmap] %s)",
         writable ? " writable" : "", std::strerror(e));
}

}  // namespace

// Map `size` bytes of fd at `offset`, at an address aligned to `alignment`.
void *map_aligned(int fd, uint64_t offset, uint64_t size, uint32_t alignment, bool writable,
                  size_t *len_out, hurray_error *err) {
  const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const size_t len = static_cast<size_t>((size + page - 1) / page * page);
  const int prot = writable ? PROT_READ | PROT_WRITE : PROT_READ;
  if (alignment <= page) {  // mmap's own alignment is enough: one call
    void *p = mmap(nullptr, len, prot, MAP_SHARED, fd, static_cast<off_t>(offset));
    if (p == MAP_FAILED) {
      map_fail(errno, writable, err);
      return nullptr;
    }
    *len_out = len;
    return p;
  }
  const size_t slack = alignment;
  void *reserve = mmap(nullptr, len + slack, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (reserve == MAP_FAILED) {
    fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "[mmap] %s", std::strerror(errno));
    return nullptr;
  }
  const auto base = reinterpret_cast<uintptr_t>(reserve);
  const uintptr_t aligned = (base + slack - 1) & ~(uintptr_t(alignment) - 1);
  void *p = mmap(reinterpret_cast<void *>(aligned), len, prot, MAP_SHARED | MAP_FIXED, fd,
                 static_cast<off_t>(offset));
  if (p == MAP_FAILED) {
    const int e = errno;
    munmap(reserve, len + slack);
    map_fail(e, writable, err);
    return nullptr;
  }
  if (aligned > base) munmap(reserve, aligned - base);
  const uintptr_t end = aligned + len, rend = base + len + slack;
  if (rend > end) munmap(reinterpret_cast<void *>(end), rend - end);
  *len_out = len;
  return p;
}

}  // namespace hurray::ipc
