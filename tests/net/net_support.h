// What the tests of libhurray-net share (net_*test.cpp, guard_test.cpp): a
// server polled by the test's thread, clients on a second thread, child
// processes (the example client, the raw peer), buffers with a pattern.
#pragma once

#include <catch2/catch.hpp>

#include <hurray_backend.h>
#include <hurray_net.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace nettest {

inline unsigned char pattern(uint64_t i, uint64_t seed) {
  return static_cast<unsigned char>((i * 131 + seed) % 251);
}

struct Server {
  hurray_context *ctx = nullptr;
  hurray_net_server *s = nullptr;
  std::vector<hurray_net_received> landed;
  hurray_error err{};

  explicit Server(std::vector<uint8_t> devices = {},
                  uint32_t transport = HURRAY_TRANSPORT_CROSS_MACHINE,
                  hurray_net_alloc_fn alloc = nullptr, void *alloc_user = nullptr,
                  const std::function<void(hurray_net_server_config &)> &tweak = {}) {
    REQUIRE(hurray_context_create(&ctx, nullptr) == HURRAY_OK);
    REQUIRE(hurray_context_set_guard(ctx, 1, nullptr) == HURRAY_OK);
    hurray_net_server_config cfg = HURRAY_NET_SERVER_CONFIG_INIT;
    cfg.address = "127.0.0.1";
    cfg.transport = transport;
    cfg.context = ctx;
    cfg.alloc = alloc;
    cfg.alloc_user = alloc_user;
    cfg.devices = devices.empty() ? nullptr : devices.data();
    cfg.n_devices = static_cast<uint32_t>(devices.size());
    if (tweak) tweak(cfg);
    const hurray_status st = hurray_net_server_create(&cfg, &s, &err);
    INFO(err.message);
    REQUIRE(st == HURRAY_OK);
    REQUIRE(hurray_net_server_port(s) != 0);
  }
  ~Server() {
    for (auto &r : landed) hurray_buffer_unref(r.buffer);
    hurray_net_server_destroy(s);
    hurray_context_destroy(ctx);
  }
  uint16_t port() const { return hurray_net_server_port(s); }
  hurray_net_stats stats() const {
    hurray_net_stats st;
    hurray_net_server_stats(s, &st);
    return st;
  }
  // One poll; true when a PUT landed.
  bool poll(int ms) {
    hurray_net_received got;
    got.size = sizeof got;
    if (hurray_net_server_poll(s, ms, &got, &err) != HURRAY_OK) FAIL("poll: " << err.message);
    if (got.buffer != nullptr) landed.push_back(got);
    return got.buffer != nullptr;
  }
  // Close a client while this thread keeps the server answering.
  void drop(hurray_net_client *c);
  // drop(c), then finish().
  uint64_t close(hurray_net_client *c) {
    drop(c);
    return finish();
  }
  // Destroy now and report the guard's findings (handoffs never released).
  uint64_t finish() {
    for (auto &r : landed) hurray_buffer_unref(r.buffer);
    landed.clear();
    hurray_net_server_destroy(s);
    s = nullptr;
    return hurray_context_guard_count(ctx);
  }
};

// Run fn (the client's side) on a thread while this thread polls the server.
template <class F>
inline void with_client(Server &srv, F fn) {
  std::atomic<bool> done{false};
  std::thread t([&] {
    fn();
    done = true;
  });
  while (!done) srv.poll(5);
  t.join();
  while (srv.poll(0)) {  // every PUT that landed (several, with PUTs in flight)
  }
}

inline void Server::drop(hurray_net_client *c) {
  with_client(*this, [&] { hurray_net_client_destroy(c); });
}

inline hurray_net_client *connect(uint16_t port, hurray_error *err,
                           uint32_t transport = HURRAY_TRANSPORT_CROSS_MACHINE,
                           int32_t timeout_ms = 30000) {
  hurray_net_client_config cfg = HURRAY_NET_CLIENT_CONFIG_INIT;
  cfg.address = "127.0.0.1";
  cfg.port = port;
  cfg.transport = transport;
  cfg.timeout_ms = timeout_ms;
  hurray_net_client *c = nullptr;
  return hurray_net_client_connect(&cfg, &c, err) == HURRAY_OK ? c : nullptr;
}

