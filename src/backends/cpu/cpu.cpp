#include "cpu.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <hurray_backend.h>

#include "../../core/internal.h"
#include "../../runtime/backends.h"
#include "../kit/entry.h"
#include "map.h"

namespace hurray::detail {

hurray_status cpu_alloc(uint64_t byte_size, uint32_t alignment, bool shareable,
                        CpuAllocation *out, hurray_error *err) noexcept {
  *out = CpuAllocation{};
  if (byte_size == 0) return HURRAY_OK;  // an empty buffer has no memory
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  if (byte_size > (UINT64_MAX - alignment - page) / 2)
    return refuse(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, kit::kPlugin,
                  "%llu bytes cannot be allocated", static_cast<unsigned long long>(byte_size));

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
  const int fd = memfd_create("hurray-buffer", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0)
    return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "[memfd_create] %s", std::strerror(errno));
  if (ftruncate(fd, static_cast<off_t>(len)) != 0) {
    const int e = errno;
    close(fd);
    return fail(err, e == ENOMEM || e == EFBIG ? HURRAY_E_OUT_OF_MEMORY : HURRAY_E_IO,
                HURRAY_RULE_NONE, "[ftruncate] %s: %zu bytes", std::strerror(e), len);
  }
  // The size is final: sealed before anyone else can see the file, so a
  // consumer in another process cannot be made to die of SIGBUS, and no one
  // adds seals later (BP-IPC-SEAL, docs/spec/ipc.md). Mode 0400: a process
  // given a read-only descriptor cannot reopen it writable (BP-IPC-RO).
  if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0 ||
      fchmod(fd, S_IRUSR) != 0) {
    const int e = errno;
    close(fd);
    return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "[F_ADD_SEALS/fchmod] %s", std::strerror(e));
  }
  int e = 0;
  void *p = map_aligned(fd, 0, len, alignment, PROT_READ | PROT_WRITE, &e);
  if (!p) {
    close(fd);
    return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "[mmap] %s", std::strerror(e));
  }
  out->data = out->map_base = p;
  out->map_len = len;
  out->fd = fd;
  return HURRAY_OK;
}

void cpu_free(const CpuAllocation &a) noexcept {
  if (a.map_len) {
    munmap(a.map_base, a.map_len);
    if (a.fd >= 0) close(a.fd);
  } else {
    std::free(a.map_base);
  }
}


// ---- the CPU backend as a plugin-shaped table (built in; its IPC entries in ipc.cpp) ----
namespace {

// Freed heap allocations of 256 KiB and more are kept for the next
// allocation of the same size: glibc gives blocks that large back to the
// kernel, and the next one then pays a page fault and a page clear per 4 KiB
// (a network receiver allocating each buffer that lands spent most of its
// time there; bench/run.py). At most kBlocks blocks and HURRAY_CPU_CACHE_MB
// MiB (default 256; 0 turns the cache off) are kept. Memory handed out again
// is not cleared, as with malloc. Shareable (memfd) memory is never kept.
class HostCache {
 public:
  static constexpr uint64_t kMinBytes = 256u << 10;
  static constexpr int kBlocks = 8;

  void *take(uint64_t size, uint32_t alignment) noexcept {
    if (size < kMinBytes) return nullptr;
    std::lock_guard<std::mutex> lock(mu_);
    for (int i = 0; i < n_; ++i) {
      Block &b = blocks_[i];
      if (b.size == size && reinterpret_cast<uintptr_t>(b.p) % alignment == 0) {
        void *p = b.p;
        bytes_ -= size;
        b = blocks_[--n_];
        return p;
      }
    }
    return nullptr;
  }
  // True if the cache kept p; false: the caller frees it.
  bool put(void *p, uint64_t size) noexcept {
    if (size < kMinBytes || size > limit()) return false;
    std::lock_guard<std::mutex> lock(mu_);
    if (n_ == kBlocks || bytes_ + size > limit()) return false;
    blocks_[n_++] = Block{p, size};
    bytes_ += size;
    return true;
  }

