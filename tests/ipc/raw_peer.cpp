// A hostile (or buggy) peer of the IPC tests (tests/ipc/hostile_test.cpp
// execs it): it speaks the wire format itself, without libhurray's channel,
// and breaks one rule per mode. Every wait is bounded (10 s).
//
//   hurray_ipc_raw_peer MODE FD [N]     on an inherited socket, after HELLO both ways:
//     overlong      a HANDOFF (of an empty buffer) one byte longer than its body
//     release0      a RELEASE of ID 0
//     align64       a HANDOFF of a sealed memfd whose handle says alignment 64
//     unsealed      a HANDOFF of a memfd that is not sealed against shrinking
//     short         a HANDOFF of 8192 bytes whose sealed memfd holds 4096
//     kind1         a HANDOFF of a sealed memfd as kind 1 (a dev build's memfd kind)
//     offset        a HANDOFF of a sealed memfd at offset 100 (not page-aligned)
//     rofd          a writable HANDOFF whose sealed memfd comes as a read-only descriptor
//     hello-first   (before HELLO) a RELEASE, then HELLO
//     hello-twice   a second HELLO
//     hello-hello   (before reading) two HELLOs, then write 'R'
//     unannounced   a HANDOFF of CUDA memory (not announced by the victim)
//     flood N       N HANDOFFs, each with a sealed memfd (or until the victim hangs up)
//     flood-empty N N HANDOFFs of empty buffers
//     stuck         write 'R' to stdout, then never read
//     drain-on-usr1 write 'R', read nothing until SIGUSR1 (10 s at most), then
//                   read everything until the victim hangs up
//     stuck-after N N HANDOFFs of empty buffers, write 'R', then never read
//     grab N        receive one HANDOFF and attack its descriptor: it must not
//                   shrink, grow or take seals, nor (N = 1, READ_ONLY) be
//                   mapped or reopened writable; then RELEASE it
//     announce      print the victim's HELLO (device count) as 'D<n>', wait for EOF
//   the DEVICES modes: HELLO of protocol version 2 (CPU and CUDA) both ways and
//   the victim's DEVICES read (except devices-first, -v1 and -none), then:
//     devices-first (before HELLO) a DEVICES, then HELLO
//     devices-v1    HELLO of version 1, then a DEVICES
//     devices-none  a RELEASE where DEVICES must come
//     devices-short a DEVICES of 1 device, 4 bytes short, its length field saying so
//     devices-kind  a DEVICES whose device has identity kind 7
//     devices-dup   a DEVICES listing CUDA ordinal 0 twice
//     devices-many  a DEVICES whose count says 33 (at most 32)
//     devices-huge  a 20000-byte DEVICES datagram
//     devices-tag   a DEVICES of a Vulkan device (the HELLO announced CPU and CUDA)
//     devices-twice a DEVICES, a RELEASE of an ID never sent, then DEVICES again
//   the WINDOW modes: HELLO of protocol version 3 (CPU), the victim's DEVICES and
//   WINDOW read, an empty DEVICES sent, then:
//     window-read   WINDOW 128/128; print the victim's as 'W<handoffs>/<fds>'
//     window-3      WINDOW 3/128, write 'R', then read and release nothing
//     window-fds4   WINDOW 128/4, write 'R', then read and release nothing
//     window-zero   a WINDOW of 0 handoffs
//     window-fds    a WINDOW of 1 descriptor (one handoff may carry 2)
//     window-none   a RELEASE where WINDOW must come
//     window-twice  WINDOW twice
//     window-v2     (HELLO of version 2, no WINDOW read) a WINDOW
//     window-flood N  WINDOW, then N HANDOFFs with a sealed memfd, ignoring the
//                   victim's window (or until it hangs up)
//   then (except stuck, grab) wait for the victim to hang up.
//
//   hurray_ipc_raw_peer silent PATH         connect, write 'R', never send HELLO
//   hurray_ipc_raw_peer mute PATH           connect, HELLO both ways, write 'R', never read
//   hurray_ipc_raw_peer release-flood PATH N  connect, HELLO both ways, write 'R', then
//                                           N RELEASEs of IDs never sent, wait for EOF
//   hurray_ipc_raw_peer mute-devices PATH   connect, HELLO (version 2) both ways, write
//                                           'R', never send DEVICES; wait for EOF
//   hurray_ipc_raw_peer hangup PATH         connect and hang up at once
//   hurray_ipc_raw_peer hello-bye PATH      connect, wait for the HELLO, send HELLO
//                                           (version 1), hang up
//   hurray_ipc_raw_peer hello-as UID PATH   become UID, connect, HELLO both ways
//   hurray_ipc_raw_peer listen-as UID PATH  become UID, listen at PATH (mode 0666),
//                                           write 'R', HELLO both ways with one caller
//
// Exit status: 0 as described; 2 connect refused (EACCES); 3 the victim
// hung up before its HELLO; 1 anything else (a message on stderr).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../../src/ipc/wire.h"
#include "../common/scm_rights.h"

