// PUT throughput of libhurray-net, for bench/run.py to set beside UCX's own
// ucx_perftest over the same transport (UCX_TLS, default tcp) in the same run.
//
//   hurray_net_bench [--sizes 1M,4M,...] [--min-bytes N] [--min-iters N]
//
// Forks a server process (hurray_net_server_poll, dropping each buffer that
// lands) and PUTs CPU buffers to it from this process over 127.0.0.1: per
// size one warm-up PUT, then at least --min-iters PUTs and --min-bytes bytes.
// Each PUT is complete when the server has answered: the bytes landed in
// memory the server allocated for them (hurray_buffer_alloc) and it owns.
// Prints one line per size:
//   net_put size=BYTES iters=N seconds=S MBps=M
#include <hurray_net.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

volatile sig_atomic_t stop = 0;
void on_term(int) { stop = 1; }

uint64_t parse_size(const std::string &s) {
  char *end = nullptr;
  uint64_t v = std::strtoull(s.c_str(), &end, 10);
  if (*end == 'K' || *end == 'k') v <<= 10;
  if (*end == 'M' || *end == 'm') v <<= 20;
  if (*end == 'G' || *end == 'g') v <<= 30;
  return v;
}

int serve(int port_fd) {
  signal(SIGTERM, on_term);
  hurray_net_server_config cfg = HURRAY_NET_SERVER_CONFIG_INIT;
  cfg.address = "127.0.0.1";
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
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  std::vector<uint64_t> sizes;
  uint64_t min_bytes = 1ull << 30;
  int min_iters = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--sizes") {
      std::string list = argv[i + 1];
      size_t at = 0;
      while (at <= list.size()) {
        const size_t comma = list.find(',', at);
        sizes.push_back(parse_size(list.substr(at, comma - at)));
        if (comma == std::string::npos) break;
        at = comma + 1;
      }
    } else if (a == "--min-bytes") {
      min_bytes = parse_size(argv[i + 1]);
    } else if (a == "--min-iters") {
      min_iters = std::atoi(argv[i + 1]);
    }
  }
  if (sizes.empty())
    for (uint64_t s = 1u << 20; s <= (1ull << 30); s <<= 2) sizes.push_back(s);
  setenv("UCX_TLS", "tcp", 0);

  int fds[2];
  if (pipe(fds) != 0) return 1;
  const pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    close(fds[0]);
    _exit(serve(fds[1]));
  }
  close(fds[1]);
  uint16_t port = 0;
  if (read(fds[0], &port, sizeof port) != static_cast<ssize_t>(sizeof port)) {
    std::fprintf(stderr, "net_bench: the server did not start\n");
    waitpid(child, nullptr, 0);
    return 1;
  }
  close(fds[0]);

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
    if (hurray_net_client_put_buffer(cli, src, &d, &err) != HURRAY_OK) {  // warm-up
      std::fprintf(stderr, "net_bench: %s\n", err.message);
      status = 1;
    }
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; status == 0 && i < iters; ++i) {
      d.buffer_id = static_cast<uint64_t>(i);
      if (hurray_net_client_put_buffer(cli, src, &d, &err) != HURRAY_OK) {
        std::fprintf(stderr, "net_bench: %s\n", err.message);
        status = 1;
      }
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (status == 0)
      std::printf("net_put size=%llu iters=%d seconds=%.6f MBps=%.1f\n",
                  static_cast<unsigned long long>(n), iters, s,
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
