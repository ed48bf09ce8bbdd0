// Batched IPC handoffs against one at a time (issue 35), side by side in one
// run: 4 KiB buffers handed to another process per second.
//
//   hurray_ipc_batch_bench [SECONDS_PER_TRY (0.3)] [TRIES (5)] [batched-only]
//   (batched-only: only libhurray's batches, once, for a profiler)
//
// A handoff here is: the consumer process holds the buffer's memory mapped,
// reads its first and last byte, releases it, and the producer hears of the
// release. The producer cycles through a pool of 64 shareable buffers
// (as a data loader does), so the consumer's mapping cache is warm for all
// variants. Variants, run in turn in each try (the median of the tries is
// printed, and every ratio is of two numbers of this one run):
//   hurray 1      hurray_ipc_send, consumer hurray_ipc_receive + release,
//                 producer progress until the release came: one at a time
//   hurray 64     hurray_ipc_send_many of 64, the consumer receives all 64,
//                 hurray_ipc_release_many, the producer hears the 64 releases
//   (both with the consumer's descriptor slots, protocol version 5: after
//   the first round no descriptor crosses; and both again without slots, the
//   consumer's descriptor budget set too low for them, as before version 5)
//   SCM_RIGHTS 1  plain sockets, no libhurray: a 232-byte message with the
//                 buffer's memfd; the consumer mmaps it, reads the two bytes,
//                 munmaps, closes, sends a 24-byte ack; the producer reads it
//   SCM_RIGHTS 64 the same with 64 memfds in one message and one ack (the
//                 floor for any batching design; not a target)
//   Python mp     bench/ipc_batch_mp.py: multiprocessing's send_handle over a
//                 Pipe, one memfd at a time, mapped by the consumer (run with
//                 python3 when there is one; else the row says not run)
// No timing is asserted anywhere; the CTest entry only runs it briefly.
#include <hurray_ipc.h>

#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr size_t kSize = 4096, kPool = 64, kBatch = 64;
constexpr size_t kHandoffMsg = 232, kAckMsg = 24;

double now_s() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

unsigned touch(const void *p) {
  const auto *c = static_cast<const volatile unsigned char *>(p);
  return c[0] + c[kSize - 1];
}

struct Pool {
  std::vector<hurray_buffer *> b;
  Pool() {
    for (size_t i = 0; i < kPool; ++i) {
      hurray_alloc_desc d = HURRAY_ALLOC_DESC_INIT;
      d.flags = HURRAY_ALLOC_SHAREABLE;
      d.byte_size = kSize;
      d.alignment = HURRAY_IPC_ALIGNMENT;
      hurray_buffer *x = nullptr;
      if (hurray_buffer_alloc(nullptr, &d, &x, nullptr) != HURRAY_OK) std::abort();
      std::memset(hurray_buffer_data(x), 0x5A, kSize);
      b.push_back(x);
    }
  }
  ~Pool() {
    for (hurray_buffer *x : b) hurray_buffer_unref(x);
  }
};

// ---- libhurray ----

void hurray_consumer(int fd, bool batch, bool slots) {
  // 64 descriptors: 64 slots would pass half of it, so none are announced
  if (!slots && hurray_ipc_set_fd_budget(64, nullptr, nullptr) != HURRAY_OK) _exit(1);
  hurray_ipc_channel *c = nullptr;
  if (hurray_ipc_channel_from_fd(fd, nullptr, &c, nullptr) != HURRAY_OK) _exit(1);
  std::vector<hurray_handoff> h(2 * kBatch);
  unsigned sink = 0;
  for (;;) {
    if (hurray_ipc_receive(c, -1, &h[0], nullptr, nullptr) != HURRAY_OK) break;
    size_t n = 1;
    if (batch)  // what else came with it
      while (n < h.size() && hurray_ipc_receive(c, 0, &h[n], nullptr, nullptr) == HURRAY_OK) ++n;
    for (size_t i = 0; i < n; ++i) sink += touch(h[i].data);
    if (batch)
      hurray_ipc_release_many(h.data(), n, nullptr);
    else
      hurray_ipc_release(&h[0], nullptr);
  }
  hurray_ipc_close(c);
  _exit(sink == 1 ? 2 : 0);
}