namespace {

namespace wire = hurray::ipc;

#ifdef F_SEAL_FUTURE_WRITE
constexpr int kSealFutureWrite = F_SEAL_FUTURE_WRITE;
#else
constexpr int kSealFutureWrite = 0x0010;  // Linux 5.1
#endif

bool hung_up() { return errno == EPIPE || errno == ECONNRESET; }

int die(const char *what) {
  std::fprintf(stderr, "raw peer: %s (%s)\n", what, std::strerror(errno));
  return 1;
}

// false: not sent (errno says why; EPIPE: the victim hung up, as it should)
bool send_msg(int fd, const wire::Message &m, int extra_bytes = 0, int pass_fd = -1) {
  uint8_t buf[wire::kMaxMessage + 8] = {};
  size_t n = wire::encode(m, buf, sizeof buf);
  if (extra_bytes) {  // a longer body, the length field saying so
    const uint32_t len = static_cast<uint32_t>(n - wire::kHeaderSize + extra_bytes);
    std::memcpy(buf + 8, &len, 4);
    n += extra_bytes;
  }
  return hurray_test::send_with_fd(fd, buf, n, pass_fd);
}

// Receive one message within 10 s; -1 timeout or error, 0 end of file, else
// its length (*fd: a descriptor that came with it, or -1; any other closed).
ssize_t recv_msg(int fd, wire::Message *m, int *got_fd) {
  *got_fd = -1;
  uint8_t buf[wire::kMaxMessage];
  std::vector<int> fds;
  const ssize_t r = hurray_test::recv_with_fds(fd, buf, sizeof buf, &fds, 2, 10000);
  if (!fds.empty()) {
    *got_fd = fds[0];
    fds.erase(fds.begin());
  }
  const size_t nfds = hurray_test::close_all(fds) + (*got_fd >= 0);
  if (r <= 0) return r;
  if (wire::parse(buf, static_cast<size_t>(r), nfds, m, nullptr) != HURRAY_OK) return -1;
  return r;
}

wire::Message hello() {
  wire::Message m{};
  m.type = wire::Type::Hello;
  m.protocol_version = 1;
  m.device_count = 1;
  m.devices[0] = {HURRAY_DEVICE_CPU, 1u << HURRAY_MEMORY_STANDARD};
  return m;
}

// HELLO both ways: 0 done, 3 the victim hung up first, 1 otherwise.
int handshake(int fd, wire::Message *peer) {
  if (!send_msg(fd, hello())) return errno == EPIPE || errno == ECONNRESET ? 3 : die("send HELLO");
  int f;
  const ssize_t r = recv_msg(fd, peer, &f);
  if (r == 0 || (r < 0 && errno == ECONNRESET)) return 3;
  if (r < 0 || peer->type != wire::Type::Hello) return die("no HELLO from the victim");
  return 0;
}

int wait_eof(int fd);

wire::Message hello2() {
  wire::Message m = hello();
  m.protocol_version = 2;
  m.device_count = 2;
  m.devices[1] = {HURRAY_DEVICE_CUDA, 1u << HURRAY_MEMORY_STANDARD};
  return m;
}

// A DEVICES of CUDA device 0 with a UUID.
wire::Message devices() {
  wire::Message m{};
  m.type = wire::Type::Devices;
  m.id_count = 1;
  m.ids[0].tag = HURRAY_DEVICE_CUDA;
  m.ids[0].kind = HURRAY_BACKEND_ID_UUID;
  std::memset(m.ids[0].bytes, 0x5A, sizeof m.ids[0].bytes);
  return m;
}

// m encoded, then changed by `edit` (bytes, length), sent as it is.
template <class Edit>
bool send_edited(int fd, const wire::Message &m, Edit edit) {
  uint8_t buf[1024] = {};
  size_t n = wire::encode(m, buf, sizeof buf);
  edit(buf, &n);
  return send(fd, buf, n, MSG_NOSIGNAL) == static_cast<ssize_t>(n);
}

// HELLO of version 2 both ways, and the victim's DEVICES: 0 done, 3 the
// victim hung up first, 1 otherwise.
int handshake2(int fd, wire::Message *peer) {
  if (!send_msg(fd, hello2())) return hung_up() ? 3 : die("send HELLO");
  int f;
  ssize_t r = recv_msg(fd, peer, &f);
  if (r == 0 || (r < 0 && errno == ECONNRESET)) return 3;
  if (r < 0 || peer->type != wire::Type::Hello) return die("no HELLO from the victim");
  wire::Message d;
  r = recv_msg(fd, &d, &f);
  if (r <= 0 || d.type != wire::Type::Devices) return die("no DEVICES from the victim");
  return 0;
}

// The DEVICES modes (see the top); -1: not one of them.
int devices_mode(const std::string &mode, int fd) {
  const auto sent = [](bool ok) { return ok || hung_up() ? 0 : die("send"); };
  const auto no_edit = [](uint8_t *, size_t *) {};
  if (mode == "devices-first") {
    if (!send_msg(fd, devices())) return die("send");
    (void)send_msg(fd, hello2());  // the victim may have hung up already: as it should
    return wait_eof(fd);
  }
  if (mode == "devices-v1" || mode == "devices-none") {
    const bool v1 = mode == "devices-v1";
    if (!send_msg(fd, v1 ? hello() : hello2())) return die("send HELLO");
    wire::Message rel{};
    rel.type = wire::Type::Release;
    rel.id = 9;
    if (const int rc = sent(v1 ? send_msg(fd, devices()) : send_msg(fd, rel))) return rc;
    return wait_eof(fd);
  }
  if (mode.rfind("devices-", 0) != 0) return -1;
  wire::Message peer;
  if (const int rc = handshake2(fd, &peer)) return rc;
  wire::Message m = devices();
  int rc;
  if (mode == "devices-short") {
    rc = sent(send_edited(fd, m, [](uint8_t *b, size_t *n) {
      *n -= 4;
      b[8] = static_cast<uint8_t>(*n - wire::kHeaderSize);
    }));
  } else if (mode == "devices-kind") {
    rc = sent(send_edited(fd, m, [](uint8_t *b, size_t *) { b[wire::kHeaderSize + 8] = 7; }));
  } else if (mode == "devices-dup") {
    m.id_count = 2;
    m.ids[1] = m.ids[0];
    m.ids[1].bytes[0] = 1;
    rc = sent(send_msg(fd, m));
  } else if (mode == "devices-many") {
    rc = sent(send_edited(fd, m, [](uint8_t *b, size_t *) { b[wire::kHeaderSize] = 33; }));
  } else if (mode == "devices-huge") {  // longer than any message (a HANDOFF_MANY's 16,404)
    std::vector<uint8_t> big(20000);
    const size_t k = wire::encode(m, big.data(), big.size());
    const uint32_t len = static_cast<uint32_t>(big.size() - wire::kHeaderSize);
    std::memcpy(big.data() + 8, &len, 4);
    rc = k ? sent(send(fd, big.data(), big.size(), MSG_NOSIGNAL) ==
                  static_cast<ssize_t>(big.size()))
           : die("encode");
  } else if (mode == "devices-tag") {
    m.ids[0].tag = HURRAY_DEVICE_VULKAN;
    rc = sent(send_msg(fd, m));
  } else if (mode == "devices-twice") {
    wire::Message rel{};
    rel.type = wire::Type::Release;
    rel.id = 9;
    rc = sent(send_edited(fd, m, no_edit) && send_msg(fd, rel) && send_msg(fd, m));
  } else {
    return die("unknown DEVICES mode");
  }
  return rc ? rc : wait_eof(fd);
}

// Wait (10 s at most) for the victim to hang up: 0 when it did.
int wait_eof(int fd) {
  for (int i = 0; i < 1000; ++i) {  // what the victim still sends, then EOF
    wire::Message m;
    int f;
    errno = 0;
    const ssize_t r = recv_msg(fd, &m, &f);
    if (f >= 0) close(f);
    if (r == 0 || (r < 0 && errno == ECONNRESET)) return 0;
    if (r < 0) break;
  }
  std::fprintf(stderr, "raw peer: the victim did not hang up within 10 s\n");
  return 1;
}

int sealed_memfd(size_t size, bool seal) {
  const int fd = memfd_create("raw-peer", MFD_CLOEXEC | (seal ? MFD_ALLOW_SEALING : 0));
  if (fd < 0 || ftruncate(fd, static_cast<off_t>(size)) != 0) return -1;
  if (seal && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0) return -1;
  return fd;
}

wire::Message handoff(uint64_t id, uint64_t size, uint32_t alignment, uint8_t tag) {
  wire::Message m{};
  m.type = wire::Type::Handoff;
  m.id = id;
  const hurray_buffer_handle h = {size, alignment, tag, HURRAY_SYNC_PRODUCER_SYNCED,
                                  HURRAY_MEMORY_STANDARD, 0};
  hurray_handle_encode(&h, m.handle, sizeof m.handle, nullptr);
  if (size) {
    m.memory.kind = wire::kKindMemfd;
    m.memory.has_fd = tag == HURRAY_DEVICE_CPU ? 1 : 0;
    m.memory.byte_size = size;
  }
  return m;
}

// The attacks on a descriptor received in a HANDOFF; 0 when each failed.
int grab(int fd, bool read_only) {
  wire::Message m;
  int f;
  if (recv_msg(fd, &m, &f) <= 0 || m.type != wire::Type::Handoff || f < 0)
    return die("no HANDOFF with a descriptor");
  int bad = 0;
  auto expect_fail = [&](bool failed, const char *what) {
    if (!failed) {
      std::fprintf(stderr, "raw peer: %s succeeded\n", what);
      bad = 1;
    }
  };
  // root may reopen any file writable (CAP_DAC_OVERRIDE): attack as a plain user
  if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) return die("setuid");
  struct stat sb;
  if (fstat(f, &sb) != 0) return die("fstat");
  const size_t len = static_cast<size_t>(sb.st_size);
  const int seals = fcntl(f, F_GET_SEALS);
  expect_fail(seals >= 0 && (seals & F_SEAL_SHRINK) && (seals & F_SEAL_GROW),
              "a memfd without F_SEAL_SHRINK|F_SEAL_GROW: not sealing it");
  expect_fail(ftruncate(f, 0) != 0, "ftruncate(0) of the received memfd");
  expect_fail(ftruncate(f, static_cast<off_t>(len) * 2) != 0, "growing the received memfd");
  // F_SEAL_FUTURE_WRITE would take, despite the producer's writable mapping,
  // but for F_SEAL_SEAL (and a read-only descriptor)
  expect_fail(fcntl(f, F_ADD_SEALS, kSealFutureWrite) != 0, "adding F_SEAL_FUTURE_WRITE");
  void *r = mmap(nullptr, len, PROT_READ, MAP_SHARED, f, 0);
  if (r == MAP_FAILED) return die("mmap PROT_READ");
  munmap(r, len);
  if (read_only) {
    void *w = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
    expect_fail(w == MAP_FAILED, "mmap(PROT_WRITE, MAP_SHARED) of a READ_ONLY handoff");
    if (w != MAP_FAILED) munmap(w, len);
    char path[40];
    std::snprintf(path, sizeof path, "/proc/self/fd/%d", f);
    const int rw = open(path, O_RDWR | O_CLOEXEC);
    expect_fail(rw < 0, "reopening a READ_ONLY handoff's memfd O_RDWR");
    if (rw >= 0) close(rw);
    expect_fail(!(fcntl(f, F_GETFL) & O_RDWR) && !(fcntl(f, F_GETFL) & O_WRONLY),
                "a READ_ONLY handoff sent with a writable descriptor: not");
  }
  close(f);
  wire::Message rel{};
  rel.type = wire::Type::Release;
  rel.id = m.id;
  if (!send_msg(fd, rel)) return die("send RELEASE");
  return bad;
}

