// Flow control (docs/spec/ipc.md "Flow control"): a peer of protocol version
// 3 announces its inbox's limits in WINDOW, and this side's sends stay within
// them, so two correct peers never trip BP-IPC-LIMIT whatever the consumer's
// release pattern. The consumer is a real process (tests/ipc/ipc_peer.cpp,
// mode "window").
#include <hurray_ipc.h>

#include <string>

#include <catch2/catch.hpp>

#include "peer_process.h"

namespace {

hurray_ipc_stats stats_of(hurray_ipc_channel *ch) {
  hurray_ipc_stats s{};
  s.size = sizeof s;
  REQUIRE(hurray_ipc_get_stats(ch, &s, nullptr) == HURRAY_OK);
  return s;
}

}  // namespace

TEST_CASE("two correct peers exchange 10^5 buffers with any release pattern and never close",
          "[.flow]") {
  constexpr int kCount = 100000;
  hurray_alloc_desc d = HURRAY_ALLOC_DESC_INIT;
  d.flags = HURRAY_ALLOC_SHAREABLE;
  d.byte_size = 4096;
  d.alignment = HURRAY_IPC_ALIGNMENT;
  hurray_buffer *b = nullptr;
  REQUIRE(hurray_buffer_alloc(nullptr, &d, &b, nullptr) == HURRAY_OK);
  for (const char *batch : {"100", "0", "1"}) {  // the whole window, at random, one by one
    INFO("release batches: " << batch);
    hurray_test::PeerProcess peer(HURRAY_IPC_PEER, {"window", "{fd}", std::to_string(kCount), batch},
                                  nullptr);
    hurray_error err{};
    hurray_status st = HURRAY_OK;
    int sent = 0;
    while (sent < kCount && (st = hurray_ipc_send(peer.ch, b, nullptr, nullptr, &err)) == HURRAY_OK)
      ++sent;
    INFO(err.message);
    CHECK(st == HURRAY_OK);
    CHECK(sent == kCount);
    // the last releases, within a bounded time
    for (int i = 0; i < 600 && stats_of(peer.ch).released < static_cast<uint64_t>(sent); ++i)
      (void)hurray_ipc_progress(peer.ch, 100, nullptr, nullptr);
    const hurray_ipc_stats s = stats_of(peer.ch);
    CHECK(s.released == static_cast<uint64_t>(kCount));
    CHECK(s.reclaimed == 0);  // none taken back: the channel held until every release came
    CHECK(s.messages_rejected == 0);
    CHECK(peer.wait_exit() == 0);
  }
  hurray_buffer_unref(b);
}
