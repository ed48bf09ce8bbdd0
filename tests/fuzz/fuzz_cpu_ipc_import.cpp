// fuzz_cpu_ipc_import: the CPU backend's import of a memfd another process
// sent (src/backends/cpu/ipc.cpp, called by hurray_ipc_receive through the
// dispatch layer) with any handle fields and any file behind the
// descriptor. Checks properties, not only the absence of crashes:
//  - an import succeeds only for kind 'CMFD', a descriptor, host memory, a
//    page-aligned offset and a file sealed against shrinking that holds
//    offset + byte_size bytes (BP-IPC-KIND, BP-IPC-SEAL); then every page of
//    [0, byte_size) of the mapping reads (no SIGBUS), it is aligned as the
//    handle's bytes ask (at least a page), and it is freed;
//  - a refusal is HURRAY_E_PROTOCOL (or OUT_OF_MEMORY) with a message.
//
// Input layout (tests/fuzz/make_corpus.py writes seeds in it):
//   bytes 0-3   kind (little-endian)
//   bytes 4-11  byte_size
//   bytes 12-19 offset
//   bytes 20-23 the handle's bytes[0..3] (the alignment asked for)
//   byte 24     bit 0: descriptor read-only; bit 1: file not sealed;
//               bit 2: no descriptor; bits 3-4: memory class
//   byte 25     file size in pages (0-15, low 4 bits), bit 7: plus 100 bytes
#include <hurray.h>
#include <hurray_backend.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "../../src/backends/cpu/cpu.h"
#include "fuzz_util.h"

namespace {

uint64_t le(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t in[26] = {};
  std::memcpy(in, data, size < sizeof in ? size : sizeof in);
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  hurray_backend_ipc_handle h{};
  h.kind = static_cast<uint32_t>(le(in, 4));
  h.byte_size = le(in + 4, 8);
  h.offset = le(in + 12, 8);
  std::memcpy(h.bytes, in + 20, 4);
  const bool read_only = in[24] & 1, unsealed = in[24] & 2, no_fd = in[24] & 4;
  const uint8_t mc = static_cast<uint8_t>((in[24] >> 3) & 3);
  const uint64_t file_size = (in[25] & 15) * page + ((in[25] & 0x80) ? 100 : 0);

  int fd = memfd_create("fuzz-cpu-import", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  FUZZ_CHECK(fd >= 0, "memfd_create");
  FUZZ_CHECK(ftruncate(fd, static_cast<off_t>(file_size)) == 0, "ftruncate");
  if (!unsealed) FUZZ_CHECK(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) == 0, "seal");
  if (read_only) {
    char path[40];
    std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    const int ro = open(path, O_RDONLY | O_CLOEXEC);
    FUZZ_CHECK(ro >= 0, "read-only reopen");
    close(fd);
    fd = ro;
  }
  h.fd = no_fd ? -1 : fd;

  hurray_backend_allocation a{};
  hurray_error err{};
  const hurray_status st = hurray::detail::cpu_ipc_import_memory(nullptr, 0, &h, mc, &a, &err);
  if (st == HURRAY_OK) {
    FUZZ_CHECK(h.kind == hurray::detail::kCpuMemfdKind && !no_fd && mc == HURRAY_MEMORY_STANDARD,
               "only a 'CMFD' handle of host memory with its descriptor is imported");
    FUZZ_CHECK(!unsealed, "only a memfd sealed against shrinking is mapped (BP-IPC-SEAL)");
    FUZZ_CHECK(h.offset % page == 0 && h.byte_size > 0 && h.offset + h.byte_size <= file_size,
               "the file holds offset + byte_size bytes, offset page-aligned");
    FUZZ_CHECK(a.data && a.byte_size == h.byte_size, "the allocation is the handle's size");
    const uint32_t asked = static_cast<uint32_t>(le(in + 20, 4));
    const uint64_t align = asked > page ? asked : page;
    FUZZ_CHECK(reinterpret_cast<uintptr_t>(a.data) % align == 0, "mapped at the asked alignment");
    volatile uint8_t sum = 0;
    const auto *p = static_cast<const volatile uint8_t *>(a.data);
    for (uint64_t off = 0; off < a.byte_size; off += page) sum = static_cast<uint8_t>(sum + p[off]);
    sum = static_cast<uint8_t>(sum + p[a.byte_size - 1]);
    (void)sum;
    hurray::detail::cpu_free(hurray::detail::cpu_unpack(a));
    hurray_fuzz::verdict_accepted();
  } else {
    FUZZ_CHECK(st == HURRAY_E_PROTOCOL || st == HURRAY_E_OUT_OF_MEMORY,
               "a refused handle is the peer's (PROTOCOL) or this side's memory");
    FUZZ_CHECK(err.status == st && err.message[0], "the refusal says why");
    hurray_fuzz::verdict_refused({""});  // BP-IPC-* are the channel's rules, not hurray.h's
  }
  close(fd);
  return 0;
}