// The WINDOW modes (protocol version 3; see the top): HELLO, DEVICES and
// WINDOW read from the victim, then this side's DEVICES and its WINDOW,
// broken as the mode says.
int window_mode(const std::string &mode, int fd, long n) {
  const uint32_t v = mode == "window-v2" ? 2 : 3;
  wire::Message h = hello(), peer{}, m{}, win{};
  h.protocol_version = v;
  if (!send_msg(fd, h)) return hung_up() ? 3 : die("send HELLO");
  int f;
  if (recv_msg(fd, &peer, &f) <= 0 || peer.type != wire::Type::Hello) return die("no HELLO");
  if (recv_msg(fd, &m, &f) <= 0 || m.type != wire::Type::Devices) return die("no DEVICES");
  if (v >= 3 && (recv_msg(fd, &win, &f) <= 0 || win.type != wire::Type::Window))
    return die("no WINDOW from the victim");
  wire::Message dev{};
  dev.type = wire::Type::Devices;
  if (!send_msg(fd, dev)) return die("send DEVICES");
  wire::Message w{};
  w.type = wire::Type::Window;
  w.window_handoffs = 128;
  w.window_fds = 128;
  if (mode == "window-read") {
    const std::string s = "W" + std::to_string(win.window_handoffs) + "/" +
                          std::to_string(win.window_fds);
    if (write(1, s.data(), s.size()) != static_cast<ssize_t>(s.size())) return die("write");
  }
  if (mode == "window-3") w.window_handoffs = 3;
  if (mode == "window-fds4") w.window_fds = 4;
  if (mode == "window-zero") w.window_handoffs = 0;
  if (mode == "window-fds") w.window_fds = 1;
  if (mode == "window-none") {  // a RELEASE where WINDOW must come
    w = wire::Message{};
    w.type = wire::Type::Release;
    w.id = 1;
  }
  bool ok = send_msg(fd, w);
  if (mode == "window-twice") ok = ok && send_msg(fd, w);
  if (mode == "window-flood") {  // N HANDOFFs, the victim's window ignored
    const int mfd = sealed_memfd(4096, true);
    if (mfd < 0) return die("memfd");
    for (long i = 1; ok && i <= n; ++i)
      ok = send_msg(fd, handoff(static_cast<uint64_t>(i), 4096, 4096, HURRAY_DEVICE_CPU), 0, mfd);
    close(mfd);
  }
  if (!ok && !hung_up()) return die("send");
  if ((mode == "window-3" || mode == "window-fds4") && write(1, "R", 1) != 1) return die("write");
  return wait_eof(fd);  // reads (and never releases) what comes
}

