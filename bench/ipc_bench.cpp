// Handing a buffer to another process: libhurray's IPC channel (the memory
// itself crosses, as a memfd) against sending the same bytes over a Unix
// socket, side by side in one run; and the handoff + release round trip
// against a bare socket ping-pong of the same number of messages.
// bench/run.py turns the pairs into ratios in docs/performance.md and plots
// the size sweep (docs/ipc-sweep.png). No timing is asserted anywhere.
//
// Each benchmark forks its consumer process once, before timing starts.
// "Handed over" means: the consumer holds the bytes (libhurray: a mapping of
// the producer's memory; socket: a copy in its own buffer) and has told the
// producer so, and the producer has heard it. The libhurray consumer touches
// the first and last byte only: first use of a page of the mapping costs a
// page fault there, where the socket's consumer paid for the copy instead.
#include <benchmark/benchmark.h>
#include <hurray_ipc.h>

#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr size_t kHandoffMsg = 232, kReleaseMsg = 24;  // the channel's message sizes

bool write_all(int fd, const void *p, size_t n) {
  const auto *c = static_cast<const char *>(p);
  while (n) {
    const ssize_t k = write(fd, c, n);
    if (k <= 0) return false;
    c += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

bool read_all(int fd, void *p, size_t n) {
  auto *c = static_cast<char *>(p);
  while (n) {
    const ssize_t k = read(fd, c, n);
    if (k <= 0) return false;
    c += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

void reap(pid_t pid) {
  int status;
  waitpid(pid, &status, 0);
}

// ---- libhurray: a consumer process that receives, reads, releases ----

struct HurrayConsumer {
  pid_t pid = -1;
  hurray_ipc_channel *ch = nullptr;
  uint64_t released = 0;

  static void on_release(void *user, uint64_t, hurray_ipc_release_reason) {
    ++static_cast<HurrayConsumer *>(user)->released;
  }

  bool start() {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return false;
    pid = fork();
    if (pid < 0) return false;
    if (pid == 0) {
      close(sv[0]);
      hurray_ipc_channel *c = nullptr;
      if (hurray_ipc_channel_from_fd(sv[1], nullptr, &c, nullptr) != HURRAY_OK) _exit(1);
      hurray_handoff h;
      unsigned sink = 0;
      while (hurray_ipc_receive(c, -1, &h, nullptr, nullptr) == HURRAY_OK) {
        hurray_buffer_handle hd;
        hurray_handle_decode(h.handle, sizeof h.handle, &hd, nullptr);
        const auto *p = static_cast<const volatile unsigned char *>(h.data);
        if (hd.byte_size) sink += p[0] + p[hd.byte_size - 1];
        h.release(&h);
      }
      hurray_ipc_close(c);
      _exit(sink == 1 ? 2 : 0);
    }
    close(sv[1]);
    if (hurray_ipc_channel_from_fd(sv[0], nullptr, &ch, nullptr) != HURRAY_OK) return false;
    hurray_ipc_set_release_callback(ch, on_release, this, nullptr);
    return true;
  }
  // Send and wait until the consumer released it.
  bool hand_over(hurray_buffer *b) {
    const uint64_t want = released + 1;
    if (hurray_ipc_send(ch, b, nullptr, nullptr, nullptr) != HURRAY_OK) return false;
    while (released < want)
      if (hurray_ipc_progress(ch, -1, nullptr, nullptr) != HURRAY_OK) return false;
    return true;
  }
  ~HurrayConsumer() {
    if (ch) hurray_ipc_close(ch);
    if (pid > 0) reap(pid);
  }
};

hurray_buffer *shareable(uint64_t size) {
  hurray_alloc_desc d = HURRAY_ALLOC_DESC_INIT;
  d.flags = HURRAY_ALLOC_SHAREABLE;
  d.byte_size = size;
  d.alignment = HURRAY_IPC_ALIGNMENT;
  hurray_buffer *b = nullptr;
  if (hurray_buffer_alloc(nullptr, &d, &b, nullptr) != HURRAY_OK) return nullptr;
  std::memset(hurray_buffer_data(b), 0x5A, size);  // the producer wrote its data
  return b;
}

void BM_Handover_Hurray(benchmark::State &state) {
  const auto size = static_cast<uint64_t>(state.range(0));
  hurray_buffer *b = shareable(size);
  HurrayConsumer c;
  if (!b || !c.start()) {
    state.SkipWithError("set-up failed");
    hurray_buffer_unref(b);
    return;
  }
  for (auto _ : state)
    if (!c.hand_over(b)) {
      state.SkipWithError("handoff failed");
      break;
    }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(size));
  hurray_buffer_unref(b);
}

// ---- baseline: the same bytes through a Unix stream socket ----

void BM_Handover_Socket(benchmark::State &state) {
  const auto size = static_cast<size_t>(state.range(0));
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    state.SkipWithError("socketpair failed");
    return;
  }
  const int big = 4 << 20;  // generous socket buffers: the best case for the copy
  for (int fd : sv) {
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
  }
  std::vector<unsigned char> src(size, 0x5A);
  const pid_t pid = fork();
  if (pid < 0) {
    state.SkipWithError("fork failed");
    return;
  }
  if (pid == 0) {
    close(sv[0]);
    std::vector<unsigned char> dst(size, 0);  // the consumer's own copy
    const char ack = 'k';
    while (read_all(sv[1], dst.data(), size) && write_all(sv[1], &ack, 1)) {
    }
    _exit(0);
  }
  close(sv[1]);
  for (auto _ : state) {
    char ack;
    if (!write_all(sv[0], src.data(), size) || !read_all(sv[0], &ack, 1)) {
      state.SkipWithError("socket copy failed");
      break;
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(size));
  close(sv[0]);
  reap(pid);
}

// 4 KiB to 1 GiB. The CTest smoke run filters out the large sizes.
void sizes(benchmark::internal::Benchmark *b) {
  for (int64_t n : {int64_t{4} << 10, int64_t{64} << 10, int64_t{1} << 20, int64_t{16} << 20,
                    int64_t{64} << 20, int64_t{256} << 20, int64_t{1} << 30})
    b->Arg(n);
  b->UseRealTime()->Unit(benchmark::kMicrosecond);
}
BENCHMARK(BM_Handover_Hurray)->Apply(sizes);
BENCHMARK(BM_Handover_Socket)->Apply(sizes);

// ---- round trip: handoff + release vs a bare ping-pong ----

void BM_RoundTrip_Hurray(benchmark::State &state) {
  hurray_buffer *b = shareable(4096);
  HurrayConsumer c;
  if (!b || !c.start()) {
    state.SkipWithError("set-up failed");
    hurray_buffer_unref(b);
    return;
  }
  for (auto _ : state)
    if (!c.hand_over(b)) {
      state.SkipWithError("handoff failed");
      break;
    }
  hurray_buffer_unref(b);
}
BENCHMARK(BM_RoundTrip_Hurray)->UseRealTime();

// Two messages per round trip, of the channel's sizes, over the same kind of
// socket; no descriptor, no mapping, no bookkeeping.
void BM_RoundTrip_PingPong(benchmark::State &state) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    state.SkipWithError("socketpair failed");
    return;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    state.SkipWithError("fork failed");
    return;
  }
  if (pid == 0) {
    close(sv[0]);
    unsigned char in[kHandoffMsg], out[kReleaseMsg] = {};
    while (read(sv[1], in, sizeof in) == static_cast<ssize_t>(sizeof in) &&
           write(sv[1], out, sizeof out) == static_cast<ssize_t>(sizeof out)) {
    }
    _exit(0);
  }
  close(sv[1]);
  unsigned char msg[kHandoffMsg] = {}, reply[kReleaseMsg];
  for (auto _ : state) {
    if (write(sv[0], msg, sizeof msg) != static_cast<ssize_t>(sizeof msg) ||
        read(sv[0], reply, sizeof reply) != static_cast<ssize_t>(sizeof reply)) {
      state.SkipWithError("ping-pong failed");
      break;
    }
  }
  close(sv[0]);
  reap(pid);
}
BENCHMARK(BM_RoundTrip_PingPong)->UseRealTime();

// The floor for any design that passes the memory's descriptor each time:
// the same ping-pong, the first message carrying a memfd (SCM_RIGHTS) that
// the other side fstat()s and closes. Not a pair in docs/performance.md: it
// shows where the round trip's time goes.
void BM_RoundTrip_PingPongFd(benchmark::State &state) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    state.SkipWithError("socketpair failed");
    return;
  }
  hurray_buffer *b = shareable(4096);
  const int memfd = hurray_buffer_fd(b);
  const pid_t pid = fork();
  if (pid < 0) {
    state.SkipWithError("fork failed");
    hurray_buffer_unref(b);
    return;
  }
  if (pid == 0) {
    close(sv[0]);
    unsigned char in[kHandoffMsg], out[kReleaseMsg] = {};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    for (;;) {
      iovec iov{in, sizeof in};
      msghdr mh{};
      mh.msg_iov = &iov;
      mh.msg_iovlen = 1;
      mh.msg_control = control;
      mh.msg_controllen = sizeof control;
      if (recvmsg(sv[1], &mh, MSG_CMSG_CLOEXEC) != static_cast<ssize_t>(sizeof in)) break;
      int fd;
      std::memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&mh)), sizeof fd);
      struct stat sb;
      fstat(fd, &sb);
      close(fd);
      if (write(sv[1], out, sizeof out) != static_cast<ssize_t>(sizeof out)) break;
    }
    _exit(0);
  }
  close(sv[1]);
  unsigned char msg[kHandoffMsg] = {}, reply[kReleaseMsg];
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  for (auto _ : state) {
    iovec iov{msg, sizeof msg};
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = control;
    mh.msg_controllen = sizeof control;
    cmsghdr *c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &memfd, sizeof memfd);
    if (sendmsg(sv[0], &mh, 0) != static_cast<ssize_t>(sizeof msg) ||
        read(sv[0], reply, sizeof reply) != static_cast<ssize_t>(sizeof reply)) {
      state.SkipWithError("ping-pong failed");
      break;
    }
  }
  close(sv[0]);
  reap(pid);
  hurray_buffer_unref(b);
}
BENCHMARK(BM_RoundTrip_PingPongFd)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
