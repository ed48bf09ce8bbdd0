// The fake CUDA driver's memory (fake_cuda.cpp is its streams and events),
// for the IPC tests without a GPU. Device memory is host memory shared by
// file: every allocation is a memfd mapped MAP_SHARED, and its device
// address is the mapping's host address, so a test reads and writes device
// memory directly and another process sees it.
// - cuMemAlloc / cuMemFree, cuMemGetAddressRange (any allocation, opened
//   handle or VMM mapping), cuPointerGetAttributes (device memory, ordinal 0).
// - Legacy IPC: cuIpcGetMemHandle names the block's memfd as
//   /proc/<pid>/fd/<fd>; cuIpcOpenMemHandle opens it in another process
//   (its own handle: CUDA_ERROR_INVALID_CONTEXT, as CUDA), and refuses a
//   handle this process has open already (CUDA_ERROR_ALREADY_MAPPED), so a
//   plugin must open each once per process.
// - VMM: cuMemCreate makes a memfd named "fake-cuda-vmm" of a multiple of
//   the granularity (2 MiB), cuMemExportToShareableHandle duplicates it (a
//   POSIX file descriptor), cuMemImportFromShareableHandle accepts only such
//   a descriptor; reserve, map, set access, unmap and free work on PROT_NONE
//   reservations. A physical allocation lives while its handle or a mapping
//   holds it, as in CUDA.
// Counters (hurray_fake_cuda_memory_counts) let tests check that every
// open is closed and every map unmapped and released exactly once.
#include <cuda.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#define FAKE_API extern "C" __attribute__((visibility("default")))

extern "C" CUresult cuStreamSynchronize(CUstream hs);