int connect_path(const char *path) {
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
  if (connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) {
    const int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

bool become(const char *uid) {
  const auto u = static_cast<uid_t>(std::atoi(uid));
  return setgid(u) == 0 && setuid(u) == 0;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 3) return die("usage: hurray_ipc_raw_peer MODE FD|PATH [N]");
  const std::string mode = argv[1];
  wire::Message peer{};
  if (mode == "hangup") {  // connect, then go without a word
    const int fd = connect_path(argv[2]);
    if (fd < 0) return die("connect");
    close(fd);
    return 0;
  }
  if (mode == "silent") {
    const int fd = connect_path(argv[2]);
    if (fd < 0) return die("connect");
    if (write(1, "R", 1) != 1) return die("write");
    for (;;) pause();
  }
  if (mode == "mute" || mode == "release-flood") {  // HELLO both ways, then ...
    const int fd = connect_path(argv[2]);
    if (fd < 0) return die("connect");
    if (const int rc = handshake(fd, &peer)) return rc;
    if (write(1, "R", 1) != 1) return die("write");
    if (mode == "mute") for (;;) pause();  // ... never read
    const long n = argc > 3 ? std::atol(argv[3]) : 1;
    wire::Message rel{};  // ... RELEASEs of IDs never sent, as fast as they go
    rel.type = wire::Type::Release;
    for (long i = 1; i <= n; ++i) {
      rel.id = (uint64_t{1} << 40) + static_cast<uint64_t>(i);
      if (!send_msg(fd, rel)) break;  // the victim hung up
    }
    return wait_eof(fd);
  }
  if (mode == "hello-bye") {
    const int fd = connect_path(argv[2]);
    if (fd < 0) return die("connect");
    int f;
    if (recv_msg(fd, &peer, &f) <= 0 || peer.type != wire::Type::Hello) return die("no HELLO");
    if (!send_msg(fd, hello())) return die("send HELLO");
    close(fd);
    return 0;
  }
  if (mode == "mute-devices") {
    const int fd = connect_path(argv[2]);
    if (fd < 0) return die("connect");
    if (!send_msg(fd, hello2())) return die("send HELLO");
    int f;
    if (recv_msg(fd, &peer, &f) <= 0 || peer.type != wire::Type::Hello) return die("no HELLO");
    if (write(1, "R", 1) != 1) return die("write");
    return wait_eof(fd);
  }
  if (mode == "hello-as") {
    if (argc < 4 || !become(argv[2])) return die("setuid");
    const int fd = connect_path(argv[3]);
    if (fd < 0) return errno == EACCES ? 2 : die("connect");
    const int rc = handshake(fd, &peer);
    close(fd);
    return rc;
  }
  if (mode == "listen-as") {
    if (argc < 4 || !become(argv[2])) return die("setuid");
    const int l = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", argv[3]);
    if (bind(l, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 || chmod(argv[3], 0666) != 0 ||
        listen(l, 4) != 0)
      return die("bind/listen");
    if (write(1, "R", 1) != 1) return die("write");
    pollfd p{l, POLLIN, 0};
    if (poll(&p, 1, 10000) != 1) return die("nobody connected");
    const int fd = accept4(l, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return die("accept");
    const int rc = handshake(fd, &peer);
    unlink(argv[3]);
    return rc;
  }
  const int fd = std::atoi(argv[2]);
  const long n = argc > 3 ? std::atol(argv[3]) : 1;
  if (const int rc = devices_mode(mode, fd); rc >= 0) return rc;
  if (mode.rfind("window-", 0) == 0) return window_mode(mode, fd, n);
  if (mode == "hello-hello") {  // both before reading anything, then 'R'
    if (!send_msg(fd, hello()) || !send_msg(fd, hello())) return die("send");
    if (write(1, "R", 1) != 1) return die("write");
    return wait_eof(fd);
  }
  if (mode == "hello-first") {
    wire::Message rel{};
    rel.type = wire::Type::Release;
    rel.id = 1;
    if (!send_msg(fd, rel)) return die("send");
    (void)send_msg(fd, hello());  // the victim may have hung up already: as it should
    return wait_eof(fd);
  }
  if (const int rc = handshake(fd, &peer)) return rc;
  if (mode == "announce") {
    const std::string s = "D" + std::to_string(peer.device_count);
    if (write(1, s.data(), s.size()) != static_cast<ssize_t>(s.size())) return die("write");
    return wait_eof(fd);
  }
  if (mode == "overlong") {
    if (!send_msg(fd, handoff(1, 0, 4096, HURRAY_DEVICE_CPU), 1) && !hung_up()) return die("send");
    return wait_eof(fd);
  }
  if (mode == "release0") {
    wire::Message rel{};
    rel.type = wire::Type::Release;
    uint8_t buf[wire::kMaxMessage];
    rel.id = 1;
    const size_t k = wire::encode(rel, buf, sizeof buf);
    std::memset(buf + wire::kHeaderSize, 0, 8);  // id 0, which encode would not check
    if (write(fd, buf, k) != static_cast<ssize_t>(k)) return die("write");
    return wait_eof(fd);
  }
  if (mode == "align64" || mode == "unsealed") {
    const int mfd = sealed_memfd(8192, mode == "align64");
    if (mfd < 0) return die("memfd");
    const uint32_t al = mode == "align64" ? 64 : 4096;
    if (!send_msg(fd, handoff(1, 8192, al, HURRAY_DEVICE_CPU), 0, mfd) && !hung_up()) return die("send");
    close(mfd);
    return wait_eof(fd);
  }
  if (mode == "short" || mode == "kind1" || mode == "offset" || mode == "rofd") {
    int mfd = sealed_memfd(mode == "short" ? 4096 : 3 * 4096, true);
    if (mfd < 0) return die("memfd");
    if (mode == "rofd") {
      char path[40];
      std::snprintf(path, sizeof path, "/proc/self/fd/%d", mfd);
      const int ro = open(path, O_RDONLY | O_CLOEXEC);
      close(mfd);
      if ((mfd = ro) < 0) return die("reopen");
    }
    wire::Message m = handoff(1, 8192, 4096, HURRAY_DEVICE_CPU);
    if (mode == "kind1") m.memory.kind = 1;
    if (mode == "offset") m.memory.offset = 100;
    if (!send_msg(fd, m, 0, mfd) && !hung_up()) return die("send");
    close(mfd);
    return wait_eof(fd);
  }
  if (mode == "hello-twice") {
    if (!send_msg(fd, hello()) && !hung_up()) return die("send");
    return wait_eof(fd);
  }
  if (mode == "unannounced") {
    if (!send_msg(fd, handoff(1, 4096, 4096, HURRAY_DEVICE_CUDA)) && !hung_up()) return die("send");
    return wait_eof(fd);
  }
  if (mode == "flood" || mode == "flood-empty") {
    const int mfd = mode == "flood" ? sealed_memfd(4096, true) : -1;
    if (mode == "flood" && mfd < 0) return die("memfd");
    for (long i = 1; i <= n; ++i) {
      const wire::Message m = handoff(static_cast<uint64_t>(i), mfd >= 0 ? 4096 : 0, 4096,
                                      HURRAY_DEVICE_CPU);
      if (!send_msg(fd, m, 0, mfd)) break;  // the victim hung up: as it should
    }
    if (mfd >= 0) close(mfd);
    return wait_eof(fd);
  }
  if (mode == "stuck-after") {  // N empty HANDOFFs, then read nothing
    for (long i = 1; i <= n; ++i)
      if (!send_msg(fd, handoff(static_cast<uint64_t>(i), 0, 4096, HURRAY_DEVICE_CPU)))
        return die("send");
    if (write(1, "R", 1) != 1) return die("write");
    for (;;) pause();
  }
  if (mode == "drain-on-usr1") {  // read nothing until SIGUSR1, then everything
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, nullptr);
    if (write(1, "R", 1) != 1) return die("write");
    const timespec ten{10, 0};
    if (sigtimedwait(&set, nullptr, &ten) != SIGUSR1) return die("no SIGUSR1 within 10 s");
    return wait_eof(fd);
  }
  if (mode == "stuck") {
    if (write(1, "R", 1) != 1) return die("write");
    for (;;) pause();
  }
  if (mode == "grab") return grab(fd, n == 1);
  return die("unknown mode");
}
