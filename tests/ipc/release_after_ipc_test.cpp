// release_after over IPC between real processes (hurray_ipc_release_peer,
// release_peer.cpp, is the consumer): the consumer's RELEASE of a buffer it
// released after gated device work leaves only when that work completes,
// and a consumer SIGKILLed with the release still pending has the buffer
// reclaimed as any other (BP-IPC-RELEASE). Vulkan (lavapipe here); exit 77
// (skipped) without a Vulkan device.
#include <hurray_ipc.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "ipc_test_support.h"
#include "../common/peer_process.h"

#ifndef HURRAY_IPC_RELEASE_PEER
#error "HURRAY_IPC_RELEASE_PEER (path of hurray_ipc_release_peer) is not defined"
#endif

namespace {

// hurray_ipc_release_peer with one end of a socket pair.
struct ReleasePeer : hurray_test::PeerProcess {
  explicit ReleasePeer(const hurray_ipc_options *opts)
      : PeerProcess(HURRAY_IPC_RELEASE_PEER, {"{fd}"}, opts) {}
};

// Channel options that announce Vulkan only.
const uint8_t kVulkan[] = {HURRAY_DEVICE_VULKAN};
const hurray_ipc_options kVulkanOnly = [] {
  hurray_ipc_options o = HURRAY_IPC_OPTIONS_INIT;
  o.device_count = 1;
  o.device_tags = kVulkan;
  return o;
}();

using ipctest::Backs;     // ipc_test_support.h
using ipctest::stats_of;

// The Vulkan buffer the consumer releases after its gated work, sent.
uint64_t send_vulkan(hurray_ipc_channel *ch) {
  hurray_buffer *b = hurray_test::alloc_shareable(65536, HURRAY_IPC_ALIGNMENT, HURRAY_DEVICE_VULKAN,
                                                  HURRAY_MEMORY_UNIFIED);
  hurray_error err{};
  uint64_t id = 0;
  REQUIRE(hurray_ipc_send(ch, b, nullptr, &id, &err) == HURRAY_OK);
  hurray_buffer_unref(b);
  return id;
}

void need_vulkan() {
  int32_t n = 0;
  hurray_error err{};
  if (hurray_device_count(nullptr, HURRAY_DEVICE_VULKAN, &n, &err) != HURRAY_OK) {
    std::printf("skipped: %s\n", err.message);
    std::exit(77);
  }
}

}  // namespace

TEST_CASE("release_after: the consumer's RELEASE leaves when its device work completes",
          "[.release-after]") {
  need_vulkan();
  ReleasePeer peer(&kVulkanOnly);
  Backs backs;
  hurray_ipc_set_release_callback(peer.ch, Backs::on, &backs, nullptr);
  const uint64_t id = send_vulkan(peer.ch);
  REQUIRE(peer.signal_byte() == 'R');  // released after its gated work
  // The gate is closed: however long this side reads, no RELEASE may come.
  for (int i = 0; i < 20; ++i) REQUIRE(hurray_ipc_progress(peer.ch, 10, nullptr, nullptr) == HURRAY_OK);
  REQUIRE(backs.ids.empty());
  // "go": the consumer releases it, opens its gate, and the deferred RELEASE leaves.
  hurray_buffer *go = hurray_test::alloc_shareable(4096, HURRAY_IPC_ALIGNMENT);
  REQUIRE(hurray_ipc_send(peer.ch, go, nullptr, nullptr, nullptr) == HURRAY_OK);
  hurray_buffer_unref(go);
  for (int i = 0; i < 300 && backs.ids.size() < 2; ++i)  // at most 30 s
    if (hurray_ipc_progress(peer.ch, 100, nullptr, nullptr) != HURRAY_OK) break;
  REQUIRE(backs.ids.size() == 2);
  CHECK(backs.ids[1] == id);  // the deferred one comes back after the "go"
  for (auto r : backs.reasons) CHECK(r == HURRAY_IPC_RELEASED);
  CHECK(peer.wait_exit() == 0);
  CHECK(stats_of(peer.ch).released == 2);
}

TEST_CASE("release_after: a consumer SIGKILLed with a release pending is reclaimed",
          "[.release-after]") {
  need_vulkan();
  ReleasePeer peer(&kVulkanOnly);
  Backs backs;
  hurray_ipc_set_release_callback(peer.ch, Backs::on, &backs, nullptr);
  send_vulkan(peer.ch);
  REQUIRE(peer.signal_byte() == 'R');
  REQUIRE(kill(peer.pid, SIGKILL) == 0);
  CHECK(peer.wait_exit() == 128 + SIGKILL);
  hurray_status st = HURRAY_OK;
  for (int i = 0; i < 300 && st == HURRAY_OK; ++i) st = hurray_ipc_progress(peer.ch, 100, nullptr, nullptr);
  CHECK(st == HURRAY_E_IO);
  const hurray_ipc_stats s = stats_of(peer.ch);
  CHECK(s.reclaimed == 1);
  CHECK(s.released == 0);
  CHECK(s.outstanding == 0);
  REQUIRE(backs.reasons.size() == 1);
  CHECK(backs.reasons[0] == HURRAY_IPC_PEER_GONE);
}
