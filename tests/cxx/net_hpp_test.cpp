// include/hurray_net.hpp over libhurray-net (UCX over TCP on loopback, as
// tests/net): PUT and GET through the wrappers, each buffer owned once
// (BP-NET-OWN); the server's allocator as a C++ callable, whose
// hurray::error refuses the PUT with its status and message and whose other
// exceptions refuse it (HURRAY_E_INTERNAL) and come back from poll(), never
// through the C library; the non-throwing overloads. The client runs on a
// thread while the test's thread polls the server; every wait is bounded.
#include <hurray_net.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

hurray::buffer pattern_buffer(std::uint64_t n, unsigned char seed) {
  hurray::buffer b = hurray::buffer::alloc_host(n, 4096);
  for (std::uint64_t i = 0; i < n; ++i)
    b.bytes()[i] = static_cast<std::byte>(static_cast<unsigned char>(i * 7 + seed));
  return b;
}

bool has_pattern(const hurray::buffer &b, std::uint64_t n, unsigned char seed) {
  if (b.bytes().size() != n) return false;
  for (std::uint64_t i = 0; i < n; ++i)
    if (b.bytes()[i] != static_cast<std::byte>(static_cast<unsigned char>(i * 7 + seed)))
      return false;
  return true;
}

hurray::net::server local_server(hurray::net::server::alloc_fn alloc = nullptr) {
  hurray_net_server_config cfg = HURRAY_NET_SERVER_CONFIG_INIT;
  cfg.address = "127.0.0.1";
  return hurray::net::server::create(cfg, std::move(alloc));
}

hurray_net_client_config client_config(std::uint16_t port) {
  hurray_net_client_config c = HURRAY_NET_CLIENT_CONFIG_INIT;
  c.address = "127.0.0.1";
  c.port = port;
  c.timeout_ms = 30000;
  return c;
}

// Run fn on a thread while this thread polls `srv` (at most 60 s); the PUTs
// that landed are returned in order.
template <class F>
std::vector<hurray::net::received> with_client(hurray::net::server &srv, F fn) {
  std::atomic<bool> done{false};
  std::thread t([&] {
    fn();
    done = true;
  });
  std::vector<hurray::net::received> landed;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::exception_ptr failed;
  while (!done && std::chrono::steady_clock::now() < end) {
    try {
      hurray::net::received r = srv.poll(5);
      if (r) landed.push_back(std::move(r));
    } catch (...) {
      if (!failed) failed = std::current_exception();
    }
  }
  t.join();
  for (;;) {
    hurray::net::received r = srv.poll(0);
    if (!r) break;
    landed.push_back(std::move(r));
  }
  if (failed) std::rethrow_exception(failed);
  return landed;
}

}  // namespace

TEST_CASE("net: a PUT lands as a buffer the server owns, a GET comes back", "[hpp-net]") {
  hurray::net::server srv = local_server();
  REQUIRE(srv.port() != 0);
  hurray::buffer src = pattern_buffer(100000, 3);
  hurray::buffer offered = pattern_buffer(4096, 9);
  srv.register_buffer(42, offered);
  hurray::buffer got;
  std::size_t n_devices = 0;
  auto landed = with_client(srv, [&] {
    hurray::net::client c = hurray::net::client::connect(client_config(srv.port()));
    n_devices = c.peer_devices().size();
    c.put(src, hurray::net::transfer(7));
    hurray::handoff h = src.export_handoff();
    c.put(h, hurray::net::transfer(8));  // the handoff stays ours
    CHECK(h.live());
    got = c.get(hurray::net::transfer(42));
  });
  CHECK(n_devices >= 1);
  REQUIRE(landed.size() == 2);
  CHECK(landed[0].buffer_id == 7);
  CHECK(landed[1].buffer_id == 8);
  CHECK(has_pattern(landed[0].buf, 100000, 3));
  CHECK(has_pattern(landed[1].buf, 100000, 3));
  CHECK(landed[0].handle.byte_size == 100000);
  CHECK(srv.stats().puts_landed == 2);
  CHECK(has_pattern(got, 4096, 9));
  srv.unregister(42);
  CHECK_THROWS_AS(srv.unregister(42), hurray::error);
  hurray_error e = hurray::no_error();
  CHECK(srv.unregister(std::nothrow, 42, &e) == HURRAY_E_INVALID_ARGUMENT);
}

TEST_CASE("net: the allocator is a callable, what it throws never crosses C", "[hpp-net]") {
  int calls = 0;
  hurray::net::server srv = local_server([&](std::uint64_t id, const hurray_alloc_desc &d) {
    ++calls;
    if (id == 2) {
      hurray_error e = hurray::no_error();
      e.status = HURRAY_E_OUT_OF_MEMORY;
      std::strncpy(e.message, "the pool is empty", sizeof e.message - 1);
      throw hurray::error(e);
    }
    if (id == 3) throw std::runtime_error("not a hurray error");
    return hurray::buffer::alloc(d);
  });
  hurray::buffer src = pattern_buffer(8192, 5);
  hurray_status refused = HURRAY_OK, internal = HURRAY_OK;
  std::string refused_message;
  std::exception_ptr from_poll;
  std::vector<hurray::net::received> landed;
  try {
    landed = with_client(srv, [&] {
      hurray::net::client c = hurray::net::client::connect(client_config(srv.port()));
      c.put(src, hurray::net::transfer(1));
      try {
        c.put(src, hurray::net::transfer(2));
      } catch (const hurray::error &err) {
        refused = err.status();
        refused_message = err.what();
      }
      hurray_error e = hurray::no_error();
      internal = c.put(std::nothrow, src, hurray::net::transfer(3), &e);
    });
  } catch (const std::runtime_error &) {
    from_poll = std::current_exception();
  }
  CHECK(calls == 3);
  REQUIRE(landed.size() <= 1);
  CHECK(refused == HURRAY_E_OUT_OF_MEMORY);
  CHECK(refused_message.find("the pool is empty") != std::string::npos);
  CHECK(internal == HURRAY_E_INTERNAL);
  REQUIRE(from_poll != nullptr);  // rethrown by the poll() that ran the allocator
  CHECK(srv.take_alloc_exception() == nullptr);  // and only once
  CHECK(srv.stats().puts_landed == 1);
  CHECK(srv.stats().puts_refused == 2);
}

TEST_CASE("net: failures without exceptions, moved-from objects hold nothing", "[hpp-net]") {
  hurray::net::client c;
  hurray_error e = hurray::no_error();
  hurray_net_client_config none = client_config(1);  // nothing listens on port 1
  none.timeout_ms = 2000;
  CHECK(hurray::net::client::connect(std::nothrow, none, c, &e) == HURRAY_E_IO);
  CHECK_FALSE(c);
  hurray::net::server srv = local_server();
  hurray::net::server moved = std::move(srv);
  CHECK_FALSE(srv);  // NOLINT(bugprone-use-after-move): moved-from is empty
  CHECK(moved);
  hurray::net::received r;
  CHECK(moved.poll(std::nothrow, 0, r) == HURRAY_OK);
  CHECK_FALSE(r);
  hurray_net_server_config bad = HURRAY_NET_SERVER_CONFIG_INIT;
  bad.transport = HURRAY_TRANSPORT_IN_PROCESS;
  CHECK_THROWS_AS(hurray::net::server::create(bad), hurray::error);
}
