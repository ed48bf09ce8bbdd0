// The process's IPC descriptor budget (hurray_ipc_set_fd_budget): four
// hostile peers in real processes (hurray_ipc_raw_peer flood) each send 60
// handoffs with a descriptor, within their channel's limit of 128 but 240
// together; with a budget of 100 this process never holds more than that,
// the channels past it are refused naming the budget, every descriptor is
// back at the end, and a correct consumer is still served.
#include <hurray_ipc.h>

#include <dirent.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "peer_paths.h"
#include "../common/peer_process.h"
#include "../common/open_fds.h"
#include "../common/shareable_alloc.h"

namespace {

using hurray_test::open_fds;

hurray_ipc_stats stats_of(hurray_ipc_channel *ch) {
  hurray_ipc_stats s;
  s.size = sizeof s;
  REQUIRE(hurray_ipc_get_stats(ch, &s, nullptr) == HURRAY_OK);
  return s;
}

}  // namespace

TEST_CASE("budget: four hostile channels cannot hold more descriptors than the process's budget") {
  uint32_t before_budget = 0;
  REQUIRE(hurray_ipc_set_fd_budget(1, nullptr, nullptr) == HURRAY_E_INVALID_ARGUMENT);
  REQUIRE(hurray_ipc_set_fd_budget(100, &before_budget, nullptr) == HURRAY_OK);
  CHECK(before_budget >= 64);  // the default: half of RLIMIT_NOFILE, at least 64
  const int before = open_fds();
  {
    std::vector<std::unique_ptr<hurray_test::PeerProcess>> peers;
    for (int i = 0; i < 4; ++i)
      peers.push_back(std::make_unique<hurray_test::PeerProcess>(
          HURRAY_IPC_RAW_PEER, std::vector<std::string>{"flood", "{fd}", "60"}, nullptr));
    // each peer: its socket here, the pipe of its stdout
    const int base = open_fds();
    int most = 0, refused = 0, budget_named = 0;
    for (int round = 0; round < 25; ++round) {  // bounded: 25 x 4 x 20 ms when idle
      for (auto &p : peers) {
        if (!p->ch) continue;
        hurray_error err{};
        const hurray_status st = hurray_ipc_progress(p->ch, 20, nullptr, &err);
        const int held = open_fds() - base;
        most = held > most ? held : most;
        if (st == HURRAY_E_PROTOCOL) {
          ++refused;
          budget_named += std::strstr(err.message, "BP-IPC-LIMIT") &&
                          std::strstr(err.message, "budget of 100");
          INFO(err.message);
          CHECK(stats_of(p->ch).closed == 1);
          hurray_ipc_close(p->ch);
          p->ch = nullptr;
        }
      }
    }
    CHECK(most <= 100);   // never more than the budget
    CHECK(refused >= 1);  // 240 > 100: some channel was cut off ...
    CHECK(budget_named == refused);  // ... naming the budget
    for (auto &p : peers) {  // the others hang up; each peer sees it and exits 0
      if (p->ch) hurray_ipc_close(p->ch);
      p->ch = nullptr;
      CHECK(p->wait_exit() == 0);
    }
  }
  CHECK(open_fds() == before);  // every descriptor that came is closed
  // a correct consumer is served (it holds no queued handoff of ours)
  {
    hurray_test::PeerProcess c(HURRAY_IPC_PEER, {"consume", "{fd}", "1"}, nullptr);
    hurray_buffer *b = hurray_test::alloc_shareable(4096, HURRAY_IPC_ALIGNMENT);
    std::memset(hurray_buffer_data(b), 1, 4096);  // what the consumer checks
    REQUIRE(hurray_ipc_send(c.ch, b, nullptr, nullptr, nullptr) == HURRAY_OK);
    hurray_buffer_unref(b);
    for (int i = 0; i < 100 && stats_of(c.ch).released == 0; ++i)
      if (hurray_ipc_progress(c.ch, 100, nullptr, nullptr) != HURRAY_OK) break;
    CHECK(stats_of(c.ch).released == 1);
  }
  REQUIRE(hurray_ipc_set_fd_budget(0, nullptr, nullptr) == HURRAY_OK);  // the default again
}