struct HurrayRun {
  pid_t pid = -1;
  hurray_ipc_channel *ch = nullptr;
  uint64_t released = 0;
  static void on_release(void *u, uint64_t, hurray_ipc_release_reason) {
    ++static_cast<HurrayRun *>(u)->released;
  }
  HurrayRun(bool batch, bool slots) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) std::abort();
    pid = fork();
    if (pid == 0) {
      close(sv[0]);
      hurray_consumer(sv[1], batch, slots);
    }
    close(sv[1]);
    if (hurray_ipc_channel_from_fd(sv[0], nullptr, &ch, nullptr) != HURRAY_OK) std::abort();
    hurray_ipc_set_release_callback(ch, on_release, this, nullptr);
  }
  ~HurrayRun() {
    hurray_ipc_close(ch);
    waitpid(pid, nullptr, 0);
  }
  bool wait_released(uint64_t want) {
    while (released < want)
      if (hurray_ipc_progress(ch, -1, nullptr, nullptr) != HURRAY_OK) return false;
    return true;
  }
};

// Handoffs per second for `seconds`.
double hurray_rate(Pool &pool, bool batch, bool slots, double seconds) {
  HurrayRun r(batch, slots);
  uint64_t done = 0;
  size_t next = 0;
  const double start = now_s();
  double t = start;
  while (t - start < seconds) {
    if (batch) {
      size_t sent = 0;
      if (hurray_ipc_send_many(r.ch, pool.b.data(), kBatch, nullptr, nullptr, &sent, nullptr) !=
              HURRAY_OK ||
          !r.wait_released(done + kBatch))
        return -1;
      done += kBatch;
    } else {
      if (hurray_ipc_send(r.ch, pool.b[next], nullptr, nullptr, nullptr) != HURRAY_OK ||
          !r.wait_released(done + 1))
        return -1;
      next = (next + 1) % kPool;
      ++done;
    }
    t = now_s();
  }
  return static_cast<double>(done) / (t - start);
}

// ---- plain SCM_RIGHTS, no libhurray ----

bool send_fds(int sock, const int *fds, size_t n) {
  unsigned char msg[kHandoffMsg] = {};
  iovec iov{msg, sizeof msg};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kBatch)];
  mh.msg_control = control;
  mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
  cmsghdr *c = CMSG_FIRSTHDR(&mh);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int) * n);
  std::memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
  return sendmsg(sock, &mh, 0) == static_cast<ssize_t>(sizeof msg);
}

void raw_consumer(int sock) {
  unsigned char in[kHandoffMsg], ack[kAckMsg] = {};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kBatch)];
  unsigned sink = 0;
  for (;;) {
    iovec iov{in, sizeof in};
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = control;
    mh.msg_controllen = sizeof control;
    if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != static_cast<ssize_t>(sizeof in)) break;
    const cmsghdr *c = CMSG_FIRSTHDR(&mh);
    const size_t n = c ? (c->cmsg_len - CMSG_LEN(0)) / sizeof(int) : 0;
    for (size_t i = 0; i < n; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      void *p = mmap(nullptr, kSize, PROT_READ, MAP_SHARED, fd, 0);
      if (p != MAP_FAILED) {
        sink += touch(p);
        munmap(p, kSize);
      }
      close(fd);
    }
    if (write(sock, ack, sizeof ack) != static_cast<ssize_t>(sizeof ack)) break;
  }
  _exit(sink == 1 ? 2 : 0);
}

