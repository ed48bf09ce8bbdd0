// A hostile producer of CUDA (built with HURRAY_IPC_TEST_HIP: HIP) VMM
// memory for cuda_fake_wire_test.cpp: it
// speaks the IPC wire format itself (src/ipc/wire.h, no libhurray channel),
// passes descriptors with SCM_RIGHTS, and sends the HANDOFFs of
// cuda_wire_cases.h in order, each after the RELEASE of the one before
// (10 s at most each): the bad ones, then a correct one.
//
//   hurray_cuda_wire_peer FD     on an inherited socket: HELLO (version 1,
//        the plugin's device, STANDARD) both ways; a 2 MiB VMM allocation of
//        the runtime that HURRAY_CUDA_LIBRARY (HIP: HURRAY_HIP_LIBRARY) names
//        (the fake: its export gives a memfd, mapped here to fill it);
//        every HANDOFF of the list, each given back; after the last, the
//        consumer's 0xEE in its first byte; then wait for the consumer to
//        hang up.
// Exit status 0 when all of that held; 1 otherwise (a message on stderr).
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "../../../src/ipc/wire.h"
#include "cuda_wire_cases.h"

namespace {

namespace wire = hurray::ipc;
using cuda_wire_test::kBad;
using cuda_wire_test::kBadCount;

constexpr uint64_t kMiB = uint64_t{1} << 20;

int die(const char *what) {
  std::fprintf(stderr, "%s wire peer: %s (%s)\n", cuda_ipc_test::kName, what,
               std::strerror(errno));
  return 1;
}

bool send_msg(int sock, const wire::Message &m, int fd) {
  uint8_t buf[wire::kMaxMessage] = {};
  const size_t n = wire::encode(m, buf, sizeof buf);
  if (n == 0) return false;
  iovec iov{buf, n};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd >= 0) {
    mh.msg_control = control;
    mh.msg_controllen = sizeof control;
    cmsghdr *c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  }
  return sendmsg(sock, &mh, MSG_NOSIGNAL) == static_cast<ssize_t>(n);
}

// One message within 10 s: its length, 0 end of file, -1 timeout or error.
ssize_t recv_msg(int sock, wire::Message *m) {
  pollfd p{sock, POLLIN, 0};
  if (poll(&p, 1, 10000) != 1) return -1;
  uint8_t buf[wire::kMaxMessage];
  const ssize_t r = recv(sock, buf, sizeof buf, 0);
  if (r <= 0) return r;
  return wire::parse(buf, static_cast<size_t>(r), 0, m, nullptr) == HURRAY_OK ? r : -1;
}

// The runtime's 2 MiB VMM allocation, exported: its descriptor, or -1.
int vmm_descriptor() {
  cuda_ipc_test::Driver rt;
  const char *why = nullptr;
  const char *path = std::getenv(cuda_ipc_test::kLibraryEnv);
  return path != nullptr && rt.open(path, &why) ? rt.vmm_descriptor(2 * kMiB) : -1;
}

wire::Message handoff(uint64_t id, uint64_t size, uint64_t offset, uint64_t vmm_size) {
  wire::Message m{};
  m.type = wire::Type::Handoff;
  m.id = id;
  const hurray_buffer_handle h = {size, 4096, cuda_ipc_test::kTag, HURRAY_SYNC_PRODUCER_SYNCED,
                                  HURRAY_MEMORY_STANDARD, 0};
  hurray_handle_encode(&h, m.handle, sizeof m.handle, nullptr);
  m.memory.kind = cuda_ipc_test::kVmmKind;
  m.memory.has_fd = 1;
  m.memory.byte_size = size;
  m.memory.offset = offset;
  std::memcpy(m.memory.bytes, &vmm_size, sizeof vmm_size);
  return m;
}

