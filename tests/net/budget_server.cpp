// A server for the tests of the byte budgets (budget_test.cpp), run as a
// child under an address-space limit the test sets before it starts:
//   hurray_net_budget_server [MAX_PUT CONN TOTAL]
// listens on 127.0.0.1 (any port) with those byte budgets (default: every
// limit at its default), prints "limits max_put=M conn=C total=T stall=S",
// then "listening on port P", then one line per PUT landed ("landed N
// bytes", the buffer dropped at once) or per poll error, for 60 s at most.
#include <hurray_net.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

int main(int argc, char **argv) {
  hurray_net_limits lim = HURRAY_NET_LIMITS_INIT;
  if (argc == 4) {
    lim.max_put_bytes = std::strtoull(argv[1], nullptr, 10);
    lim.conn_bytes_in_flight = std::strtoull(argv[2], nullptr, 10);
    lim.total_bytes_in_flight = std::strtoull(argv[3], nullptr, 10);
  } else if (argc != 1) {
    std::fprintf(stderr, "usage: %s [MAX_PUT CONN TOTAL]\n", argv[0]);
    return 2;
  }
  hurray_net_server_config cfg = HURRAY_NET_SERVER_CONFIG_INIT;
  cfg.limits = &lim;
  const uint8_t cpu = HURRAY_DEVICE_CPU;
  cfg.devices = &cpu;
  cfg.n_devices = 1;
  hurray_net_server *s = nullptr;
  hurray_error err;
  if (hurray_net_server_create(&cfg, &s, &err) != HURRAY_OK) {
    std::printf("create: %s\n", err.message);
    return 1;
  }
  hurray_net_limits got = HURRAY_NET_LIMITS_INIT;
  if (hurray_net_server_limits(s, &got, &err) != HURRAY_OK) {
    std::printf("limits: %s\n", err.message);
    return 1;
  }
  std::printf("limits max_put=%llu conn=%llu total=%llu stall=%d\n",
              static_cast<unsigned long long>(got.max_put_bytes),
              static_cast<unsigned long long>(got.conn_bytes_in_flight),
              static_cast<unsigned long long>(got.total_bytes_in_flight), got.stall_timeout_ms);
  std::printf("listening on port %u\n", static_cast<unsigned>(hurray_net_server_port(s)));
  std::fflush(stdout);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < end) {
    hurray_net_received r;
    r.size = sizeof r;
    if (hurray_net_server_poll(s, 100, &r, &err) != HURRAY_OK) {
      std::printf("poll: %s\n", err.message);
      std::fflush(stdout);
      continue;
    }
    if (r.buffer == nullptr) continue;
    std::printf("landed %llu bytes\n", static_cast<unsigned long long>(r.handle.byte_size));
    std::fflush(stdout);
    hurray_buffer_unref(r.buffer);
  }
  hurray_net_server_destroy(s);
  return 0;
}
