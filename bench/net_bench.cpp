// PUT throughput of libhurray-net, for bench/run.py to set beside UCX's own
// ucx_perftest over the same transport (UCX_TLS, default tcp; UCX_NET_DEVICES,
// default lo) in the same run.
//
//   hurray_net_bench [--sizes 1M,4M,...] [--min-bytes N] [--min-iters N]
//                    [--window W] [--window-bytes N] [--pool 0|1]
//                    [--client-cpu N] [--server-cpu N]
//
// Forks a server process (hurray_net_server_poll, dropping each buffer that
// lands) and PUTs CPU buffers to it from this process over 127.0.0.1.
// Each PUT is complete when the server has answered: the bytes landed in
// memory the server owns.
//  --window 1 (default): one PUT at a time, hurray_net_client_put_buffer.
//  --window W > 1: up to W PUTs in flight (hurray_net_client_put_buffer_start,
//    hurray_net_client_put_wait on the oldest), and at most --window-bytes
//    (default 1G) in flight, but always at least 2 PUTs.
//  --pool 1 (default): the server gives PUTs memory from a receive pool it
//    owns and recycles (hurray_net_server_config.alloc: blocks wrapped with
//    hurray_buffer_wrap, returned to the pool when the landed buffer is
//    unreffed); --pool 0: each PUT lands in a buffer the server allocates
//    with hurray_buffer_alloc.
//  --client-cpu / --server-cpu: pin this process / the server process to one
//    CPU (sched_setaffinity), as bench/run.py pins ucx_perftest's two
//    processes with taskset. Unpinned on a 2-CPU machine, the scheduler now
//    and then runs both on one CPU and the throughput of that run drops by
//    up to 3x, for libhurray and ucx_perftest alike.
// Per size: one warm-up round (one window of PUTs, which also fills the
// pool), then at least --min-iters PUTs and --min-bytes bytes, timed.
// Prints one line per size:
//   net_put size=BYTES iters=N window=W pool=P seconds=S MBps=M
// and on stderr, when the server stops, its page faults and CPU time.
#include <hurray_net.h>

#include "net_pair.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <string>
#include <vector>

