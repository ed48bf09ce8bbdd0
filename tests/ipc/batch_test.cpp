// Batches (protocol version 4): hurray_ipc_send_many and
// hurray_ipc_release_many between two channels, the window applied per
// handoff, an old peer (version 3) served one by one, and hostile peers in
// real processes (hurray_ipc_batch_peer, batch_peer.cpp) that break the
// batch messages: each is refused with the rule, no descriptor stays, and
// this side still serves another channel.
#include <hurray_ipc.h>

#include <dirent.h>
#include <sys/socket.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "../common/ipc_local_pair.h"
#include "../common/open_fds.h"
#include "batch_common.h"
#include "../common/peer_process.h"
#ifndef HURRAY_IPC_PEER
#error "HURRAY_IPC_PEER (path of hurray_ipc_test_peer) is not defined"
#endif

namespace {

using hurray_test::open_fds;

using batch_common::Buffers;
using batch_common::shareable;
using batch_common::stats;

bool has(const hurray_error &e, const char *what) { return std::strstr(e.message, what); }

// Progress until every sent buffer is back, or 10 s.
void until_back(hurray_ipc_channel *ch) {
  for (int i = 0; i < 1000 && stats(ch).outstanding; ++i)
    if (hurray_ipc_progress(ch, 10, nullptr, nullptr) != HURRAY_OK) break;
}

// This process still serves another channel (a consumer process gets a
// buffer and releases it).
void serves_another() {
  hurray_test::PeerProcess c(HURRAY_IPC_PEER, {"consume", "{fd}", "1"}, nullptr);
  hurray_buffer *b = shareable(1);
  REQUIRE(hurray_ipc_send(c.ch, b, nullptr, nullptr, nullptr) == HURRAY_OK);
  hurray_buffer_unref(b);
  until_back(c.ch);
  CHECK(stats(c.ch).released == 1);
  hurray_ipc_close(c.ch);
  c.ch = nullptr;
  CHECK(c.wait_exit() == 0);
}

}  // namespace

TEST_CASE("batch: send_many and release_many carry 200 buffers both ways") {
  hurray_ipc_channel *a = nullptr, *c = nullptr;
  hurray_test::local_pair(&a, &c);
  hurray_ipc_peer_info info;
  info.size = sizeof info;
  REQUIRE(hurray_ipc_peer(a, &info, nullptr) == HURRAY_OK);
  CHECK(info.protocol_version == 5);
  Buffers bufs(200);
  std::vector<uint64_t> ids(200);
  size_t sent = 0;
  hurray_status st = HURRAY_E_INTERNAL;
  // 200 > the window of 128: the sender waits for the consumer's releases
  std::thread producer([&] {
    st = hurray_ipc_send_many(a, bufs.b.data(), bufs.b.size(), nullptr, ids.data(), &sent, nullptr);
  });
  std::vector<hurray_handoff> got;
  for (int i = 0; i < 200; ++i) {
    hurray_handoff h;
    uint64_t id = 0;
    REQUIRE(hurray_ipc_receive(c, 10000, &h, &id, nullptr) == HURRAY_OK);
    CHECK(static_cast<const unsigned char *>(h.data)[0] == static_cast<unsigned char>(id - 1));
    got.push_back(h);
    if (got.size() == 50) {  // released in parts, 50 at a time
      REQUIRE(hurray_ipc_release_many(got.data(), got.size(), nullptr) == HURRAY_OK);
      got.clear();
    }
  }
  REQUIRE(hurray_ipc_release_many(got.data(), got.size(), nullptr) == HURRAY_OK);
  producer.join();
  CHECK(st == HURRAY_OK);
  CHECK(sent == 200);
  for (size_t i = 0; i < 200; ++i) CHECK(ids[i] == i + 1);
  until_back(a);
  const hurray_ipc_stats s = stats(a);
  CHECK(s.sent == 200);
  CHECK(s.released == 200);
  CHECK(s.closed == 0);
  CHECK(stats(c).releases_sent == 200);
  hurray_ipc_close(a);
  hurray_ipc_close(c);
}