// The HANDOFF of case `name` (id), and the descriptor it carries (-1: none;
// *own: one made for it, the caller's to close).
wire::Message bad_case(const std::string &name, uint64_t id, int vmm, int *fd, int *own) {
  *own = -1;
  *fd = vmm;
  wire::Message m = handoff(id, 4096, 0, 2 * kMiB);
  if (name == "offset-past") m.memory.offset = 2 * kMiB;
  if (name == "size-past") m = handoff(id, 8192, 2 * kMiB - 4096, 2 * kMiB);
  if (name == "offset-wrap") m.memory.offset = ~uint64_t{0} - 10;
  if (name == "size-odd") {
    const uint64_t odd = 2 * kMiB + 4096;
    std::memcpy(m.memory.bytes, &odd, sizeof odd);
  }
  if (name == "size-zero") std::memset(m.memory.bytes, 0, sizeof m.memory.bytes);
  if (name == "size-lie") {
    const uint64_t lie = 4 * kMiB;
    std::memcpy(m.memory.bytes, &lie, sizeof lie);
  }
  if (name == "garbage") std::memset(m.memory.bytes, 0xA5, sizeof m.memory.bytes);
  if (name == "memfd") {
    *own = memfd_create("not-a-vmm-export", MFD_CLOEXEC);
    if (*own >= 0 && ftruncate(*own, static_cast<off_t>(2 * kMiB)) != 0) *own = -1;
  }
  if (name == "pipe") {
    int p[2];
    if (pipe2(p, O_CLOEXEC) == 0) {
      close(p[1]);
      *own = p[0];
    }
  }
  if (name == "socket") {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0) {
      close(sv[1]);
      *own = sv[0];
    }
  }
  if (name == "folder") *own = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (*own >= 0) *fd = *own;
  if (name == "none") {
    *fd = -1;
    m.memory.has_fd = 0;
  }
  if (name == "kind-cum1") m.memory.kind = cuda_ipc_test::kMemoryKind;
  if (name == "kind-other") m.memory.kind = cuda_ipc_test::kOtherVmmKind;
  return m;
}

// Wait for the RELEASE of `id` (10 s at most).
bool released(int sock, uint64_t id) {
  wire::Message m{};
  return recv_msg(sock, &m) > 0 && m.type == wire::Type::Release && m.id == id;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) return die("usage: hurray_cuda_wire_peer FD");
  const int sock = std::atoi(argv[1]);
  wire::Message hello{};
  hello.type = wire::Type::Hello;
  hello.protocol_version = 1;
  hello.device_count = 1;
  hello.devices[0] = {cuda_ipc_test::kTag, 1u << HURRAY_MEMORY_STANDARD};
  wire::Message peer{};
  if (!send_msg(sock, hello, -1)) return die("send HELLO");
  if (recv_msg(sock, &peer) <= 0 || peer.type != wire::Type::Hello) return die("no HELLO");
  const int vmm = vmm_descriptor();
  if (vmm < 0) return die("no VMM descriptor from the runtime");
  void *p = mmap(nullptr, 2 * kMiB, PROT_READ | PROT_WRITE, MAP_SHARED, vmm, 0);
  if (p == MAP_FAILED) return die("mmap of the fake's VMM memfd");
  auto *bytes = static_cast<unsigned char *>(p);
  std::memset(bytes, 0x5A, 2 * kMiB);
  uint64_t id = 0;
  for (int k = 0; k < kBadCount; ++k) {
    int fd = -1, own = -1;
    const wire::Message m = bad_case(kBad[k].name, ++id, vmm, &fd, &own);
    const bool sent = (m.memory.has_fd == 0 || fd >= 0) && send_msg(sock, m, fd);
    if (own >= 0) close(own);
    if (!sent) return die(kBad[k].name);
    if (!released(sock, id)) {
      std::fprintf(stderr, "%s wire peer: %s was not given back\n", cuda_ipc_test::kName,
                   kBad[k].name);
      return 1;
    }
  }
  const wire::Message good =
      handoff(++id, cuda_wire_test::kGoodSize, cuda_wire_test::kGoodOffset, 2 * kMiB);
  if (!send_msg(sock, good, vmm)) return die("send the correct HANDOFF");
  if (!released(sock, id)) return die("the correct HANDOFF was not released");
  if (bytes[cuda_wire_test::kGoodOffset] != 0xEE) {
    std::fprintf(stderr, "%s wire peer: the consumer's write did not arrive\n",
                 cuda_ipc_test::kName);
    return 1;
  }
  if (write(1, "K", 1) != 1) return die("write");
  wire::Message m{};
  for (int i = 0; i < 100; ++i) {  // what still comes, then EOF
    const ssize_t r = recv_msg(sock, &m);
    if (r == 0 || (r < 0 && errno == ECONNRESET)) return 0;
    if (r < 0) break;
  }
  return die("the consumer did not hang up within 10 s");
}