namespace {

volatile sig_atomic_t stop = 0;
void on_term(int) { stop = 1; }


// The server application's receive pool: page-aligned host blocks it owns,
// handed to PUTs as wrapped buffers and taken back when the buffer that
// landed is unreffed. Blocks are kept by size; none is ever shared by two
// live buffers (BP-NET-OWN: each landed buffer is the server's own).
struct Pool {
  std::map<void *, uint64_t> size_of;          // every block the pool owns
  std::map<uint64_t, std::vector<void *>> idle;  // free blocks by size, the
                                                 // last returned first (warm)
  ~Pool() {
    for (auto &[p, n] : size_of) std::free(p);
  }
};

void pool_return(void *user, void *data) {
  auto *pool = static_cast<Pool *>(user);
  pool->idle[pool->size_of[data]].push_back(data);
}

hurray_status pool_alloc(void *user, uint64_t, const hurray_alloc_desc *desc, hurray_buffer **out,
                         hurray_error *err) {
  auto *pool = static_cast<Pool *>(user);
  if (desc->device_tag != HURRAY_DEVICE_CPU || desc->byte_size < (256u << 10) ||
      desc->alignment > 4096)
    return hurray_buffer_alloc(nullptr, desc, out, err);  // not what the pool keeps
  void *p = nullptr;
  std::vector<void *> &free_blocks = pool->idle[desc->byte_size];
  if (!free_blocks.empty()) {
    p = free_blocks.back();
    free_blocks.pop_back();
  } else {
    const size_t n = (desc->byte_size + 4095) & ~uint64_t{4095};
    p = std::aligned_alloc(4096, n);
    if (p == nullptr) return hurray_buffer_alloc(nullptr, desc, out, err);
    (void)madvise(p, n, MADV_HUGEPAGE);  // a hint: fewer page faults on first use
    pool->size_of[p] = desc->byte_size;
  }
  hurray_buffer_desc b = HURRAY_BUFFER_DESC_INIT;
  b.handle.byte_size = desc->byte_size;
  b.handle.alignment = 4096;
  b.handle.device_tag = HURRAY_DEVICE_CPU;
  b.handle.sync_mode = HURRAY_SYNC_PRODUCER_SYNCED;
  b.handle.memory_class = HURRAY_MEMORY_STANDARD;
  b.data = p;
  b.free_fn = pool_return;
  b.free_user = pool;
  const hurray_status st = hurray_buffer_wrap(nullptr, &b, out, err);
  if (st != HURRAY_OK) free_blocks.push_back(p);
  return st;
}

int serve(int port_fd, bool use_pool) {
  signal(SIGTERM, on_term);
  Pool pool;
  hurray_net_server_config cfg = HURRAY_NET_SERVER_CONFIG_INIT;
  cfg.address = "127.0.0.1";
  if (use_pool) {
    cfg.alloc = pool_alloc;
    cfg.alloc_user = &pool;
  }
  hurray_net_server *srv = nullptr;
  hurray_error err;
  if (hurray_net_server_create(&cfg, &srv, &err) != HURRAY_OK) {
    std::fprintf(stderr, "net_bench server: %s\n", err.message);
    return 1;
  }
  const uint16_t port = hurray_net_server_port(srv);
  if (write(port_fd, &port, sizeof port) != static_cast<ssize_t>(sizeof port)) return 1;
  close(port_fd);
  while (!stop) {
    hurray_net_received got;
    got.size = sizeof got;
    if (hurray_net_server_poll(srv, 100, &got, &err) != HURRAY_OK) break;
    hurray_buffer_unref(got.buffer);
  }
  hurray_net_server_destroy(srv);
  // Where the server's time went (page faults, kernel time), for the curious.
  rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) == 0)
    std::fprintf(stderr, "net_server minflt=%ld majflt=%ld user=%ld.%06lds sys=%ld.%06lds\n",
                 ru.ru_minflt, ru.ru_majflt, static_cast<long>(ru.ru_utime.tv_sec),
                 static_cast<long>(ru.ru_utime.tv_usec), static_cast<long>(ru.ru_stime.tv_sec),
                 static_cast<long>(ru.ru_stime.tv_usec));
  return 0;
}

}  // namespace