inline hurray_buffer *cpu_buffer(uint64_t n, uint64_t seed, uint32_t alignment = 4096) {
  hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
  a.byte_size = n;
  a.alignment = alignment;
  hurray_buffer *b = nullptr;
  REQUIRE(hurray_buffer_alloc(nullptr, &a, &b, nullptr) == HURRAY_OK);
  auto *p = static_cast<unsigned char *>(hurray_buffer_data(b));
  for (uint64_t i = 0; i < n; ++i) p[i] = pattern(i, seed);
  return b;
}

inline bool same_bytes(const hurray_buffer *b, uint64_t n, uint64_t seed) {
  std::vector<unsigned char> host(n);
  if (n > 0 && hurray_buffer_copy_to_host(b, 0, host.data(), n, nullptr) != HURRAY_OK) return false;
  for (uint64_t i = 0; i < n; ++i)
    if (host[i] != pattern(i, seed)) return false;
  return true;
}

// Can this machine allocate (tag, memory_class)?
inline bool local_has(uint8_t tag, uint8_t mc) {
  int32_t n = 0;
  if (hurray_device_count(nullptr, tag, &n, nullptr) != HURRAY_OK || n <= 0) return false;
  hurray_backend_device_info info;
  if (hurray_device_info(nullptr, tag, 0, &info, nullptr) != HURRAY_OK) return false;
  return (info.memory_classes & (1u << mc)) != 0;
}

inline hurray_net_transfer_desc to(uint8_t tag, uint8_t mc = HURRAY_MEMORY_STANDARD, uint64_t id = 0) {
  hurray_net_transfer_desc d = HURRAY_NET_TRANSFER_DESC_INIT;
  d.buffer_id = id;
  d.device_tag = tag;
  d.memory_class = mc;
  return d;
}

// ------------------------------------------------------------ processes --
// The local addresses ("0100007F:1F90", as /proc/net/tcp writes them: hex
// address, then hex port) of the TCP sockets of process `pid` that listen.
inline std::vector<std::string> listening_sockets(const std::string &pid = "self") {
  std::set<std::string> inodes;
  if (DIR *d = opendir(("/proc/" + pid + "/fd").c_str())) {
    while (dirent *e = readdir(d)) {
      char link[256] = {};
      const std::string path = "/proc/" + pid + "/fd/" + e->d_name;
      const ssize_t n = readlink(path.c_str(), link, sizeof link - 1);
      if (n > 9 && std::strncmp(link, "socket:[", 8) == 0)
        inodes.insert(std::string(link + 8, static_cast<size_t>(n) - 9));
    }
    closedir(d);
  }
  std::vector<std::string> out;
  for (const char *table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream f(table);
    std::string line;
    std::getline(f, line);
    while (std::getline(f, line)) {
      std::istringstream in(line);
      std::string slot, local, remote, state, queues, timer, retr, uid, timeout, inode;
      in >> slot >> local >> remote >> state >> queues >> timer >> retr >> uid >> timeout >> inode;
      if (state == "0A" && inodes.count(inode) != 0) out.push_back(local);
    }
  }
  return out;
}

struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::string output;
  int status = -1;

  // as_limit: the child's RLIMIT_AS, set before it starts (0: inherited).
  explicit Child(const std::vector<std::string> &args, uint64_t as_limit = 0) {
    int p[2];
    REQUIRE(pipe(p) == 0);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      if (as_limit != 0) {
        const rlimit lim{as_limit, as_limit};
        if (setrlimit(RLIMIT_AS, &lim) != 0) _exit(126);
      }
      dup2(p[1], 1);
      dup2(p[1], 2);
      close(p[0]);
      close(p[1]);
      std::vector<char *> argv;
      for (const auto &a : args) argv.push_back(const_cast<char *>(a.c_str()));
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(p[1]);
    fd = p[0];
    fcntl(fd, F_SETFL, O_NONBLOCK);
  }
  ~Child() {
    if (pid > 0 && status < 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    if (fd >= 0) close(fd);
  }
  void drain() {
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) output.append(buf, static_cast<size_t>(n));
  }
  bool exited() {
    drain();
    if (status >= 0) return true;
    int st = 0;
    if (waitpid(pid, &st, WNOHANG) == pid) {
      status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      drain();
      return true;
    }
    return false;
  }
  void signal(int sig) { kill(pid, sig); }
};

