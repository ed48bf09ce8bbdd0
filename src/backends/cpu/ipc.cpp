// The CPU backend's IPC entries (docs/spec/ipc.md): exporting a shareable
// allocation as its memfd (kind 'CMFD', a close-on-exec duplicate the caller
// owns; cpu_ipc_describe_memory lends the allocation's own descriptor
// instead, to a caller that holds the allocation while it sends it), and
// importing the memfd another process sent. An import checks what came before anything is mapped: the kind, a page-aligned offset, a
// regular file at least offset + byte_size long, sealed against shrinking
// (BP-IPC-SEAL: else its producer could make this process die of SIGBUS).
// It maps writable only a descriptor opened read-write (a read-only handoff
// arrives as a read-only descriptor, BP-IPC-RO), at the alignment the handle
// asks for, and keeps no descriptor: the mapping holds the file.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "../../core/internal.h"
#include "../kit/errors.h"
#include "cpu.h"
#include "map.h"

namespace hurray::detail {

namespace {

uint32_t load_u32le(const uint8_t *b) {
  return uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24;
}

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

}  // namespace

hurray_status cpu_ipc_describe_memory(const hurray_backend_allocation *a,
                                      hurray_backend_ipc_handle *out, hurray_error *err) {
  const CpuAllocation c = cpu_unpack(*a);
  if (c.fd < 0 || c.map_len == 0)
    return refuse(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_NONE, kit::kPlugin,
                  "ipc_export_memory: this CPU buffer cannot be shared with another "
                  "process; allocate it with hurray_buffer_alloc() and HURRAY_ALLOC_SHAREABLE");
  out->kind = kCpuMemfdKind;
  out->fd = c.fd;  // the allocation's own: valid while it lives, never closed by the caller
  out->byte_size = c.map_len;  // the memfd is sized to whole pages
  out->offset = 0;
  std::memset(out->bytes, 0, sizeof out->bytes);
  for (int i = 0; i < 4; ++i) out->bytes[i] = static_cast<uint8_t>(a->alignment >> (8 * i));
  return HURRAY_OK;
}

hurray_status cpu_ipc_export_memory(void *, const hurray_backend_allocation *a,
                                    hurray_backend_ipc_handle *out, hurray_error *err) {
  if (const hurray_status st = cpu_ipc_describe_memory(a, out, err)) return st;
  const int own = out->fd;
  out->fd = fcntl(own, F_DUPFD_CLOEXEC, 0);  // the caller's to close
  if (out->fd < 0)
    return refuse(err, HURRAY_E_IO, HURRAY_RULE_NONE, kit::kPlugin,
                  "ipc_export_memory: dup of fd %d failed: %s", own, std::strerror(errno));
  return HURRAY_OK;
}

hurray_status cpu_ipc_import_memory(void *, int32_t device, const hurray_backend_ipc_handle *h,
                                    uint8_t memory_class, hurray_backend_allocation *out,
                                    hurray_error *err) {
  const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  if (h->kind != kCpuMemfdKind || h->fd < 0)
    return fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                "BP-IPC-KIND: cpu: ipc_import_memory: CPU memory of kind 0x%08X%s (a memfd is "
                "kind 0x%08X, 'CMFD', with its descriptor; a development build before 1.0.0 "
                "sent kind 1)",
                h->kind, h->fd < 0 ? " without a descriptor" : "", kCpuMemfdKind);
  if (memory_class != HURRAY_MEMORY_STANDARD)
    return refuse(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE, kit::kPlugin,
                  "ipc_import_memory: memory class %s is not host memory",
                  hurray_memory_class_name(memory_class));
  if (h->offset % page)
    return refuse(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE, kit::kPlugin,
                  "ipc_import_memory: memory offset %llu is not page-aligned",
                  static_cast<unsigned long long>(h->offset));
  uint32_t alignment = load_u32le(h->bytes);
  if (alignment & (alignment - 1))
    return refuse(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE, kit::kPlugin,
                  "ipc_import_memory: alignment %u is not a power of two", alignment);
  if (alignment < page) alignment = static_cast<uint32_t>(page);
  struct stat sb;
  if (h->byte_size == 0 || h->byte_size > UINT64_MAX / 4 || h->offset > UINT64_MAX / 4 ||
      fstat(h->fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
      static_cast<uint64_t>(sb.st_size) < h->offset + h->byte_size)
    return refuse(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE, kit::kPlugin,
                  "ipc_import_memory: the descriptor is not a memory file of at least %llu "
                  "bytes",
                  static_cast<unsigned long long>(h->offset + h->byte_size));
  if (const hurray_status st = check_sealed(h->fd, err))
    return st;  // BP-IPC-SEAL: not mapped at all
  const int mode = fcntl(h->fd, F_GETFL);
  const bool writable = mode >= 0 && (mode & O_ACCMODE) == O_RDWR;
  const size_t len = static_cast<size_t>((h->byte_size + page - 1) / page * page);
  int e = 0;
  void *p = map_aligned(h->fd, h->offset, len, alignment,
                        writable ? PROT_READ | PROT_WRITE : PROT_READ, &e);
  if (!p) {
    if (e == ENOMEM)
      return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "[mmap] %s", std::strerror(e));
    return refuse(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE, kit::kPlugin,
                  "ipc_import_memory: the memory descriptor cannot be mapped%s ([mmap] %s)",
                  writable ? " writable" : "", std::strerror(e));
  }
  CpuAllocation c;
  c.data = c.map_base = p;
  c.map_len = len;
  c.fd = -1;  // the mapping keeps the file; the descriptor stays the caller's
  std::memset(out, 0, sizeof *out);
  cpu_pack(c, out);
  out->byte_size = h->byte_size;
  out->alignment = alignment;
  out->device = device;
  out->memory_class = memory_class;
  return HURRAY_OK;
}

}  // namespace hurray::detail