double raw_rate(Pool &pool, size_t per_msg, double seconds) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(sv[0]);
    raw_consumer(sv[1]);
  }
  close(sv[1]);
  std::vector<int> fds;
  for (hurray_buffer *b : pool.b) fds.push_back(hurray_buffer_fd(b));
  uint64_t done = 0;
  size_t next = 0;
  const double start = now_s();
  double t = start;
  while (t - start < seconds) {
    unsigned char ack[kAckMsg];
    if (!send_fds(sv[0], fds.data() + (per_msg == 1 ? next : 0), per_msg) ||
        read(sv[0], ack, sizeof ack) != static_cast<ssize_t>(sizeof ack))
      break;
    next = (next + 1) % kPool;
    done += per_msg;
    t = now_s();
  }
  close(sv[0]);
  waitpid(pid, nullptr, 0);
  return static_cast<double>(done) / (t - start);
}

// bench/ipc_batch_mp.py for `seconds`: its rate, or -1.
double python_rate(double seconds) {
#ifdef HURRAY_IPC_BATCH_MP
  const std::string cmd = "python3 '" HURRAY_IPC_BATCH_MP "' " + std::to_string(seconds) +
                          " 2>/dev/null";
  FILE *f = popen(cmd.c_str(), "r");
  if (!f) return -1;
  double r = -1;
  if (std::fscanf(f, "handoffs/s %lf", &r) != 1) r = -1;
  pclose(f);
  return r;
#else
  (void)seconds;
  return -1;
#endif
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char **argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 0.3;
  const int tries = argc > 2 ? std::atoi(argv[2]) : 5;
  if (seconds <= 0 || tries < 1) {
    std::fprintf(stderr, "usage: hurray_ipc_batch_bench [SECONDS_PER_TRY] [TRIES]\n");
    return 2;
  }
  Pool pool;
  std::vector<double> h1, h64, n1, n64, r1, r64, py;
  if (argc > 3 && std::string(argv[3]) == "batched-only") {  // for a profiler
    std::printf("%.0f handoffs/s\n", hurray_rate(pool, true, true, seconds));
    return 0;
  }
  for (int i = 0; i < tries; ++i) {  // interleaved, so that a busy moment hits all alike
    h1.push_back(hurray_rate(pool, false, true, seconds));
    h64.push_back(hurray_rate(pool, true, true, seconds));
    n1.push_back(hurray_rate(pool, false, false, seconds));
    n64.push_back(hurray_rate(pool, true, false, seconds));
    r1.push_back(raw_rate(pool, 1, seconds));
    r64.push_back(raw_rate(pool, kBatch, seconds));
    py.push_back(python_rate(seconds));
  }
  const double a = median(h1), b = median(h64), c = median(r1), d = median(r64);
  const double a0 = median(n1), b0 = median(n64);
  if (a <= 0 || b <= 0 || c <= 0 || d <= 0 || a0 <= 0 || b0 <= 0) {
    std::fprintf(stderr, "a variant failed\n");
    return 1;
  }
  std::printf("4 KiB handoffs per second, median of %d tries of %.2f s each\n\n", tries, seconds);
  std::printf("| variant | handoffs/s | us/handoff | vs libhurray one at a time |\n");
  std::printf("|---|---|---|---|\n");
  const auto row = [a](const char *what, double r) {
    std::printf("| %s | %.0f | %.2f | %.2fx |\n", what, r, 1e6 / r, r / a);
  };
  row("libhurray, one at a time (send, receive, release), slots", a);
  row("libhurray, batches of 64 (send_many, receive, release_many), slots", b);
  row("libhurray, one at a time, no slots (a descriptor per handoff)", a0);
  row("libhurray, batches of 64, no slots (a descriptor per handoff)", b0);
  row("plain SCM_RIGHTS, one memfd per message, mmap + munmap + ack", c);
  row("plain SCM_RIGHTS, 64 memfds per message, one ack (floor)", d);
  const double e = median(py);
  if (e > 0)
    row("Python multiprocessing send_handle, one memfd at a time, mapped", e);
  else
    std::printf("| Python multiprocessing send_handle | not run (no python3) | - | - |\n");
  std::printf("\nbatched/one at a time, both with slots: %.1fx; batched with slots/one at a "
              "time without: %.1fx; both without slots: %.1fx; batched/plain SCM_RIGHTS one by "
              "one: %.1fx\n",
              b / a, b / a0, b0 / a0, b / c);
  return 0;
}
