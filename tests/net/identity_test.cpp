// The identities of the server's devices in its HELLO answer (docs/spec/network.md
// section 2, docs/spec/identity.md), between two real processes whose device orders
// differ: the example server with the stand-in plugin (tests/ipc/fake_gpu_plugin.c,
// tag CUDA) in the order "BA", this process (the client) in the order "AB". The
// client reads the server's identities, finds the server's device of its own device
// 0's identity (the server's 1) and PUTs there. Plus the extension's parser: what a
// server from before it sends, and malformed extensions.
#include <catch2/catch.hpp>

#include <hurray.h>
#include <hurray_backend.h>
#include <hurray_net.h>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../common/ipcfake_env.h"
#include "../common/ipcfake_identity.h"
#include "wire.h"

#ifndef HURRAY_NET_EXAMPLE_SERVER
#error "HURRAY_NET_EXAMPLE_SERVER (path of the example server) is not defined"
#endif

namespace {

// The example server in its own process, HURRAY_IPCFAKE_IDENTITY=`order`.
struct Server {
  pid_t pid = -1;
  int out = -1;
  std::string text;  // what it printed so far
  explicit Server(const char *order) {
    int pfd[2];
    REQUIRE(pipe(pfd) == 0);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      dup2(pfd[1], 1);
      close(pfd[0]);
      setenv("HURRAY_IPCFAKE_IDENTITY", order, 1);
      execl(HURRAY_NET_EXAMPLE_SERVER, HURRAY_NET_EXAMPLE_SERVER, "--port", "0", "--devices",
            "cpu,cuda", "--count", "1", static_cast<char *>(nullptr));
      _exit(127);
    }
    close(pfd[1]);
    out = pfd[0];
  }
  // Read its output until it holds `what` (30 s at most).
  bool wait_for(const char *what) {
    pollfd p{out, POLLIN, 0};
    char buf[512];
    for (int i = 0; i < 300 && text.find(what) == std::string::npos; ++i) {
      if (poll(&p, 1, 100) != 1) continue;
      const ssize_t r = read(out, buf, sizeof buf);
      if (r <= 0) break;
      text.append(buf, static_cast<size_t>(r));
    }
    return text.find(what) != std::string::npos;
  }
  ~Server() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    if (out >= 0) close(out);
  }
};

hurray_backend_device_identity uuid_of(char letter) { return hurray_test::ipcfake_uuid(letter); }

bool same(const hurray_backend_device_identity &a, const hurray_backend_device_identity &b) {
  return a.kind == b.kind && std::memcmp(a.bytes, b.bytes, sizeof a.bytes) == 0;
}

}  // namespace

