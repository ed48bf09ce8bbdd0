// The readiness descriptors of a network server and client (issue 35;
// docs/spec/network.md N21): a poll loop that sleeps on the descriptor and
// calls with timeout 0 only when it is readable serves every client. Each
// wait is bounded (20 s, much longer than anything here takes): a wait that
// runs out means the descriptor missed progress.
#include "net_support.h"

#include <poll.h>

using namespace nettest;

TEST_CASE("a poll loop on hurray_net_server_fd serves clients, calling poll with timeout 0 only",
          "[process][fd]") {
  Server srv;
  hurray_error err{};
  const int fd = hurray_net_server_fd(srv.s, &err);
  INFO(err.message);
  REQUIRE(fd >= 0);
  CHECK(hurray_net_server_fd(srv.s, nullptr) == fd);  // the same one
  // A correct client, and a peer with 4 PUTs in flight at once (several
  // land in one round of progress, and it says nothing more until all are
  // answered).
  std::vector<std::unique_ptr<Child>> clients;
  clients.push_back(std::make_unique<Child>(std::vector<std::string>{
      HURRAY_NET_EXAMPLE_CLIENT, "127.0.0.1", port_arg(srv), "--size", "100000", "--id", "1"}));
  clients.push_back(std::make_unique<Child>(std::vector<std::string>{
      HURRAY_NET_RAW_PEER, "window", "127.0.0.1", port_arg(srv), "4", "4"}));
  int landed = 0, missed = 0, turns = 0, pending_seen = 0;
  while (landed < 5 && missed == 0 && turns < 100000) {
    ++turns;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 20000) == 0) {
      ++missed;
      break;
    }
    if (srv.poll(0)) ++landed;  // one at a time: the rest must keep it readable
    if (srv.stats().pending > 0) {  // landed, not taken: a call would progress now
      ++pending_seen;
      pollfd now{fd, POLLIN, 0};
      CHECK(::poll(&now, 1, 0) == 1);
    }
  }
  CHECK(missed == 0);
  CHECK(landed == 5);
  INFO("turns " << turns << ", with PUTs landed and not taken " << pending_seen);
  for (auto &c : clients) {
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!c->exited() && std::chrono::steady_clock::now() < limit) {
      pollfd p{fd, POLLIN, 0};
      (void)::poll(&p, 1, 100);
      srv.poll(0);
    }
    INFO(c->output);
    CHECK(c->status == 0);
  }
}

TEST_CASE("a poll loop on hurray_net_client_fd finishes every PUT in flight", "[process][fd]") {
  Child server({HURRAY_NET_EXAMPLE_SERVER, "--port", "0", "--count", "8"});
  const uint16_t port = listening_port(server);
  hurray_error err{};
  hurray_net_client *c = connect(port, &err);
  INFO(err.message);
  REQUIRE(c != nullptr);
  const int fd = hurray_net_client_fd(c, &err);
  REQUIRE(fd >= 0);
  // Small PUTs: the server may answer several in one message (N15).
  hurray_buffer *src = cpu_buffer(65536, 3);
  std::vector<uint64_t> tickets;
  for (int i = 0; i < 8; ++i) {
    hurray_net_transfer_desc d = to(HURRAY_DEVICE_CPU, HURRAY_MEMORY_STANDARD, 10 + i);
    uint64_t t = 0;
    REQUIRE(hurray_net_client_put_buffer_start(c, src, &d, &t, &err) == HURRAY_OK);
    tickets.push_back(t);
  }
  int missed = 0, turns = 0, finished_seen = 0;
  while (!tickets.empty() && missed == 0 && turns < 100000) {
    ++turns;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 20000) == 0) {
      ++missed;
      break;
    }
    // The oldest only: the others' answers, taken by this call, must keep
    // the descriptor readable.
    int32_t done = 0;
    REQUIRE(hurray_net_client_put_test(c, tickets.front(), &done, &err) == HURRAY_OK);
    if (done) {
      CHECK(hurray_net_client_put_wait(c, tickets.front(), &err) == HURRAY_OK);
      tickets.erase(tickets.begin());
    }
    // Another finished (its answer taken already): the descriptor is
    // readable now, whatever the network does.
    bool other = false;
    for (const uint64_t t : tickets) {
      int32_t d = 0;
      REQUIRE(hurray_net_client_put_test(c, t, &d, &err) == HURRAY_OK);
      other = other || d != 0;
    }
    if (other) {
      ++finished_seen;
      pollfd now{fd, POLLIN, 0};
      CHECK(::poll(&now, 1, 0) == 1);
    }
  }
  CHECK(missed == 0);
  CHECK(tickets.empty());
  INFO("turns " << turns << ", with a PUT finished and not waited for " << finished_seen);
  hurray_buffer_unref(src);
  hurray_net_client_destroy(c);
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!server.exited() && std::chrono::steady_clock::now() < limit) usleep(10000);
  INFO(server.output);
  CHECK(server.status == 0);
}
