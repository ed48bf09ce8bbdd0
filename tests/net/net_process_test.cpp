// libhurray-net with real processes ([process]): the example client and
// server, and a raw peer that skips the client's checks; faults, kills mid
// transfer and windows of PUTs from another process.
#include <catch2/catch.hpp>

#include <hurray_backend.h>
#include <hurray_net.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "net_support.h"

using namespace nettest;

// ============================================================ [process] --

TEST_CASE("faults from real processes are refused with their rule, the server keeps serving",
          "[process]") {
  Server srv({HURRAY_DEVICE_CPU, HURRAY_DEVICE_VULKAN, HURRAY_DEVICE_OPENCL});
  struct Fault {
    const char *mode, *status, *rule, *says;
  };
  const Fault faults[] = {
      {"event", "HURRAY_E_SYNC", "rule=BP-SYNC-NET", "BP-SYNC-NET"},
      {"truncated", "HURRAY_E_PROTOCOL", "rule= ", "truncated transfer"},
      {"nodevice", "HURRAY_E_DEVICE_UNAVAILABLE", "rule=BP-PUT-DEVICE", "never placed elsewhere"},
      {"badheader", "HURRAY_E_PROTOCOL", "rule= ", "malformed PUT header"},
  };
  uint64_t refused = 0;
  for (const Fault &f : faults) {
    Child peer({HURRAY_NET_RAW_PEER, f.mode, "127.0.0.1", port_arg(srv)});
    const int rc = serve_until_exit(srv, peer);
    INFO(f.mode << ": " << peer.output);
    CHECK(rc == 0);
    CHECK(peer.output.find(std::string("status=") + f.status) != std::string::npos);
    CHECK(peer.output.find(f.rule) != std::string::npos);
    CHECK(peer.output.find(f.says) != std::string::npos);
    CHECK(srv.stats().puts_refused == ++refused);
    CHECK(srv.stats().live_buffers == 0);
    CHECK(srv.stats().in_flight == 0);
    good_client_is_served(srv);
  }
  CHECK(srv.stats().puts_landed == 4);
  CHECK(srv.finish() == 0);
}

TEST_CASE("an RDMA-policy server refuses a 64-byte-aligned PUT on the wire (BP-ALIGN-IPC)",
          "[process][BP-ALIGN-IPC]") {
  Server srv({}, HURRAY_TRANSPORT_RDMA);
  Child peer({HURRAY_NET_RAW_PEER, "badalign", "127.0.0.1", port_arg(srv)});
  CHECK(serve_until_exit(srv, peer) == 0);
  INFO(peer.output);
  CHECK(peer.output.find("status=HURRAY_E_ALIGNMENT rule=BP-ALIGN-IPC") != std::string::npos);
  CHECK(srv.stats().puts_refused == 1);
}

namespace {
// Start `args`, wait until the server has a transfer in flight, freeze the
// child (so the transfer cannot finish), then kill it. Retries when the
// transfer finished before the child could be frozen.
void kill_mid_transfer(Server &srv, const std::vector<std::string> &args, bool put) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    const hurray_net_stats before = srv.stats();
    Child c(args);
    bool frozen = false;
    const auto limit = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (!c.exited()) {
      srv.poll(0);
      if (srv.stats().in_flight > 0) {
        c.signal(SIGSTOP);
        frozen = true;
        break;
      }
      if (std::chrono::steady_clock::now() > limit) FAIL("no transfer started: " << c.output);
    }
    INFO(c.output);
    REQUIRE(frozen);
    const hurray_net_stats st = srv.stats();
    const bool finished = put ? st.puts_landed > before.puts_landed
                              : st.gets_served > before.gets_served;
    c.signal(SIGKILL);
    while (!c.exited()) srv.poll(1);
    if (finished) continue;  // too fast to catch: try again
    serve_until(srv, [&](const hurray_net_stats &s) {
      return s.transfers_failed == before.transfers_failed + 1 && s.in_flight == 0;
    }, "the cut-off transfer is dropped");
    serve_until(srv, [&](const hurray_net_stats &s) {
      return s.disconnections == s.connections;
    }, "the killed client's connection is closed");
    CHECK(srv.stats().live_buffers == 0);
    if (put) CHECK(srv.stats().puts_landed == before.puts_landed);
    return;
  }
  FAIL("every transfer finished before the client could be stopped");
}
}  // namespace