namespace {

constexpr size_t kGranularity = size_t{2} << 20;
constexpr uint32_t kIpcMagic = 0x4b414646u;  // "FFAK"

enum class Kind { kLinear, kOpened, kVmm };

struct Block {  // a mapped range: [base, base + size)
  Kind kind;
  size_t size;
  int fd;                  // kLinear, kOpened: the memfd (kVmm: the physical's)
  uint64_t key = 0;        // kOpened: pid << 32 | fd of the handle
  uint64_t physical = 0;   // kVmm: its physical allocation
};

struct Physical {
  int fd;
  size_t size;
  int refs;  // the handle's (until cuMemRelease) and one per mapping
  unsigned handle_types;
};

struct Handle {  // what cuIpcGetMemHandle writes
  uint32_t magic;
  int32_t pid;
  int32_t fd;
  uint32_t pad;
  uint64_t size;
};

std::mutex &mu = *new std::mutex;
std::map<uintptr_t, Block> &blocks = *new std::map<uintptr_t, Block>;
std::map<uintptr_t, size_t> &reserved = *new std::map<uintptr_t, size_t>;
std::map<uint64_t, Physical> &physicals = *new std::map<uint64_t, Physical>;
uint64_t next_physical = 1;

struct Counts {
  int ipc_opens, ipc_closes, vmm_creates, vmm_imports, vmm_maps, vmm_unmaps, vmm_live,
      bad_calls;
};
Counts counts{};

// Under mu: the block that holds p.
std::map<uintptr_t, Block>::iterator holding(uintptr_t p) {
  auto it = blocks.upper_bound(p);
  if (it == blocks.begin()) return blocks.end();
  --it;
  return p - it->first < it->second.size ? it : blocks.end();
}

int new_memfd(const char *name, size_t size) {
  const int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd >= 0 && ftruncate(fd, static_cast<off_t>(size)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

void unref_physical(uint64_t id) {  // under mu
  auto it = physicals.find(id);
  if (--it->second.refs == 0) {
    close(it->second.fd);
    physicals.erase(it);
    --counts.vmm_live;
  }
}

// Under mu: unmap and forget the block of this kind at p (cuMemFree,
// cuIpcCloseMemHandle); any other address is a bad call.
bool drop_block(CUdeviceptr p, Kind kind) {
  auto it = blocks.find(p);
  if (it == blocks.end() || it->second.kind != kind) {
    ++counts.bad_calls;
    return false;
  }
  munmap(reinterpret_cast<void *>(p), it->second.size);
  close(it->second.fd);
  blocks.erase(it);
  return true;
}

bool is_vmm_fd(int fd) {
  char link[64], target[128];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0) return false;
  target[n] = '\0';
  return std::strncmp(target, "/memfd:fake-cuda-vmm", 20) == 0;
}

}  // namespace

// ---- the test's controls ------------------------------------------------------

// The counters, in the order of Counts (8 ints).
FAKE_API void hurray_fake_cuda_memory_counts(int *out) {
  std::lock_guard<std::mutex> lock(mu);
  std::memcpy(out, &counts, sizeof counts);
}
// Mapped ranges of each kind (linear, opened, vmm) and reservations.
FAKE_API void hurray_fake_cuda_memory_live(int *out) {
  std::lock_guard<std::mutex> lock(mu);
  out[0] = out[1] = out[2] = 0;
  for (const auto &[base, b] : blocks) ++out[static_cast<int>(b.kind)];
  out[3] = static_cast<int>(reserved.size());
}

// ---- the driver ---------------------------------------------------------------

FAKE_API CUresult cuMemAlloc(CUdeviceptr *p, size_t n) {
  if (n == 0) return CUDA_ERROR_INVALID_VALUE;
  const int fd = new_memfd("fake-cuda-mem", n);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  void *m = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) {
    close(fd);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  std::lock_guard<std::mutex> lock(mu);
  blocks[reinterpret_cast<uintptr_t>(m)] = Block{Kind::kLinear, n, fd};
  *p = reinterpret_cast<uintptr_t>(m);
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemFree(CUdeviceptr p) {
  std::lock_guard<std::mutex> lock(mu);
  return drop_block(p, Kind::kLinear) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
FAKE_API CUresult cuMemGetAddressRange(CUdeviceptr *base, size_t *size, CUdeviceptr p) {
  std::lock_guard<std::mutex> lock(mu);
  auto it = holding(p);
  if (it == blocks.end()) return CUDA_ERROR_NOT_FOUND;
  if (base) *base = it->first;
  if (size) *size = it->second.size;
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuPointerGetAttributes(unsigned n, CUpointer_attribute *attrs, void **data,
                                         CUdeviceptr p) {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (holding(p) == blocks.end()) return CUDA_ERROR_INVALID_VALUE;
  }
  for (unsigned i = 0; i < n; ++i) {
    switch (attrs[i]) {
      case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *static_cast<unsigned *>(data[i]) = CU_MEMORYTYPE_DEVICE;
        break;
      case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        *static_cast<bool *>(data[i]) = false;
        break;
      case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        *static_cast<int *>(data[i]) = 0;
        break;
      default:
        return CUDA_ERROR_NOT_SUPPORTED;
    }
  }
  return CUDA_SUCCESS;
}
// Copies run when what the stream holds has run.
FAKE_API CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t n, CUstream s) {
  if (const CUresult r = cuStreamSynchronize(s)) return r;
  std::memcpy(reinterpret_cast<void *>(dst), src, n);
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t n, CUstream s) {
  if (const CUresult r = cuStreamSynchronize(s)) return r;
  std::memcpy(dst, reinterpret_cast<const void *>(src), n);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuIpcGetMemHandle(CUipcMemHandle *h, CUdeviceptr p) {
  std::lock_guard<std::mutex> lock(mu);
  auto it = blocks.find(p);
  if (it == blocks.end() || it->second.kind != Kind::kLinear) return CUDA_ERROR_INVALID_VALUE;
  Handle w{kIpcMagic, getpid(), it->second.fd, 0, it->second.size};
  std::memset(h, 0, sizeof *h);
  std::memcpy(h->reserved, &w, sizeof w);
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuIpcOpenMemHandle(CUdeviceptr *p, CUipcMemHandle h, unsigned) {
  Handle w;
  std::memcpy(&w, h.reserved, sizeof w);
  if (w.magic != kIpcMagic || w.size == 0) return CUDA_ERROR_INVALID_VALUE;
  if (w.pid == getpid()) return CUDA_ERROR_INVALID_CONTEXT;
  const uint64_t key = static_cast<uint64_t>(w.pid) << 32 | static_cast<uint32_t>(w.fd);
  {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto &[base, b] : blocks)
      if (b.kind == Kind::kOpened && b.key == key) {
        ++counts.bad_calls;
        return CUDA_ERROR_ALREADY_MAPPED;
      }
  }
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/fd/%d", w.pid, w.fd);
  const int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return CUDA_ERROR_INVALID_HANDLE;
  struct stat st{};
  void *m = MAP_FAILED;
  if (fstat(fd, &st) == 0 && static_cast<uint64_t>(st.st_size) == w.size)
    m = mmap(nullptr, w.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) {
    close(fd);
    return CUDA_ERROR_INVALID_HANDLE;
  }
  std::lock_guard<std::mutex> lock(mu);
  blocks[reinterpret_cast<uintptr_t>(m)] = Block{Kind::kOpened, w.size, fd, key};
  ++counts.ipc_opens;
  *p = reinterpret_cast<uintptr_t>(m);
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuIpcCloseMemHandle(CUdeviceptr p) {
  std::lock_guard<std::mutex> lock(mu);
  if (!drop_block(p, Kind::kOpened)) return CUDA_ERROR_INVALID_VALUE;
  ++counts.ipc_closes;
  return CUDA_SUCCESS;
}

// ---- virtual memory management ----------------------------------------------

FAKE_API CUresult cuMemGetAllocationGranularity(size_t *g, const CUmemAllocationProp *prop,
                                                CUmemAllocationGranularity_flags) {
  if (prop == nullptr || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
      prop->location.id != 0)
    return CUDA_ERROR_INVALID_VALUE;
  *g = kGranularity;
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t size,
                              const CUmemAllocationProp *prop, unsigned long long) {
  if (size == 0 || size % kGranularity != 0 || prop == nullptr ||
      prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE || prop->location.id != 0)
    return CUDA_ERROR_INVALID_VALUE;
  const int fd = new_memfd("fake-cuda-vmm", size);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  std::lock_guard<std::mutex> lock(mu);
  const uint64_t id = next_physical++;
  physicals[id] = Physical{fd, size, 1, static_cast<unsigned>(prop->requestedHandleTypes)};
  ++counts.vmm_creates;
  ++counts.vmm_live;
  *h = id;
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemRelease(CUmemGenericAllocationHandle h) {
  std::lock_guard<std::mutex> lock(mu);
  if (physicals.find(h) == physicals.end()) {
    ++counts.bad_calls;
    return CUDA_ERROR_INVALID_VALUE;
  }
  unref_physical(h);
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemAddressReserve(CUdeviceptr *p, size_t size, size_t align, CUdeviceptr,
                                      unsigned long long) {
  if (size == 0 || size % kGranularity != 0) return CUDA_ERROR_INVALID_VALUE;
  if (align < kGranularity) align = kGranularity;
  void *m = mmap(nullptr, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  if (m == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  const uintptr_t raw = reinterpret_cast<uintptr_t>(m);
  const uintptr_t base = (raw + align - 1) / align * align;
  if (base > raw) munmap(m, base - raw);
  munmap(reinterpret_cast<void *>(base + size), raw + align - base);
  std::lock_guard<std::mutex> lock(mu);
  reserved[base] = size;
  *p = base;
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemAddressFree(CUdeviceptr p, size_t size) {
  std::lock_guard<std::mutex> lock(mu);
  auto it = reserved.find(p);
  if (it == reserved.end() || it->second != size) {
    ++counts.bad_calls;
    return CUDA_ERROR_INVALID_VALUE;
  }
  munmap(reinterpret_cast<void *>(p), size);
  reserved.erase(it);
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemMap(CUdeviceptr p, size_t size, size_t offset,
                           CUmemGenericAllocationHandle h, unsigned long long) {
  std::lock_guard<std::mutex> lock(mu);
  auto r = reserved.upper_bound(p);
  if (r == reserved.begin()) return CUDA_ERROR_INVALID_VALUE;
  --r;
  auto ph = physicals.find(h);
  if (ph == physicals.end() || p + size > r->first + r->second || offset > ph->second.size ||
      size > ph->second.size - offset || holding(p) != blocks.end())
    return CUDA_ERROR_INVALID_VALUE;
  if (mmap(reinterpret_cast<void *>(p), size, PROT_NONE, MAP_SHARED | MAP_FIXED, ph->second.fd,
           static_cast<off_t>(offset)) == MAP_FAILED)
    return CUDA_ERROR_OUT_OF_MEMORY;
  blocks[p] = Block{Kind::kVmm, size, ph->second.fd, 0, h};
  ++ph->second.refs;
  ++counts.vmm_maps;
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemSetAccess(CUdeviceptr p, size_t size, const CUmemAccessDesc *desc,
                                 size_t count) {
  if (count != 1 || desc->location.type != CU_MEM_LOCATION_TYPE_DEVICE || desc->location.id != 0)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(mu);
  auto it = blocks.find(p);
  if (it == blocks.end() || it->second.kind != Kind::kVmm || it->second.size != size)
    return CUDA_ERROR_INVALID_VALUE;
  const int prot =
      desc->flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE ? PROT_READ | PROT_WRITE : PROT_READ;
  return mprotect(reinterpret_cast<void *>(p), size, prot) == 0 ? CUDA_SUCCESS
                                                                  : CUDA_ERROR_INVALID_VALUE;
}
FAKE_API CUresult cuMemUnmap(CUdeviceptr p, size_t size) {
  std::lock_guard<std::mutex> lock(mu);
  auto it = blocks.find(p);
  if (it == blocks.end() || it->second.kind != Kind::kVmm || it->second.size != size) {
    ++counts.bad_calls;
    return CUDA_ERROR_INVALID_VALUE;
  }
  mmap(reinterpret_cast<void *>(p), size, PROT_NONE,
       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  unref_physical(it->second.physical);
  blocks.erase(it);
  ++counts.vmm_unmaps;
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *h, void *addr) {
  std::lock_guard<std::mutex> lock(mu);
  auto it = holding(reinterpret_cast<uintptr_t>(addr));
  if (it == blocks.end() || it->second.kind != Kind::kVmm) return CUDA_ERROR_INVALID_VALUE;
  ++physicals[it->second.physical].refs;
  *h = it->second.physical;
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemExportToShareableHandle(void *out, CUmemGenericAllocationHandle h,
                                               CUmemAllocationHandleType type, unsigned long long) {
  std::lock_guard<std::mutex> lock(mu);
  auto ph = physicals.find(h);
  if (ph == physicals.end()) return CUDA_ERROR_INVALID_VALUE;
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ||
      (ph->second.handle_types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) == 0)
    return CUDA_ERROR_NOT_PERMITTED;
  const int fd = fcntl(ph->second.fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  *static_cast<int *>(out) = fd;
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *h, void *os,
                                                 CUmemAllocationHandleType type) {
  const int in = static_cast<int>(reinterpret_cast<intptr_t>(os));
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || !is_vmm_fd(in))
    return CUDA_ERROR_INVALID_VALUE;
  struct stat st{};
  if (fstat(in, &st) != 0 || st.st_size <= 0) return CUDA_ERROR_INVALID_VALUE;
  const int fd = fcntl(in, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  std::lock_guard<std::mutex> lock(mu);
  const uint64_t id = next_physical++;
  physicals[id] = Physical{fd, static_cast<size_t>(st.st_size), 1,
                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR};
  ++counts.vmm_imports;
  ++counts.vmm_live;
  *h = id;
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t n) {
  std::memcpy(reinterpret_cast<void *>(dst), src, n);
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t n) {
  std::memcpy(dst, reinterpret_cast<const void *>(src), n);
  return CUDA_SUCCESS;
}