 private:
  static uint64_t limit() noexcept {
    static const uint64_t bytes = [] {
      const char *mb = std::getenv("HURRAY_CPU_CACHE_MB");
      char *end = nullptr;
      const unsigned long long v = mb && *mb ? std::strtoull(mb, &end, 10) : 256;
      return (mb && *mb && *end) || v > (UINT64_MAX >> 20) ? uint64_t{256} << 20 : v << 20;
    }();
    return bytes;
  }
  struct Block {
    void *p;
    uint64_t size;
  };
  std::mutex mu_;
  Block blocks_[kBlocks] = {};
  int n_ = 0;
  uint64_t bytes_ = 0;
};
// Never destroyed: allocations may be freed during exit.
HostCache &host_cache() noexcept {
  static HostCache *c = new HostCache;
  return *c;
}

hurray_status cpu_probe(void **state, hurray_error *) {
  *state = nullptr;
  return HURRAY_OK;
}
int32_t cpu_device_count(void *) { return 1; }
hurray_status cpu_device_info(void *, int32_t, hurray_backend_device_info *out, hurray_error *) {
  std::snprintf(out->name, sizeof out->name, "host memory");
  out->memory_classes = 1u << HURRAY_MEMORY_STANDARD;
  out->ipc = HURRAY_BACKEND_IPC_MEMORY;
  out->min_alignment = HURRAY_MIN_ALIGNMENT;
  std::snprintf(out->detail, sizeof out->detail,
                "STANDARD: posix_memalign; shareable: memfd, mapped at max(page, alignment)");
  return HURRAY_OK;
}
hurray_status cpu_alloc_fn(void *, int32_t, uint8_t mc, uint64_t size, uint32_t alignment,
                           uint32_t flags, hurray_backend_allocation *out, hurray_error *err) {
  if (mc != HURRAY_MEMORY_STANDARD)
    return refuse(err, HURRAY_E_DEVICE_UNAVAILABLE, HURRAY_RULE_PUT_DEVICE, kit::kPlugin,
                  "memory class %s is not host memory", hurray_memory_class_name(mc));
  CpuAllocation c;
  if (void *p = flags & HURRAY_ALLOC_SHAREABLE ? nullptr : host_cache().take(size, alignment))
    c.data = c.map_base = p;
  else if (const hurray_status st =
               cpu_alloc(size, alignment, flags & HURRAY_ALLOC_SHAREABLE, &c, err))
    return st;
  std::memset(out, 0, sizeof *out);
  cpu_pack(c, out);
  out->byte_size = size;
  out->alignment = alignment;
  out->memory_class = mc;
  return HURRAY_OK;
}
void cpu_free_fn(void *, hurray_backend_allocation *a) {
  const CpuAllocation c = cpu_unpack(*a);
  if (c.map_len == 0 && c.map_base != nullptr && host_cache().put(c.map_base, a->byte_size))
    return;
  cpu_free(c);
}
hurray_status cpu_to_host(void *, const hurray_backend_allocation *src, uint64_t off, void *dst,
                          uint64_t n, hurray_error *err) {
  if (off > src->byte_size || n > src->byte_size - off)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE, kit::kPlugin,
                  "copy out of range");
  if (n) std::memcpy(dst, static_cast<const char *>(src->data) + off, n);
  return HURRAY_OK;
}
hurray_status cpu_from_host(void *, hurray_backend_allocation *dst, uint64_t off, const void *src,
                            uint64_t n, hurray_error *err) {
  if (off > dst->byte_size || n > dst->byte_size - off)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE, kit::kPlugin,
                  "copy out of range");
  if (n) std::memcpy(static_cast<char *>(dst->data) + off, src, n);
  return HURRAY_OK;
}
hurray_status cpu_event_record(void *, int32_t, void *, void **, uint64_t *, hurray_error *err) {
  return fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_SYNC_CPU,
              "BP-SYNC-CPU: CPU buffers are PRODUCER_SYNCED; there are no CPU events");
}
hurray_status cpu_event_wait(void *, int32_t, void *, uint64_t, void *, hurray_error *err) {
  return fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_SYNC_CPU,
              "BP-SYNC-CPU: CPU buffers are PRODUCER_SYNCED; there are no CPU events");
}
void cpu_event_release(void *, int32_t, void *) {}
// CPU work is the caller's and done when it calls: release at once.
hurray_status cpu_release_after(void *, int32_t, void *, void *, uint64_t, void (*done)(void *),
                                void *user, hurray_error *) {
  done(user);
  return HURRAY_OK;
}

// The CPU backend's table, filled like every plugin's: each entry behind the
// kit's exception barrier (src/backends/kit/entry.h), so that nothing thrown
// below an entry leaves it. Left NULL: shutdown
// (there is no state), classify, native, the IPC event entries (there are no
// CPU events) and device_identity (kind NONE, docs/spec/identity.md): the CPU
// is the one host-memory device, ordinal 0 in every process of the host, and
// a fixed identity would make two hosts' CPUs look like one device.
constexpr hurray_backend_v1 make_cpu_table() noexcept {
  using hurray::kit::barrier;
  hurray_backend_v1 t = hurray::kit::make_table(HURRAY_DEVICE_CPU);
  t.probe = barrier<&cpu_probe, "probe">;
  t.device_count = barrier<&cpu_device_count, "device_count">;
  t.device_info = barrier<&cpu_device_info, "device_info">;
  t.alloc = barrier<&cpu_alloc_fn, "alloc">;
  t.free = barrier<&cpu_free_fn, "free">;
  t.copy_to_host = barrier<&cpu_to_host, "copy_to_host">;
  t.copy_from_host = barrier<&cpu_from_host, "copy_from_host">;
  t.event_record = barrier<&cpu_event_record, "event_record">;
  t.event_wait = barrier<&cpu_event_wait, "event_wait">;
  t.event_release = barrier<&cpu_event_release, "event_release">;
  t.ipc_export_memory = barrier<&cpu_ipc_export_memory, "ipc_export_memory">;
  t.ipc_import_memory = barrier<&cpu_ipc_import_memory, "ipc_import_memory">;
  t.release_after = barrier<&cpu_release_after, "release_after">;
  return t;
}

constinit const hurray_backend_v1 kCpuBackend = make_cpu_table();

}  // namespace

CpuAllocation cpu_unpack(const hurray_backend_allocation &a) noexcept {
  CpuAllocation c;
  c.data = a.data;
  c.fd = static_cast<int>(reinterpret_cast<intptr_t>(a.plugin_data));
  c.map_len = static_cast<size_t>(a.reserved[0]);
  c.map_base = reinterpret_cast<void *>(static_cast<uintptr_t>(a.reserved[1]));
  return c;
}

void cpu_pack(const CpuAllocation &c, hurray_backend_allocation *a) noexcept {
  a->data = a->host = c.data;
  a->plugin_data = reinterpret_cast<void *>(static_cast<intptr_t>(c.fd));
  a->reserved[0] = c.map_len;
  a->reserved[1] = reinterpret_cast<uintptr_t>(c.map_base);
}

const hurray_backend_v1 *cpu_backend() noexcept { return &kCpuBackend; }

}  // namespace hurray::detail