TEST_CASE("a client reads the identities of the server's devices and PUTs on the server's "
          "device of an identity, the two processes' orders differing (stand-in plugin)",
          "[net][identity]") {
  REQUIRE(hurray_test::g_ipcfake_env);
  setenv("HURRAY_IPCFAKE_IDENTITY", "AB", 1);  // this process: 0 = A, 1 = B
  Server server("BA");                          // the server's: 0 = B, 1 = A
  REQUIRE(server.wait_for("listening on port "));
  const size_t at = server.text.find("listening on port ") + 18;
  const auto port = static_cast<uint16_t>(std::atoi(server.text.c_str() + at));
  REQUIRE(port != 0);

  hurray_net_client_config cc = HURRAY_NET_CLIENT_CONFIG_INIT;
  cc.address = "127.0.0.1";
  cc.port = port;
  cc.timeout_ms = 30000;
  hurray_net_client *c = nullptr;
  hurray_error err{};
  {
    const hurray_status st = hurray_net_client_connect(&cc, &c, &err);
    INFO(err.message);
    REQUIRE(st == HURRAY_OK);
  }
  hurray_backend_device_identity id{};
  REQUIRE(hurray_net_client_peer_device_identity(c, HURRAY_DEVICE_CUDA, 0, &id, &err) ==
          HURRAY_OK);
  CHECK(same(id, uuid_of('B')));
  REQUIRE(hurray_net_client_peer_device_identity(c, HURRAY_DEVICE_CUDA, 1, &id, &err) ==
          HURRAY_OK);
  CHECK(same(id, uuid_of('A')));
  REQUIRE(hurray_net_client_peer_device_identity(c, HURRAY_DEVICE_CPU, 0, &id, &err) ==
          HURRAY_OK);
  CHECK(id.kind == HURRAY_BACKEND_ID_NONE);  // the CPU has none
  CHECK(hurray_net_client_peer_device_identity(c, HURRAY_DEVICE_CUDA, 2, &id, &err) ==
        HURRAY_E_DEVICE_UNAVAILABLE);

  // this process's device 0 is the server's device 1
  hurray_backend_device_identity mine{};
  REQUIRE(hurray_device_identity(nullptr, HURRAY_DEVICE_CUDA, 0, &mine, nullptr) == HURRAY_OK);
  REQUIRE(same(mine, uuid_of('A')));
  int32_t there = -1;
  REQUIRE(hurray_net_client_peer_device_find(c, HURRAY_DEVICE_CUDA, &mine, &there, &err) ==
          HURRAY_OK);
  CHECK(there == 1);
  const hurray_backend_device_identity other = uuid_of('C');
  CHECK(hurray_net_client_peer_device_find(c, HURRAY_DEVICE_CUDA, &other, &there, &err) ==
        HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(there == -1);
  CHECK(std::string(err.message).rfind("BP-DEV-ID:", 0) == 0);
  const hurray_backend_device_identity none{};
  CHECK(hurray_net_client_peer_device_find(c, HURRAY_DEVICE_CUDA, &none, &there, &err) ==
        HURRAY_E_INVALID_ARGUMENT);

  // a PUT to the server's device of that identity lands there
  REQUIRE(hurray_net_client_peer_device_find(c, HURRAY_DEVICE_CUDA, &mine, &there, &err) ==
          HURRAY_OK);
  hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
  a.byte_size = 8192;
  a.alignment = 4096;
  hurray_buffer *src = nullptr;
  REQUIRE(hurray_buffer_alloc(nullptr, &a, &src, nullptr) == HURRAY_OK);
  std::memset(hurray_buffer_data(src), 3, 8192);
  hurray_net_transfer_desc d = HURRAY_NET_TRANSFER_DESC_INIT;
  d.buffer_id = 7;
  d.device_tag = HURRAY_DEVICE_CUDA;
  d.device_ordinal = there;
  {
    const hurray_status st = hurray_net_client_put_buffer(c, src, &d, &err);
    INFO(err.message);
    CHECK(st == HURRAY_OK);
  }
  hurray_buffer_unref(src);
  hurray_net_client_destroy(c);
  CHECK(server.wait_for("landed id 7: 8192 bytes on CUDA/STANDARD device 1"));
  unsetenv("HURRAY_IPCFAKE_IDENTITY");
}

namespace {

namespace net = hurray::net;

// A HELLO_REP of CPU (1 device) and CUDA (2 devices), with `ext` after them.
std::vector<unsigned char> hello_rep(const std::vector<unsigned char> &ext) {
  const net::HelloDevice d[2] = {{HURRAY_DEVICE_CPU, 1, 1}, {HURRAY_DEVICE_CUDA, 2, 1}};
  const size_t n = net::hello_rep_size(2);
  std::vector<unsigned char> b(n + ext.size());
  net::encode_hello_rep(1, HURRAY_TRANSPORT_CROSS_MACHINE, d, 2, b.data());
  for (size_t i = 0; i < ext.size(); ++i) b[n + i] = ext[i];
  return b;
}

std::vector<unsigned char> ext_of(std::vector<net::HelloId> ids) {
  std::vector<unsigned char> e(net::hello_ids_size(static_cast<uint32_t>(ids.size())));
  net::encode_hello_ids(ids.data(), static_cast<uint32_t>(ids.size()), e.data());
  return e;
}

// parse_hello_ids of a HELLO_REP with `ext`: -1 refused, else the count.
long ids_of(const std::vector<unsigned char> &ext) {
  const std::vector<unsigned char> b = hello_rep(ext);
  uint32_t t = 0, n = 0, m = 0;
  REQUIRE(net::parse_hello_rep(b.data(), b.size(), &t, &n));
  REQUIRE(n == 2);
  return net::parse_hello_ids(b.data(), b.size(), n, &m) ? static_cast<long>(m) : -1;
}

}  // namespace

TEST_CASE("the HELLO_REP's identity extension: absent from an older server, malformed ones "
          "refused",
          "[net][identity]") {
  net::HelloId a{HURRAY_DEVICE_CUDA, 0, HURRAY_BACKEND_ID_UUID, {}};
  std::memset(a.bytes, 0x41, sizeof a.bytes);
  net::HelloId b = a;
  b.ordinal = 1;
  b.kind = HURRAY_BACKEND_ID_NONE;
  std::memset(b.bytes, 0, sizeof b.bytes);
  CHECK(ids_of({}) == 0);  // a server from before identities: the ordinals alone
  CHECK(ids_of(ext_of({})) == 0);
  CHECK(ids_of(ext_of({a, b})) == 2);
  {  // round trip
    const std::vector<unsigned char> r = hello_rep(ext_of({a, b}));
    const net::HelloId back = net::hello_id(r.data(), 2, 0);
    CHECK(back.tag == a.tag);
    CHECK(back.ordinal == 0);
    CHECK(back.kind == a.kind);
    CHECK(std::memcmp(back.bytes, a.bytes, 16) == 0);
  }
  std::vector<unsigned char> e = ext_of({a});
  e.push_back(0);  // one byte more than the extension
  CHECK(ids_of(e) == -1);
  e = ext_of({a});
  e[0] ^= 1;  // not the marker
  CHECK(ids_of(e) == -1);
  CHECK(ids_of({1, 2, 3}) == -1);  // too short for one
  e = ext_of({a});
  e[4] = 2;  // says two entries, holds one
  CHECK(ids_of(e) == -1);
  net::HelloId bad = a;
  bad.ordinal = 2;  // the server offers CUDA 0 and 1
  CHECK(ids_of(ext_of({bad})) == -1);
  bad = a;
  bad.tag = HURRAY_DEVICE_VULKAN;  // not offered
  CHECK(ids_of(ext_of({bad})) == -1);
  bad.tag = HURRAY_DEVICE_CPU;  // has no identity
  CHECK(ids_of(ext_of({bad})) == -1);
  CHECK(ids_of(ext_of({a, a})) == -1);  // CUDA 0 twice
  bad = a;
  bad.kind = 9;  // an unknown kind
  CHECK(ids_of(ext_of({bad})) == -1);
  bad.kind = HURRAY_BACKEND_ID_LUID;  // 16 bytes for an 8-byte LUID
  CHECK(ids_of(ext_of({bad})) == -1);
  bad = b;
  bad.bytes[0] = 1;  // NONE with bytes
  CHECK(ids_of(ext_of({bad})) == -1);
  bad = a;
  std::memset(bad.bytes, 0, 16);  // a UUID of zeros
  CHECK(ids_of(ext_of({bad})) == -1);
  e = ext_of({a});
  e[net::kHelloIdsFixed + 1] = 1;  // the entry's reserved byte
  CHECK(ids_of(e) == -1);
}
