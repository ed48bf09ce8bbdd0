// What the batch and slot tests share (batch_test.cpp, slots_test.cpp):
// shareable 4 KiB buffers, a channel's stats, and a hostile peer process
// (hurray_ipc_batch_peer, batch_peer.cpp) whose mode breaks one rule.
#pragma once

#include <hurray_ipc.h>

#include <cstring>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "../common/open_fds.h"
#include "../common/shareable_alloc.h"
#include "ipc_test_support.h"  // stats_of
#include "../common/peer_process.h"

#ifndef HURRAY_IPC_BATCH_PEER
#error "HURRAY_IPC_BATCH_PEER (path of hurray_ipc_batch_peer) is not defined"
#endif

namespace batch_common {

// A shareable 4 KiB CPU buffer filled with `fill` (the caller's reference).
inline hurray_buffer *shareable(int fill) {
  hurray_buffer *b = hurray_test::alloc_shareable(4096, HURRAY_IPC_ALIGNMENT);
  std::memset(hurray_buffer_data(b), fill, 4096);
  return b;
}

inline hurray_ipc_stats stats(hurray_ipc_channel *ch) { return ipctest::stats_of(ch); }

struct Buffers {
  std::vector<hurray_buffer *> b;
  explicit Buffers(size_t n) {
    for (size_t i = 0; i < n; ++i) b.push_back(shareable(static_cast<int>(i & 0xFF)));
  }
  ~Buffers() {
    for (hurray_buffer *x : b) hurray_buffer_unref(x);
  }
};

// Progress on ch until it fails (10 s at most): its status, *err its error.
inline hurray_status progress_until_refused(hurray_ipc_channel *ch, hurray_error *err) {
  hurray_status st = HURRAY_OK;
  for (int i = 0; i < 100 && st == HURRAY_OK; ++i) st = hurray_ipc_progress(ch, 100, nullptr, err);
  return st;
}

// The batch peer in `mode` gets two buffers (HANDOFF_MANY), then breaks its
// rule: this side's channel closes with an error that says `says`, one
// message rejected, the two buffers reclaimed; the peer exits 0.
inline void refused_by(const char *mode, const char *says) {
  hurray_test::PeerProcess p(HURRAY_IPC_BATCH_PEER, {mode, "{fd}"}, nullptr);
  Buffers bufs(2);
  REQUIRE(hurray_ipc_send_many(p.ch, bufs.b.data(), 2, nullptr, nullptr, nullptr, nullptr) ==
          HURRAY_OK);
  hurray_error err{};
  const hurray_status st = progress_until_refused(p.ch, &err);
  INFO(err.message);
  CHECK(st == HURRAY_E_PROTOCOL);
  CHECK(std::strstr(err.message, says) != nullptr);
  const hurray_ipc_stats s = stats(p.ch);
  CHECK(s.closed == 1);
  CHECK(s.messages_rejected == 1);
  CHECK(s.outstanding == 0);  // what it sent is reclaimed
  hurray_ipc_close(p.ch);
  p.ch = nullptr;
  CHECK(p.wait_exit() == 0);
}

// Each (mode, what the error says) refused as by refused_by; after each,
// no descriptor is left of what came.
inline void all_refused(const std::vector<std::pair<const char *, const char *>> &cases) {
  const int before = hurray_test::open_fds();
  for (const auto &[mode, says] : cases) {
    INFO(mode);
    refused_by(mode, says);
    CHECK(hurray_test::open_fds() == before);
  }
}

}  // namespace batch_common