TEST_CASE("a client killed mid-PUT: the transfer is dropped, nothing leaks, the next "
          "client is served", "[process]") {
  Server srv;
  kill_mid_transfer(srv, {HURRAY_NET_EXAMPLE_CLIENT, "127.0.0.1", port_arg(srv), "--size",
                          std::to_string(512u << 20)},
                    true);
  good_client_is_served(srv);
  CHECK(srv.finish() == 0);
}

TEST_CASE("a client killed mid-GET: the send is dropped, the registration stays, the next "
          "client is served", "[process]") {
  Server srv;
  hurray_buffer *offer = cpu_buffer(512u << 20, 1);
  REQUIRE(hurray_net_server_register(srv.s, 1, offer, nullptr) == HURRAY_OK);
  hurray_buffer_unref(offer);
  kill_mid_transfer(srv, {HURRAY_NET_EXAMPLE_CLIENT, "127.0.0.1", port_arg(srv), "--size", "0",
                          "--get", "1"},
                    false);
  good_client_is_served(srv);
  CHECK(srv.finish() == 0);
}

TEST_CASE("a server killed mid-PUT: the client gets a clear I/O error", "[process]") {
  Child server({HURRAY_NET_EXAMPLE_SERVER, "--address", "127.0.0.1", "--port", "0"});
  hurray_net_client *c = connect_then_stop(server);  // the server stops reading mid-way ...
  hurray_error err;
  hurray_buffer *src = cpu_buffer(256u << 20, 2);
  std::atomic<bool> done{false};
  hurray_status s = HURRAY_OK;
  std::thread t([&] {
    hurray_net_transfer_desc d = to(HURRAY_DEVICE_CPU);
    s = hurray_net_client_put_buffer(c, src, &d, &err);
    done = true;
  });
  usleep(100000);  // not an assertion: lets the PUT start before the kill
  server.signal(SIGKILL);  // ... and dies
  t.join();
  CHECK(done);
  CHECK(s == HURRAY_E_IO);
  INFO(err.message);
  CHECK(std::string(err.message).find("hurray-net") != std::string::npos);
  // The client stays usable only to be destroyed: every call says the connection is lost.
  hurray_net_transfer_desc d = to(HURRAY_DEVICE_CPU);
  CHECK(hurray_net_client_put_buffer(c, src, &d, &err) == HURRAY_E_IO);
  CHECK(std::string(err.message).find("connection is lost") != std::string::npos);
  hurray_net_client_destroy(c);
  hurray_buffer_unref(src);
}

TEST_CASE("a client killed with PUTs in flight: each is dropped, nothing leaks, the next "
          "client is served", "[process][window]") {
  Server srv;
  bool caught = false;
  for (int attempt = 0; attempt < 5 && !caught; ++attempt) {
    const hurray_net_stats before = srv.stats();
    Child c({HURRAY_NET_EXAMPLE_CLIENT, "127.0.0.1", port_arg(srv), "--size",
             std::to_string(64u << 20), "--count", "8", "--window", "4"});
    const auto limit = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    bool frozen = false;
    while (!c.exited()) {
      srv.poll(0);
      if (srv.stats().in_flight >= 2) {  // two or more PUTs of it moving at once
        c.signal(SIGSTOP);
        frozen = true;
        break;
      }
      if (std::chrono::steady_clock::now() > limit) FAIL("no PUTs in flight: " << c.output);
    }
    INFO(c.output);
    c.signal(SIGKILL);
    while (!c.exited()) srv.poll(1);
    if (!frozen) continue;  // finished before it could be caught: try again
    serve_until(srv, [&](const hurray_net_stats &s) {
      return s.in_flight == 0 && s.disconnections == s.connections;
    }, "the cut-off PUTs are dropped and the connection closed");
    const hurray_net_stats st = srv.stats();
    // Some PUTs may have landed before the kill; the others were dropped.
    CHECK(st.transfers_failed >= before.transfers_failed + 1);
    CHECK(st.puts_landed < before.puts_landed + 8);
    CHECK(st.live_buffers == 0);
    caught = true;
  }
  REQUIRE(caught);
  for (auto &r : srv.landed) hurray_buffer_unref(r.buffer);
  srv.landed.clear();
  good_client_is_served(srv);
  CHECK(srv.finish() == 0);
}

