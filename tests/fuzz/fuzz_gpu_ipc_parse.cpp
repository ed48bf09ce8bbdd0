// fuzz_gpu_ipc_parse: what the CUDA and HIP plugins read from a memory
// handle another process sent, before any vendor call
// (src/backends/gpu-stream/ipc_parse.cpp, vendor-free: compiled in here
// alone): a VMM descriptor handoff (CUDA 'CUV1': its 8-byte allocation size,
// the descriptor, offset and byte_size), an IPC memory handle ('CUM1',
// 'HPM1'), and the check of offset + byte_size against the block an opened
// handle maps. Checks properties, not only the absence of crashes:
//  - parse_vmm accepts exactly: its kind, a descriptor that is no folder,
//    pipe or socket, zeros after the 8 size bytes, a size that is a non-zero
//    multiple of a non-zero granularity, and a non-empty [offset, offset +
//    byte_size) inside it (computed without wrapping); it then gives the size;
//  - parse_memory accepts exactly: its kind, no descriptor, byte_size > 0;
//    it then gives the 64 vendor bytes unchanged;
//  - check_in_block accepts exactly at + offset + byte_size <= block size;
//  - every refusal is HURRAY_E_INVALID_ARGUMENT, its message starting with
//    "BP-IPC-DEVMEM: ".
//
// Input layout (tests/fuzz/make_corpus.py writes seeds in it):
//   byte 0      bits 0-1: 0 parse_vmm, 1 parse_memory, 2-3 check_in_block;
//               bit 2: HIP's kinds (else CUDA's)
//   byte 1      the descriptor: 0 none, 1 a memfd, 2 a pipe, 3 a socket,
//               4 a folder, 5 /dev/null, else none
//   bytes 2-5   kind (little-endian)
//   bytes 6-13  byte_size
//   bytes 14-21 offset
//   bytes 22-29 granularity (parse_vmm) or `at` (check_in_block)
//   bytes 30-37 block size (check_in_block)
//   bytes 38-101 the handle's 64 vendor bytes
#include <hurray_backend.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "../../src/backends/gpu-stream/ipc_parse.h"
#include "../../src/backends/kit/ipc.h"
#include "fuzz_util.h"

namespace {

namespace gs = hurray::gpu_stream;
using hurray::kit::fourcc;
__extension__ typedef unsigned __int128 u128;

// The descriptor of choice c (-1: none) and a second one to close (a pair's).
int descriptor(uint8_t c, int *other) {
  *other = -1;
  int p[2];
  switch (c) {
    case 1:
      return memfd_create("fuzz-gpu-ipc", MFD_CLOEXEC);
    case 2:
      if (pipe2(p, O_CLOEXEC) != 0) return -1;
      *other = p[1];
      return p[0];
    case 3:
      if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) != 0) return -1;
      *other = p[1];
      return p[0];
    case 4:
      return open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    case 5:
      return open("/dev/null", O_RDWR | O_CLOEXEC);
    default:
      return -1;
  }
}

void check_refusal(hurray_status st, const hurray_error &err) {
  FUZZ_CHECK(st == HURRAY_E_INVALID_ARGUMENT, "a refusal of what a peer sent: INVALID_ARGUMENT");
  FUZZ_CHECK(err.status == st, "the error carries the status");
  FUZZ_CHECK(std::strncmp(err.message, "BP-IPC-DEVMEM: ", 15) == 0,
             "the refusal's message starts with its rule");
  hurray_fuzz::verdict_refused({""});  // BP-IPC-* are the channel's rules, not hurray.h's
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t in[102] = {};
  std::memcpy(in, data, size < sizeof in ? size : sizeof in);
  hurray_fuzz::Reader r(in, sizeof in);
  const uint8_t mode = r.u8(), fd_choice = r.u8();
  const bool hip = mode & 4;
  const uint32_t vmm_kind = hip ? fourcc('H', 'I', 'V', '1') : fourcc('C', 'U', 'V', '1');
  const uint32_t mem_kind = hip ? fourcc('H', 'P', 'M', '1') : fourcc('C', 'U', 'M', '1');
  hurray_backend_ipc_handle h{};
  h.kind = r.u32();
  h.byte_size = r.u64();
  h.offset = r.u64();
  const uint64_t granularity = r.u64(), block = r.u64();
  std::memcpy(h.bytes, r.rest(), sizeof h.bytes);
  int other = -1;
  h.fd = descriptor(fd_choice, &other);
  const bool has_fd = fd_choice >= 1 && fd_choice <= 5;
  FUZZ_CHECK(h.fd >= 0 || !has_fd, "the descriptor of the input was made");
  hurray_error err{};

  if ((mode & 3) == 0) {
    uint64_t vmm_size = 0;
    std::memcpy(&vmm_size, h.bytes, sizeof vmm_size);
    bool zeros = true;
    for (size_t i = 8; i < sizeof h.bytes; ++i) zeros = zeros && h.bytes[i] == 0;
    const bool memory_fd = fd_choice == 1 || fd_choice == 5;
    const bool fits = granularity != 0 && vmm_size != 0 && vmm_size % granularity == 0 &&
                      h.byte_size != 0 &&
                      u128{h.offset} + u128{h.byte_size} <= u128{vmm_size};
    uint64_t got = 0;
    const hurray_status st = gs::parse_vmm(&h, vmm_kind, "a VMM memory descriptor", granularity,
                                           &got, &err);
    const bool want = h.kind == vmm_kind && memory_fd && zeros && fits;
    FUZZ_CHECK((st == HURRAY_OK) == want,
               "a VMM descriptor handoff is accepted exactly when its kind, descriptor, payload "
               "and range are right");
    if (st == HURRAY_OK) {
      FUZZ_CHECK(got == vmm_size, "the allocation's size is the payload's");
      hurray_fuzz::verdict_accepted();
    } else {
      check_refusal(st, err);
    }
  } else if ((mode & 3) == 1) {
    uint8_t vendor[64] = {};
    const hurray_status st =
        gs::parse_memory(&h, mem_kind, "an IPC memory handle", vendor, sizeof vendor, &err);
    const bool want = h.kind == mem_kind && h.fd < 0 && h.byte_size != 0;
    FUZZ_CHECK((st == HURRAY_OK) == want,
               "an IPC memory handle is accepted exactly with its kind, no descriptor, bytes");
    if (st == HURRAY_OK) {
      FUZZ_CHECK(std::memcmp(vendor, h.bytes, sizeof vendor) == 0, "the vendor bytes unchanged");
      hurray_fuzz::verdict_accepted();
    } else {
      check_refusal(st, err);
    }
  } else {
    const uint64_t at = granularity;
    const hurray_status st = gs::check_in_block(h, at, block, &err);
    const bool want = u128{at} + u128{h.offset} + u128{h.byte_size} <= u128{block};
    FUZZ_CHECK((st == HURRAY_OK) == want,
               "a buffer is accepted exactly when it lies in the block the handle maps");
    if (st == HURRAY_OK)
      hurray_fuzz::verdict_accepted();
    else
      check_refusal(st, err);
  }
  if (h.fd >= 0) close(h.fd);
  if (other >= 0) close(other);
  return 0;
}
