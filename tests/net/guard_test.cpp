// What a server grants its peers and whom it admits (docs/spec/network.md
// section 4; src/net/guard.cpp): the default bind, the allow list, the
// limits with hostile peers in real processes (the raw peer), and the two
// checks of the receiver's rules the mutation runs asked for (BP-PUT-DEVICE
// on the application's allocator, BP-MC-PAIR of the destination).
#include "net_support.h"

#include <dirent.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "../common/open_fds.h"

using namespace nettest;

namespace {

using hurray_test::open_fds;

// This process's resident memory and open descriptors.
uint64_t rss_bytes() {
  std::ifstream f("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  f >> size >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

// Whether a socket of this machine listens on 127.0.0.1:port (/proc/net/tcp).
bool listens_on_loopback_only(uint16_t port) {
  std::ifstream f("/proc/net/tcp");
  std::string line;
  std::getline(f, line);  // the header
  char want[16];
  std::snprintf(want, sizeof want, ":%04X", static_cast<unsigned>(port));
  bool loopback = false, elsewhere = false;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string slot, local, remote, state;
    in >> slot >> local >> remote >> state;
    if (state != "0A" || local.size() < 6 || local.substr(local.size() - 5) != want) continue;
    (local.rfind("0100007F:", 0) == 0 ? loopback : elsewhere) = true;
  }
  std::ifstream f6("/proc/net/tcp6");  // an IPv6 socket on the port would be elsewhere
  std::getline(f6, line);
  while (std::getline(f6, line)) {
    std::istringstream in(line);
    std::string slot, local, remote, state;
    in >> slot >> local >> remote >> state;
    if (state == "0A" && local.size() >= 5 && local.substr(local.size() - 5) == want)
      elsewhere = true;
  }
  return loopback && !elsewhere;
}

// A client GETs id 1 (256 KiB of pattern 9) and finds its bytes.
void good_get(Server &srv) {
  hurray_net_client *c = nullptr;
  hurray_buffer *got = nullptr;
  with_client(srv, [&] {
    c = connect(srv.port(), nullptr);
    if (!c) return;
    hurray_net_transfer_desc d = to(HURRAY_DEVICE_CPU, HURRAY_MEMORY_STANDARD, 1);
    hurray_net_client_get(c, &d, &got, nullptr);
  });
  REQUIRE(got != nullptr);
  CHECK(same_bytes(got, 256 * 1024, 9));
  hurray_buffer_unref(got);
  srv.drop(c);
}

auto with_limits(hurray_net_limits *l) {
  return [l](hurray_net_server_config &cfg) { cfg.limits = l; };
}

// An allocator that counts its calls and allocates through the backend.
hurray_status counting_alloc(void *user, uint64_t, const hurray_alloc_desc *desc,
                             hurray_buffer **out, hurray_error *err) {
  ++*static_cast<int *>(user);
  return hurray_buffer_alloc(nullptr, desc, out, err);
}

// An allocator that answers every PUT with host memory that says it is
// VULKAN memory: another device than any CPU PUT declares.
struct Liar {
  std::vector<unsigned char> bytes;
  int calls = 0;
  bool freed = false;
};
hurray_status lying_alloc(void *user, uint64_t, const hurray_alloc_desc *desc,
                          hurray_buffer **out, hurray_error *err) {
  auto *l = static_cast<Liar *>(user);
  ++l->calls;
  l->bytes.assign(desc->byte_size + 4096, 0);
  const auto at = reinterpret_cast<uintptr_t>(l->bytes.data());
  hurray_buffer_desc b = HURRAY_BUFFER_DESC_INIT;
  b.handle = {desc->byte_size, 4096, HURRAY_DEVICE_VULKAN, HURRAY_SYNC_PRODUCER_SYNCED,
              desc->memory_class, 0};
  b.data = l->bytes.data() + ((4096 - at % 4096) % 4096);
  b.free_fn = [](void *u, void *) { static_cast<Liar *>(u)->freed = true; };
  b.free_user = l;
  return hurray_buffer_wrap(nullptr, &b, out, err);
}

// An allocator that keeps count of the bytes the server holds through it:
// what a test of "the destination is gone" measures, whatever else the
// process maps (RSS depends on the environment: backends, caches, UCX).
struct Held {
  int calls = 0;
  std::atomic<uint64_t> bytes{0};  // allocated and not yet freed
  uint64_t peak = 0;
};
hurray_status held_alloc(void *user, uint64_t, const hurray_alloc_desc *desc,
                         hurray_buffer **out, hurray_error *err) {
  auto *h = static_cast<Held *>(user);
  ++h->calls;
  const size_t align = desc->alignment < 4096 ? 4096 : desc->alignment;
  const size_t n = (desc->byte_size + align - 1) / align * align;
  void *p = std::aligned_alloc(align, n ? n : align);
  if (!p) return HURRAY_E_OUT_OF_MEMORY;
  const uint64_t now = h->bytes += desc->byte_size;
  if (now > h->peak) h->peak = now;
  struct Block {
    Held *h;
    uint64_t n;
  };
  auto *blk = new Block{h, desc->byte_size};
  hurray_buffer_desc b = HURRAY_BUFFER_DESC_INIT;
  b.handle = {desc->byte_size, static_cast<uint32_t>(align), HURRAY_DEVICE_CPU,
              HURRAY_SYNC_PRODUCER_SYNCED, desc->memory_class, 0};
  b.data = p;
  b.free_fn = [](void *u, void *data) {
    auto *k = static_cast<Block *>(u);
    k->h->bytes -= k->n;
    delete k;
    std::free(data);
  };
  b.free_user = blk;
  const hurray_status st = hurray_buffer_wrap(nullptr, &b, out, err);
  if (st != HURRAY_OK) {
    h->bytes -= desc->byte_size;
    delete blk;
    std::free(p);
  }
  return st;
}

void require_contains(const std::string &text, const char *what) {
  INFO(text);
  CHECK(text.find(what) != std::string::npos);
}

}  // namespace

// ============================================================ the rules --

TEST_CASE("BP-PUT-DEVICE: an allocator's buffer on another device than declared is refused",
          "[net][alloc][BP-PUT-DEVICE]") {
  Liar liar;
  Server srv({}, HURRAY_TRANSPORT_CROSS_MACHINE, lying_alloc, &liar);
  hurray_buffer *src = cpu_buffer(65536, 3);
  hurray_net_client *c = nullptr;
  hurray_error e{};
  hurray_status st = HURRAY_OK;
  with_client(srv, [&] {
    c = connect(srv.port(), nullptr);
    if (!c) return;
    hurray_net_transfer_desc d = to(HURRAY_DEVICE_CPU, HURRAY_MEMORY_STANDARD, 8);
    st = hurray_net_client_put_buffer(c, src, &d, &e);
  });
  REQUIRE(c != nullptr);
  REQUIRE(liar.calls == 1);  // the allocator ran: the server's check refused its buffer
  CHECK(st == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(std::string(e.rule_id) == "BP-PUT-DEVICE");
  require_contains(e.message, "VULKAN");
  require_contains(e.message, "never placed elsewhere");
  CHECK(liar.freed);  // the refused buffer was given back
  CHECK(srv.landed.empty());
  CHECK(srv.stats().puts_refused == 1);
  CHECK(srv.stats().live_buffers == 0);
  hurray_buffer_unref(src);
  CHECK(srv.close(c) == 0);
}

TEST_CASE("BP-MC-PAIR: a PUT to an invalid destination pair fails before anything is sent",
          "[net][BP-MC-PAIR]") {
  Server srv({HURRAY_DEVICE_CPU});
  hurray_buffer *src = cpu_buffer(4096, 5);
  hurray_net_client *c = nullptr;
  hurray_error e1{}, e2{}, e3{};
  hurray_status s1 = HURRAY_OK, s2 = HURRAY_OK, s3 = HURRAY_OK, ok = HURRAY_E_INTERNAL;
  uint64_t ticket = 77;
  with_client(srv, [&] {
    c = connect(srv.port(), nullptr);
    if (!c) return;
    // CPU memory has no UNIFIED class (TABLES.md section 3).
    hurray_net_transfer_desc bad = to(HURRAY_DEVICE_CPU, HURRAY_MEMORY_UNIFIED, 1);
    s1 = hurray_net_client_put_buffer(c, src, &bad, &e1);
    s2 = hurray_net_client_put_buffer_start(c, src, &bad, &ticket, &e2);
    hurray_handoff h;
    if (hurray_buffer_export(src, nullptr, &h, nullptr) == HURRAY_OK) {
      s3 = hurray_net_client_put(c, &h, &bad, &e3);
      hurray_handoff_release(&h, nullptr);
    }
    hurray_net_transfer_desc good = to(HURRAY_DEVICE_CPU, HURRAY_MEMORY_STANDARD, 2);
    ok = hurray_net_client_put_buffer(c, src, &good, nullptr);
  });
  REQUIRE(c != nullptr);
  for (const hurray_error *e : {&e1, &e2, &e3}) {
    CHECK(e->status == HURRAY_E_MEMORY_CLASS);
    CHECK(std::string(e->rule_id) == "BP-MC-PAIR");
  }
  CHECK(s1 == HURRAY_E_MEMORY_CLASS);
  CHECK(s2 == HURRAY_E_MEMORY_CLASS);
  CHECK(s3 == HURRAY_E_MEMORY_CLASS);
  CHECK(ticket == 0);
  CHECK(ok == HURRAY_OK);
  // Nothing of the three reached the server; the valid PUT did.
  CHECK(srv.stats().puts_refused == 0);
  CHECK(srv.stats().puts_landed == 1);
  hurray_buffer_unref(src);
  CHECK(srv.close(c) == 0);
}

// ============================================================ admission --

TEST_CASE("a server listens on 127.0.0.1 unless its configuration names another address",
          "[net][admit]") {
  hurray_net_server_config cfg = HURRAY_NET_SERVER_CONFIG_INIT;
  CHECK(cfg.address == nullptr);
  hurray_net_server *s = nullptr;
  hurray_error err;
  REQUIRE(hurray_net_server_create(&cfg, &s, &err) == HURRAY_OK);
  CHECK(listens_on_loopback_only(hurray_net_server_port(s)));
  hurray_net_server_destroy(s);
  // The example server too.
  Child ex({HURRAY_NET_EXAMPLE_SERVER, "--port", "0", "--count", "1"});
  const uint16_t port = listening_port(ex);
  CHECK(listens_on_loopback_only(port));
}

TEST_CASE("with default options a client's UCX listens on the interface it connects through only",
          "[net][admit]") {
  // The server (this process too) is on 127.0.0.1 and listens there only;
  // a client's UCX transport listens for its own endpoints, on the
  // interface the client reaches the server through (lo) and nowhere else.
  Server srv;
  const size_t before = listening_sockets().size();
  hurray_net_client *c = nullptr;
  with_client(srv, [&] { c = connect(srv.port(), nullptr); });
  REQUIRE(c != nullptr);
  const std::vector<std::string> now = listening_sockets();
  CHECK(now.size() > before);  // the client's UCX listens (on loopback)
  for (const std::string &local : now) {
    INFO(local);
    CHECK(local.rfind("0100007F:", 0) == 0);  // 127.0.0.1
  }
  srv.drop(c);
}

TEST_CASE("NET-ADMIT: a peer outside the allow list is refused with a clear error",
          "[net][admit]") {
  {
    Server srv({}, HURRAY_TRANSPORT_CROSS_MACHINE, nullptr, nullptr,
               [](hurray_net_server_config &cfg) { cfg.allow = "10.0.0.0/8, 192.168.1.7"; });
    hurray_error err{};
    hurray_net_client *c = nullptr;
    with_client(srv, [&] { c = connect(srv.port(), &err, HURRAY_TRANSPORT_CROSS_MACHINE, 5000); });
    CHECK(c == nullptr);
    CHECK(err.status == HURRAY_E_PROTOCOL);
    require_contains(err.message, "NET-ADMIT");
    require_contains(err.message, "refused the connection");
    CHECK(srv.stats().connections == 0);  // nothing was accepted
    hurray_net_client_destroy(c);
  }
  {
    Server srv({}, HURRAY_TRANSPORT_CROSS_MACHINE, nullptr, nullptr,
               [](hurray_net_server_config &cfg) { cfg.allow = "10.0.0.0/8,127.0.0.0/8"; });
    hurray_net_client *c = nullptr;
    with_client(srv, [&] { c = connect(srv.port(), nullptr); });
    CHECK(c != nullptr);
    srv.drop(c);
  }
  // A list that is not one is refused at create, naming the entry.
  for (const char *bad : {"10.0.0.0/33", "::1/129", "example.org", "10.0.0.1/", ","}) {
    hurray_net_server_config cfg = HURRAY_NET_SERVER_CONFIG_INIT;
    cfg.allow = bad;
    hurray_net_server *s = nullptr;
    hurray_error err{};
    CHECK(hurray_net_server_create(&cfg, &s, &err) == HURRAY_E_INVALID_ARGUMENT);
    CHECK(s == nullptr);
    require_contains(err.message, "NET-ADMIT");
  }
}

TEST_CASE("NET-LIMIT: connections beyond max_connections_per_peer are refused until one goes",
          "[net][admit][limits]") {
  hurray_net_limits lim = HURRAY_NET_LIMITS_INIT;
  lim.max_connections_per_peer = 2;
  Server srv({}, HURRAY_TRANSPORT_CROSS_MACHINE, nullptr, nullptr, with_limits(&lim));
  hurray_net_client *a = nullptr, *b = nullptr, *c = nullptr;
  hurray_error err{};
  with_client(srv, [&] {
    a = connect(srv.port(), nullptr);
    b = connect(srv.port(), nullptr);
    c = connect(srv.port(), &err, HURRAY_TRANSPORT_CROSS_MACHINE, 5000);
  });
  CHECK(a != nullptr);
  CHECK(b != nullptr);
  CHECK(c == nullptr);
  require_contains(err.message, "NET-ADMIT");
  srv.drop(a);
  serve_until(srv, [](const hurray_net_stats &s) { return s.disconnections == 1; },
              "the first client's connection is closed");
  with_client(srv, [&] { c = connect(srv.port(), nullptr); });
  CHECK(c != nullptr);
  srv.drop(b);
  CHECK(srv.close(c) == 0);
}

// The message names the struct, the size given and its first published size.
static void check_size_refused(const hurray_error &err, const char *name, uint32_t given,
                               uint32_t first) {
  const std::string m = err.message;
  INFO(m);
  CHECK(err.status == HURRAY_E_INVALID_ARGUMENT);
  CHECK(m.find(std::string(name) + ".size is " + std::to_string(given) + ", below " +
               std::to_string(first)) != std::string::npos);
}

TEST_CASE("the limits come from HURRAY_NET_LIMITS_INIT, a struct below its first size is refused",
          "[net][limits][size]") {
  hurray_net_limits lim = HURRAY_NET_LIMITS_INIT;
  CHECK(lim.size == sizeof lim);
  CHECK(lim.max_put_bytes == 0);  // 0: the default
  hurray_net_server_config cfg = HURRAY_NET_SERVER_CONFIG_INIT;
  hurray_net_server *s = nullptr;
  lim.size = 8;
  cfg.limits = &lim;
  hurray_error err{};
  CHECK(hurray_net_server_create(&cfg, &s, &err) == HURRAY_E_INVALID_ARGUMENT);
  check_size_refused(err, "hurray_net_limits", 8, 72);
  // A configuration that ends at alloc_user was never published: refused.
  cfg.size = static_cast<uint32_t>(offsetof(hurray_net_server_config, limits));
  cfg.limits = nullptr;
  CHECK(hurray_net_server_create(&cfg, &s, &err) == HURRAY_E_INVALID_ARGUMENT);
  check_size_refused(err, "hurray_net_server_config", cfg.size, 96);
  CHECK(s == nullptr);
}

TEST_CASE("client config, transfer desc and received below their first sizes are refused",
          "[net][size]") {
  hurray_net_client_config cc = HURRAY_NET_CLIENT_CONFIG_INIT;
  cc.address = "127.0.0.1";
  cc.port = 1;
  cc.size = 16;
  hurray_net_client *c = nullptr;
  hurray_error err{};
  CHECK(hurray_net_client_connect(&cc, &c, &err) == HURRAY_E_INVALID_ARGUMENT);
  check_size_refused(err, "hurray_net_client_config", 16, 48);
  CHECK(c == nullptr);
  hurray_net_transfer_desc d = HURRAY_NET_TRANSFER_DESC_INIT;
  d.size = 4;
  hurray_buffer *got = nullptr;
  CHECK(hurray_net_client_get(nullptr, &d, &got, &err) == HURRAY_E_INVALID_ARGUMENT);
  check_size_refused(err, "hurray_net_transfer_desc", 4, 24);
  hurray_net_received r{};
  r.size = 24;
  CHECK(hurray_net_server_poll(nullptr, 0, &r, &err) == HURRAY_E_INVALID_ARGUMENT);
  check_size_refused(err, "hurray_net_received", 24, 48);
}

// =============================================================== limits --

TEST_CASE("NET-LIMIT: a PUT over max_put_bytes is refused with the limit's name, one at it lands",
          "[net][limits]") {
  hurray_net_limits lim = HURRAY_NET_LIMITS_INIT;
  lim.max_put_bytes = 1u << 20;
  int calls = 0;
  Server srv({}, HURRAY_TRANSPORT_CROSS_MACHINE, counting_alloc, &calls, with_limits(&lim));
  hurray_buffer *big = cpu_buffer((1u << 20) + 4096, 1), *fits = cpu_buffer(1u << 20, 2);
  hurray_net_client *c = nullptr;
  hurray_error e{};
  hurray_status s1 = HURRAY_OK, s2 = HURRAY_E_INTERNAL;
  with_client(srv, [&] {
    c = connect(srv.port(), nullptr);
    if (!c) return;
    hurray_net_transfer_desc d = to(HURRAY_DEVICE_CPU);
    s1 = hurray_net_client_put_buffer(c, big, &d, &e);
    s2 = hurray_net_client_put_buffer(c, fits, &d, nullptr);
  });
  REQUIRE(c != nullptr);
  CHECK(s1 == HURRAY_E_OUT_OF_MEMORY);
  require_contains(e.message, "NET-LIMIT");
  require_contains(e.message, "max_put_bytes = 1048576");
  CHECK(s2 == HURRAY_OK);
  CHECK(calls == 1);  // the refused PUT allocated nothing
  CHECK(srv.stats().live_buffers == 0);
  hurray_buffer_unref(big);
  hurray_buffer_unref(fits);
  CHECK(srv.close(c) == 0);
}

TEST_CASE("NET-LIMIT: a PUT declaring 2^40 bytes is refused before anything is allocated",
          "[process][limits]") {
  // What the server holds is counted by its allocator (held_alloc), not
  // read from the process's RSS, which the environment moves.
  Held held;
  Server srv({}, HURRAY_TRANSPORT_CROSS_MACHINE, held_alloc, &held);
  hurray_net_limits lim = HURRAY_NET_LIMITS_INIT;
  REQUIRE(hurray_net_server_limits(srv.s, &lim, nullptr) == HURRAY_OK);
  Child peer({HURRAY_NET_RAW_PEER, "huge", "127.0.0.1", port_arg(srv)});
  CHECK(serve_until_exit(srv, peer) == 0);
  require_contains(peer.output, "status=HURRAY_E_OUT_OF_MEMORY");
  require_contains(peer.output, "NET-LIMIT");
  // the default, which depends on the machine (docs/spec/network.md N19)
  require_contains(peer.output, ("max_put_bytes = " + std::to_string(lim.max_put_bytes)).c_str());
  CHECK(held.calls == 0);
  CHECK(held.peak == 0);
  CHECK(srv.stats().puts_refused == 1);
  CHECK(srv.stats().live_buffers == 0);
  good_client_is_served(srv);
  CHECK(held.calls == 1);
}

TEST_CASE("NET-LIMIT: PUTs in flight beyond a connection's limits are refused, the others land",
          "[process][limits][window]") {
  for (int which = 0; which < 2; ++which) {
    hurray_net_limits lim = HURRAY_NET_LIMITS_INIT;
    if (which == 0) lim.conn_puts_in_flight = 2;
    else lim.conn_bytes_in_flight = 2 * 65536;  // the raw peer's PUTs are 64 KiB
    Server srv({}, HURRAY_TRANSPORT_CROSS_MACHINE, nullptr, nullptr, with_limits(&lim));
    Child peer({HURRAY_NET_RAW_PEER, "window", "127.0.0.1", port_arg(srv), "4", "4"});
    serve_until_exit(srv, peer);
    INFO("limit " << which);
    require_contains(peer.output, "answered=4 twice=0 unknown=0 failed=2");
    CHECK(srv.stats().puts_landed == 2);
    CHECK(srv.stats().puts_refused == 2);
    CHECK(srv.stats().live_buffers == 0);  // the two landed were taken by poll
    CHECK(srv.landed.size() == 2);
    good_client_is_served(srv);
  }
}

TEST_CASE("NET-LIMIT: a PUT whose bytes never come is cut off by the stall timeout",
          "[process][limits]") {
  hurray_net_limits lim = HURRAY_NET_LIMITS_INIT;
  lim.stall_timeout_ms = 300;
  Held held;
  Server srv({}, HURRAY_TRANSPORT_CROSS_MACHINE, held_alloc, &held, with_limits(&lim));
  srv.poll(10);
  const int fds = open_fds();
  {
    Child peer({HURRAY_NET_RAW_PEER, "stall", "127.0.0.1", port_arg(srv)});
    serve_until(srv, [](const hurray_net_stats &s) {
      return s.transfers_failed == 1 && s.in_flight == 0 && s.connections == 1 &&
             s.disconnections == 1;
    }, "the stalled PUT is cut off and its client disconnected");
    INFO(peer.output);
    // The server cut it off: the peer, which sleeps 60 s, has not gone by
    // itself (which would fail its PUT too).
    CHECK_FALSE(peer.exited());
    CHECK(srv.stats().puts_landed == 0);
    CHECK(srv.stats().live_buffers == 0);
  }  // the peer is killed
  serve_until(srv, [&](const hurray_net_stats &) { return open_fds() <= fds + 2; },
              "the descriptors come back");
  // the 64 MiB destination was allocated and is gone (the server's own
  // bytes, not the process's RSS, which the environment moves)
  CHECK(held.calls == 1);
  CHECK(held.peak >= (64u << 20));
  CHECK(held.bytes == 0);
  good_client_is_served(srv);
  CHECK(held.bytes == 65536);  // the good client's, landed and held by the test
}

TEST_CASE("NET-LIMIT: a flood of GETs whose answers are never taken disconnects that client only",
          "[process][limits]") {
  // Its GETs stall (their bytes are never pulled) or, when the answers it
  // never takes all fit in the sockets' buffers, it is idle: either way it
  // goes, in a bounded time.
  hurray_net_limits lim = HURRAY_NET_LIMITS_INIT;
  lim.stall_timeout_ms = 500;
  lim.idle_timeout_ms = 1000;
  Server srv({}, HURRAY_TRANSPORT_CROSS_MACHINE, nullptr, nullptr, with_limits(&lim));
  hurray_buffer *offer = cpu_buffer(256 * 1024, 9);
  REQUIRE(hurray_net_server_register(srv.s, 1, offer, nullptr) == HURRAY_OK);
  srv.poll(10);
  // A first client's GET warms the server up (UCX's pools, the backends):
  // growth is measured from there, not from a cold process.
  good_get(srv);
  const uint64_t rss = rss_bytes();
  const int fds = open_fds();
  {
    Child peer({HURRAY_NET_RAW_PEER, "getflood", "127.0.0.1", port_arg(srv)});
    serve_until(srv, [](const hurray_net_stats &s) {
      return s.connections == 1 && s.disconnections == 1 && s.in_flight == 0;
    }, "the flooding client is disconnected");
    peer.drain();
    INFO(peer.output);
    const hurray_net_stats st = srv.stats();
    CHECK(st.gets_served + st.gets_refused + st.transfers_failed < 20000);
    CHECK(st.live_buffers == 0);
  }
  serve_until(srv, [&](const hurray_net_stats &) { return open_fds() <= fds + 2; },
              "the descriptors come back");
  CHECK(srv.stats().in_flight == 0);
  CHECK(rss_bytes() < rss + (64u << 20));
  // Another client is served, GET included.
  good_client_is_served(srv);
  good_get(srv);
  hurray_buffer_unref(offer);
}

TEST_CASE("an idle connection is closed after idle_timeout_ms, the next client is served",
          "[net][limits]") {
  hurray_net_limits lim = HURRAY_NET_LIMITS_INIT;
  lim.idle_timeout_ms = 200;
  Server srv({}, HURRAY_TRANSPORT_CROSS_MACHINE, nullptr, nullptr, with_limits(&lim));
  hurray_net_client *c = nullptr;
  with_client(srv, [&] { c = connect(srv.port(), nullptr); });
  REQUIRE(c != nullptr);
  serve_until(srv, [](const hurray_net_stats &s) { return s.disconnections == 1; },
              "the idle client is disconnected");
  hurray_buffer *src = cpu_buffer(4096, 4);
  hurray_status late = HURRAY_OK;
  hurray_error e{};
  with_client(srv, [&] {
    hurray_net_transfer_desc d = to(HURRAY_DEVICE_CPU);
    late = hurray_net_client_put_buffer(c, src, &d, &e);
  });
  CHECK(late == HURRAY_E_IO);
  hurray_buffer_unref(src);
  srv.drop(c);
  good_client_is_served(srv);
}

TEST_CASE("a GET of a registration for other clients is answered as an id that is not there",
          "[process][access]") {
  Server srv;
  auto offer = [](uint64_t n) {
    hurray_buffer *b = cpu_buffer(n, 0);
    auto *p = static_cast<unsigned char *>(hurray_buffer_data(b));
    for (uint64_t i = 0; i < n; ++i) p[i] = static_cast<unsigned char>(i % 251);
    return b;
  };
  hurray_buffer *theirs = offer(4096), *mine = offer(4096);
  hurray_error err{};
  REQUIRE(hurray_net_server_register_for(srv.s, 1, theirs, "10.9.0.0/16", &err) == HURRAY_OK);
  REQUIRE(hurray_net_server_register_for(srv.s, 2, mine, "127.0.0.1", &err) == HURRAY_OK);
  // A list that is not one registers nothing.
  CHECK(hurray_net_server_register_for(srv.s, 3, mine, "10.0.0.0/99", &err) ==
        HURRAY_E_INVALID_ARGUMENT);
  require_contains(err.message, "NET-ADMIT");
  CHECK(hurray_net_server_unregister(srv.s, 3, nullptr) == HURRAY_E_INVALID_ARGUMENT);
  auto get = [&](const char *id) {
    Child c({HURRAY_NET_EXAMPLE_CLIENT, "127.0.0.1", port_arg(srv), "--size", "4096", "--get",
             id});
    const int rc = serve_until_exit(srv, c);
    return std::make_pair(rc, c.output);
  };
  const auto [rc1, out1] = get("1");
  CHECK(rc1 != 0);
  require_contains(out1, "has no buffer registered as 1");
  const auto [rc9, out9] = get("9");  // truly not there: the same answer
  CHECK(rc9 != 0);
  require_contains(out9, "has no buffer registered as 9");
  const auto [rc2, out2] = get("2");
  CHECK(rc2 == 0);
  require_contains(out2, "GET 2: 4096 bytes, content checked");
  CHECK(srv.stats().gets_refused == 2);
  CHECK(srv.stats().gets_served == 1);
  hurray_buffer_unref(theirs);
  hurray_buffer_unref(mine);
}