int main(int argc, char **argv) {
  std::vector<uint64_t> sizes;
  int client_cpu = -1, server_cpu = -1;
  uint64_t min_bytes = 1ull << 30, window_bytes = 1ull << 30;
  int min_iters = 3, window = 1;
  bool use_pool = true;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--sizes") {
      std::string list = argv[i + 1];
      size_t at = 0;
      while (at <= list.size()) {
        const size_t comma = list.find(',', at);
        sizes.push_back(bench::parse_size(list.substr(at, comma - at)));
        if (comma == std::string::npos) break;
        at = comma + 1;
      }
    } else if (a == "--min-bytes") {
      min_bytes = bench::parse_size(argv[i + 1]);
    } else if (a == "--min-iters") {
      min_iters = std::atoi(argv[i + 1]);
    } else if (a == "--window") {
      window = std::max(1, std::atoi(argv[i + 1]));
    } else if (a == "--window-bytes") {
      window_bytes = bench::parse_size(argv[i + 1]);
    } else if (a == "--pool") {
      use_pool = std::atoi(argv[i + 1]) != 0;
    } else if (a == "--client-cpu") {
      client_cpu = std::atoi(argv[i + 1]);
    } else if (a == "--server-cpu") {
      server_cpu = std::atoi(argv[i + 1]);
    }
  }
  if (sizes.empty())
    for (uint64_t s = 1u << 20; s <= (1ull << 30); s <<= 2) sizes.push_back(s);
  setenv("UCX_TLS", "tcp", 0);
  // One TCP device, as two hosts with a NIC each would have. Left to itself
  // UCX also reaches 127.0.0.1's peer through this host's other addresses and
  // splits each rendezvous over two connections that take the same kernel
  // path (docs/performance.md measures what that does).
  setenv("UCX_NET_DEVICES", "lo", 0);

  uint16_t port = 0;
  const pid_t child = bench::fork_server(
      server_cpu, client_cpu, [use_pool](int fd) { return serve(fd, use_pool); }, &port);
  if (child < 0) return 1;
  if (port == 0) {
    std::fprintf(stderr, "net_bench: the server did not start\n");
    return 1;
  }

  int status = 0;
  hurray_net_client_config cfg = HURRAY_NET_CLIENT_CONFIG_INIT;
  cfg.address = "127.0.0.1";
  cfg.port = port;
  cfg.timeout_ms = -1;
  hurray_net_client *cli = nullptr;
  hurray_error err;
  if (hurray_net_client_connect(&cfg, &cli, &err) != HURRAY_OK) {
    std::fprintf(stderr, "net_bench: %s\n", err.message);
    status = 1;
  }
  for (size_t k = 0; status == 0 && k < sizes.size(); ++k) {
    const uint64_t n = sizes[k];
    hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
    a.byte_size = n;
    a.alignment = 4096;
    hurray_buffer *src = nullptr;
    if (hurray_buffer_alloc(nullptr, &a, &src, &err) != HURRAY_OK) {
      std::fprintf(stderr, "net_bench: %s\n", err.message);
      status = 1;
      break;
    }
    std::memset(hurray_buffer_data(src), 0x5a, n);
    hurray_net_transfer_desc d = HURRAY_NET_TRANSFER_DESC_INIT;
    int iters = static_cast<int>(min_bytes / n);
    if (iters < min_iters) iters = min_iters;
    // PUTs in flight: `window`, and no more than window_bytes of them (but 2
    // at least, so that a window always overlaps one PUT's answer with the
    // next one's bytes).
    int w = window;
    if (w > 1 && static_cast<uint64_t>(w) * n > window_bytes)
      w = std::max<int>(2, static_cast<int>(window_bytes / n));
    // `count` PUTs, keeping up to w in flight; false on an error (printed).
    std::deque<uint64_t> flight;
    auto run = [&](int count) {
      for (int i = 0; i < count || !flight.empty();) {
        if (w == 1) {
          d.buffer_id = static_cast<uint64_t>(i++);
          if (hurray_net_client_put_buffer(cli, src, &d, &err) != HURRAY_OK) break;
          continue;
        }
        if (i < count && static_cast<int>(flight.size()) < w) {
          d.buffer_id = static_cast<uint64_t>(i++);
          uint64_t t = 0;
          if (hurray_net_client_put_buffer_start(cli, src, &d, &t, &err) != HURRAY_OK) break;
          flight.push_back(t);
          continue;
        }
        const uint64_t t = flight.front();
        flight.pop_front();
        if (hurray_net_client_put_wait(cli, t, &err) != HURRAY_OK) break;
      }
      if (flight.empty() && err.status == HURRAY_OK) return true;
      std::fprintf(stderr, "net_bench: %s\n", err.message);
      return false;
    };
    std::memset(&err, 0, sizeof err);
    if (!run(w)) status = 1;  // warm-up: one window (fills the server's pool)
    const auto t0 = std::chrono::steady_clock::now();
    if (status == 0 && !run(iters)) status = 1;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (status == 0)
      std::printf("net_put size=%llu iters=%d window=%d pool=%d seconds=%.6f MBps=%.1f\n",
                  static_cast<unsigned long long>(n), iters, w, use_pool ? 1 : 0, s,
                  static_cast<double>(n) * iters / s / 1e6);
    std::fflush(stdout);
    hurray_buffer_unref(src);
  }
  hurray_net_client_destroy(cli);
  kill(child, SIGTERM);
  int st = 0;
  waitpid(child, &st, 0);
  return status;
}