TEST_CASE("a window of PUTs from a client process lands whole", "[process][window]") {
  Server srv;
  Child c({HURRAY_NET_EXAMPLE_CLIENT, "127.0.0.1", port_arg(srv), "--size", "300000", "--count",
           "10", "--window", "4", "--id", "500"});
  const int rc = serve_until_exit(srv, c);
  INFO(c.output);
  CHECK(rc == 0);
  REQUIRE(srv.landed.size() == 10);
  for (size_t i = 0; i < srv.landed.size(); ++i) {
    CHECK(srv.landed[i].buffer_id == 500 + i);
    const auto *p = static_cast<const unsigned char *>(hurray_buffer_data(srv.landed[i].buffer));
    bool same = true;
    for (uint64_t k = 0; k < 300000; ++k) same = same && p[k] == k % 251;
    CHECK(same);
  }
  CHECK(srv.finish() == 0);
}

TEST_CASE("a window's answers come together, each PUT's exactly once (N15)",
          "[process][window]") {
  Server srv;
  struct Case {
    const char *hint;
    bool acks;
  };
  // HINT 0 is a client from before the field: one PUT_REP per PUT. HINT 8:
  // the 8 PUTs are under way at once, so their answers go out as PUT_ACKs
  // that carry at least 4 ids (half the window) each, or what landed in the
  // server's round, not one message each.
  for (const Case k : {Case{"0", false}, Case{"8", true}}) {
    const size_t before = srv.landed.size();
    Child peer({HURRAY_NET_RAW_PEER, "window", "127.0.0.1", port_arg(srv), "8", k.hint});
    const int rc = serve_until_exit(srv, peer);
    INFO("HINT " << k.hint << ": " << peer.output);
    CHECK(rc == 0);
    CHECK(peer.output.find("answered=8 twice=0 unknown=0 failed=0") != std::string::npos);
    CHECK(srv.landed.size() == before + 8);
    int put_rep = -1, put_ack = -1;
    const size_t at = peer.output.find("answers ");
    REQUIRE(at != std::string::npos);
    REQUIRE(std::sscanf(peer.output.c_str() + at, "answers put_rep=%d put_ack=%d", &put_rep,
                        &put_ack) == 2);
    if (k.acks) {
      CHECK(put_rep == 0);
      CHECK(put_ack >= 1);
      CHECK(put_ack < 8);  // together, not one each
    } else {
      CHECK(put_rep == 8);
      CHECK(put_ack == 0);
    }
  }
  CHECK(srv.stats().puts_landed == 16);
  CHECK(srv.finish() == 0);
}

TEST_CASE("a server killed with PUTs in flight: each gets a clear I/O error", "[process][window]") {
  Child server({HURRAY_NET_EXAMPLE_SERVER, "--address", "127.0.0.1", "--port", "0"});
  hurray_net_client *c = connect_then_stop(server);  // the server stops reading ...
  hurray_error err;
  Tracked src(64u << 20, 2);
  std::vector<uint64_t> tickets;
  for (int i = 0; i < 4; ++i) {
    hurray_net_transfer_desc d = to(HURRAY_DEVICE_CPU, HURRAY_MEMORY_STANDARD, i);
    uint64_t t = 0;
    REQUIRE(hurray_net_client_put_buffer_start(c, src.buffer, &d, &t, &err) == HURRAY_OK);
    tickets.push_back(t);
  }
  int32_t done = 1;
  CHECK(hurray_net_client_put_test(c, tickets[0], &done, nullptr) == HURRAY_OK);
  CHECK(done == 0);
  server.signal(SIGKILL);  // ... and dies with four PUTs in flight
  for (uint64_t t : tickets) {
    hurray_error e;
    CHECK(hurray_net_client_put_wait(c, t, &e) == HURRAY_E_IO);
    INFO(e.message);
    CHECK(std::string(e.message).find("hurray-net") != std::string::npos);
  }
  hurray_net_transfer_desc d = to(HURRAY_DEVICE_CPU);
  uint64_t t = 5;
  CHECK(hurray_net_client_put_buffer_start(c, src.buffer, &d, &t, &err) == HURRAY_E_IO);
  CHECK(t == 0);
  CHECK(std::string(err.message).find("connection is lost") != std::string::npos);
  hurray_net_client_destroy(c);
  hurray_buffer_unref(src.buffer);
  CHECK(src.freed);  // every export the PUTs held is released
}