// The port an example server child prints that it listens on.
inline uint16_t listening_port(Child &server) {
  std::string port;
  const auto limit = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (port.empty()) {
    REQUIRE(!server.exited());
    const auto at = server.output.find("listening on port ");
    const auto eol = at == std::string::npos ? at : server.output.find('\n', at);
    if (eol != std::string::npos) port = server.output.substr(at + 18, eol - at - 18);
    if (std::chrono::steady_clock::now() > limit) FAIL("the server did not start: " << server.output);
    usleep(10000);
  }
  return static_cast<uint16_t>(std::stoi(port));
}

// A client connected to the example server, which is then stopped
// (SIGSTOP): it reads nothing more until it is killed.
inline hurray_net_client *connect_then_stop(Child &server) {
  hurray_error err;
  hurray_net_client *c = connect(listening_port(server), &err);
  INFO(err.message);
  REQUIRE(c != nullptr);
  server.signal(SIGSTOP);
  return c;
}

// Serve until the child exits; its exit status.
inline int serve_until_exit(Server &srv, Child &c) {
  const auto limit = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  while (!c.exited()) {
    srv.poll(5);
    if (std::chrono::steady_clock::now() > limit) FAIL("child hangs: " << c.output);
  }
  while (srv.poll(0)) {  // every PUT that landed
  }
  return c.status;
}

inline std::string port_arg(const Server &srv) { return std::to_string(srv.port()); }

// Serve until cond(stats) holds (a guard of 2 minutes against a hang).
template <class Cond>
inline void serve_until(Server &srv, Cond cond, const char *what) {
  const auto limit = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  while (!cond(srv.stats())) {
    srv.poll(1);
    if (std::chrono::steady_clock::now() > limit) FAIL("never happened: " << what);
  }
}

// A well-behaved client process PUTs 64 KiB and is served.
inline void good_client_is_served(Server &srv) {
  const uint64_t before = srv.stats().puts_landed;
  Child ok({HURRAY_NET_EXAMPLE_CLIENT, "127.0.0.1", port_arg(srv), "--size", "65536", "--id", "42"});
  const int rc = serve_until_exit(srv, ok);
  INFO(ok.output);
  CHECK(rc == 0);
  CHECK(ok.output.find("landed") != std::string::npos);
  CHECK(srv.stats().puts_landed == before + 1);
  REQUIRE(!srv.landed.empty());
  CHECK(srv.landed.back().buffer_id == 42);
}

// Release callbacks that only mark the handoff released.
inline void noop_release(hurray_handoff *h) { h->release = nullptr; }
inline void noop_release_event(hurray_handoff *h) { h->release_event = nullptr; }

// A source whose memory is the test's: `freed` tells when the last reference
// (the caller's and every export the client holds) is gone.
struct Tracked {
  std::vector<unsigned char> bytes;
  hurray_buffer *buffer = nullptr;
  bool freed = false;
  explicit Tracked(uint64_t n, uint64_t seed) : bytes(n + 4096) {
    auto *p = aligned();
    for (uint64_t i = 0; i < n; ++i) p[i] = pattern(i, seed);
    hurray_buffer_desc b = HURRAY_BUFFER_DESC_INIT;
    b.handle = {n, 4096, HURRAY_DEVICE_CPU, HURRAY_SYNC_PRODUCER_SYNCED, HURRAY_MEMORY_STANDARD, 0};
    b.data = p;
    b.free_fn = [](void *user, void *) { static_cast<Tracked *>(user)->freed = true; };
    b.free_user = this;
    REQUIRE(hurray_buffer_wrap(nullptr, &b, &buffer, nullptr) == HURRAY_OK);
  }
  unsigned char *aligned() {
    const auto at = reinterpret_cast<uintptr_t>(bytes.data());
    return bytes.data() + ((4096 - at % 4096) % 4096);
  }
};
}  // namespace nettest