TEST_CASE("batch: a window smaller than a batch lets it through in parts") {
  int sv[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
  hurray_ipc_options o = HURRAY_IPC_OPTIONS_INIT;
  o.max_queued = 5;  // the consumer's window: 5 handoffs
  hurray_ipc_channel *a = nullptr, *c = nullptr;
  std::thread t([&] { REQUIRE(hurray_ipc_channel_from_fd(sv[1], &o, &c, nullptr) == HURRAY_OK); });
  REQUIRE(hurray_ipc_channel_from_fd(sv[0], nullptr, &a, nullptr) == HURRAY_OK);
  t.join();
  Buffers bufs(23);
  size_t sent = 0;
  hurray_status st = HURRAY_E_INTERNAL;
  std::thread producer(
      [&] { st = hurray_ipc_send_many(a, bufs.b.data(), 23, nullptr, nullptr, &sent, nullptr); });
  int received = 0;
  hurray_handoff h[5];
  while (received < 23) {
    int k = 0;  // what is there, 5 at most (the consumer never holds more)
    while (k < 5 && hurray_ipc_receive(c, k ? 0 : 10000, &h[k], nullptr, nullptr) == HURRAY_OK)
      ++k;
    REQUIRE(k > 0);
    received += k;
    REQUIRE(hurray_ipc_release_many(h, static_cast<size_t>(k), nullptr) == HURRAY_OK);
  }
  producer.join();
  CHECK(st == HURRAY_OK);
  CHECK(sent == 23);
  CHECK(stats(c).closed == 0);
  hurray_ipc_close(a);
  hurray_ipc_close(c);
}

TEST_CASE("batch: send_many checks every buffer and says how many went") {
  hurray_ipc_channel *a = nullptr, *c = nullptr;
  hurray_test::local_pair(&a, &c);
  Buffers bufs(3);
  hurray_buffer *list[4] = {bufs.b[0], bufs.b[1], nullptr, bufs.b[2]};
  size_t sent = 9;
  uint64_t ids[4] = {7, 7, 7, 7};
  hurray_error err{};
  CHECK(hurray_ipc_send_many(a, list, 4, nullptr, ids, &sent, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(sent == 0);
  CHECK(ids[0] == 0);
  // an unshareable buffer in the batch: nothing of it goes
  hurray_alloc_desc d = HURRAY_ALLOC_DESC_INIT;
  d.byte_size = 4096;
  d.alignment = HURRAY_IPC_ALIGNMENT;
  hurray_buffer *plain = nullptr;
  REQUIRE(hurray_buffer_alloc(nullptr, &d, &plain, nullptr) == HURRAY_OK);
  list[2] = plain;
  CHECK(hurray_ipc_send_many(a, list, 4, nullptr, ids, &sent, &err) == HURRAY_E_UNSUPPORTED);
  CHECK(sent == 0);
  CHECK(stats(a).sent == 0);
  CHECK(hurray_ipc_send_many(a, list, 0, nullptr, nullptr, nullptr, nullptr) == HURRAY_OK);
  CHECK(hurray_ipc_release_many(nullptr, 0, nullptr) == HURRAY_OK);
  hurray_buffer_unref(plain);
  hurray_ipc_close(a);
  hurray_ipc_close(c);
}

TEST_CASE("batch: a peer of version 4 gets HANDOFF_MANY, one of version 3 one HANDOFF each") {
  for (const char *mode : {"good", "v3-count"}) {
    INFO(mode);
    hurray_test::PeerProcess p(HURRAY_IPC_BATCH_PEER, {mode, "{fd}", "130"}, nullptr);
    Buffers bufs(130);
    size_t sent = 0;
    hurray_error err{};
    REQUIRE(hurray_ipc_send_many(p.ch, bufs.b.data(), 130, nullptr, nullptr, &sent, &err) ==
            HURRAY_OK);
    CHECK(sent == 130);
    until_back(p.ch);
    CHECK(stats(p.ch).released == 130);
    std::string out(16, '\0');
    const ssize_t r = read(p.out, &out[0], out.size());
    out.resize(r > 0 ? static_cast<size_t>(r) : 0);
    if (std::string(mode) == "good")
      CHECK(out == "H0/M3");  // 64 + 64 + 2
    else
      CHECK(out == "H130/M0");
    hurray_ipc_close(p.ch);
    p.ch = nullptr;
    CHECK(p.wait_exit() == 0);
  }
}

TEST_CASE("batch: a bad HANDOFF_MANY or RELEASE_MANY is refused with its rule, no descriptor kept") {
  batch_common::all_refused({
      {"fds-short", "HANDOFF_MANY announces 2 descriptors, its entries' handles 3"},
      {"truncated", "HANDOFF_MANY entry 2: truncated"},
      {"dup", "HANDOFF_MANY entry 1: id 1 again"},
      {"count65", "HANDOFF_MANY of 65 handoffs"},
      {"over-window", "BP-IPC-LIMIT: 128 handoffs with 128 descriptors are queued unreceived (at most 128 and 128) counting the HANDOFF_MANY's entries"},
      {"release-unknown", "BP-REL-ONCE: RELEASE_MANY id 1 (999999)"},
      {"release-dup", "again (id 0; BP-REL-ONCE)"},
      {"v3-many", "BP-IPC-HELLO: HANDOFF_MANY from a peer that does not send it"},
  });
  serves_another();
}

TEST_CASE("batch: a HANDOFF_MANY past the process's descriptor budget is refused") {
  REQUIRE(hurray_ipc_set_fd_budget(70, nullptr, nullptr) == HURRAY_OK);
  const int before = open_fds();
  {
    // 64 handoffs fit the budget of 70, the next 50 do not (the channel's own limit: 128)
    hurray_test::PeerProcess p(HURRAY_IPC_BATCH_PEER, {"over-window", "{fd}"}, nullptr);
    Buffers bufs(1);
    REQUIRE(hurray_ipc_send(p.ch, bufs.b[0], nullptr, nullptr, nullptr) == HURRAY_OK);
    hurray_error err{};
    const hurray_status st = batch_common::progress_until_refused(p.ch, &err);
    INFO(err.message);
    CHECK(st == HURRAY_E_PROTOCOL);
    CHECK(has(err, "BP-IPC-LIMIT: 50 more descriptors do not fit the process's IPC descriptor "
                   "budget of 70 (64 held"));
    hurray_ipc_close(p.ch);
    p.ch = nullptr;
    CHECK(p.wait_exit() == 0);
  }
  CHECK(open_fds() == before);
  REQUIRE(hurray_ipc_set_fd_budget(0, nullptr, nullptr) == HURRAY_OK);
}
