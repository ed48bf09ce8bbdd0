// A hostile producer of CUDA VMM memory in a process of its own that speaks
// the IPC wire format itself (cuda_fake_wire_peer.cpp), against this
// process as an ordinary consumer (hurray_ipc_receive, the CUDA plugin over
// the fake driver; built again for HIP, HURRAY_IPC_TEST_HIP): each bad
// HANDOFF of cuda_wire_cases.h is refused with HURRAY_E_INVALID_ARGUMENT naming BP-IPC-DEVMEM, given back, its descriptor
// closed and nothing of it left imported or mapped; the channel stays open
// and the correct HANDOFF after them arrives, reads and is released. Fake
// driver only (the peer maps the fake's VMM memfd to fill it).
#include <dirent.h>
#include <hurray.h>
#include <hurray_ipc.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_ipc_driver.h"
#include "cuda_wire_cases.h"
#include "peer_process.h"
#include "../../common/buffer_calls.h"
#include "../../common/open_fds.h"

namespace {

using hurray_test::open_fds;

// libhurray's plugin loaded and probed (its descriptors are not the
// test's): a buffer of its device made and freed.
void load_plugin() {
  using namespace hurray_test;
  hurray_buffer_unref(alloc(alloc_desc(4096, 4096, cuda_ipc_test::kTag)));
}

}  // namespace

TEST_CASE(FAKE("a wire peer's bad VMM HANDOFFs refused (BP-IPC-DEVMEM), the channel serves on"),
          "[wire]") {
  using namespace cuda_wire_test;
  if (cuda_ipc_test::real_device()) {
    WARN("not run on a device: the wire peer fills the fake driver's VMM memfd");
    return;
  }
  setenv("HURRAY_BACKEND_PATH", HURRAY_GPU_IPC_PLUGIN_DIR, 1);
  setenv("HURRAY_BACKENDS", cuda_ipc_test::kBackends, 1);
  setenv(cuda_ipc_test::kLibraryEnv, HURRAY_GPU_IPC_FAKE, 1);
  cuda_ipc_test::Driver cu;
  const char *why = nullptr;
  INFO("the fake runtime: " << (why ? why : ""));
  REQUIRE(cu.open(HURRAY_GPU_IPC_FAKE, &why));
  load_plugin();
  const std::vector<int> before = cu.counts();
  const int fds = open_fds();
  {
    const hurray_ipc_options o = cuda_ipc_test::channel_options();
    hurray_test::PeerProcess peer(HURRAY_GPU_IPC_WIRE_PEER, {"{fd}"}, &o);
    for (int k = 0; k < kBadCount; ++k) {
      hurray_handoff h{};
      hurray_error err{};
      const hurray_status st = hurray_ipc_receive(peer.ch, 10000, &h, nullptr, &err);
      INFO(kBad[k].name << ": " << err.message);
      CHECK(st == HURRAY_E_INVALID_ARGUMENT);
      CHECK(std::strncmp(err.message, "BP-IPC-DEVMEM: ", 15) == 0);
      CHECK(std::string(err.message).find(kBad[k].says) != std::string::npos);
      if (st == HURRAY_OK) hurray_ipc_release(&h, nullptr);
    }
    hurray_handoff h{};
    hurray_error err{};
    hurray_test::require_ok(hurray_ipc_receive(peer.ch, 10000, &h, nullptr, &err), err);
    const std::vector<unsigned char> got = cu.read(h.data, kGoodSize);
    CHECK(got == std::vector<unsigned char>(kGoodSize, 0x5A));
    CHECK(cu.fill(h.data, 0xEE, 1));
    CHECK(hurray_ipc_release(&h, &err) == HURRAY_OK);
    CHECK(peer.signal_byte() == 'K');  // every HANDOFF given back, the write seen
    hurray_ipc_stats s;
    s.size = sizeof s;
    REQUIRE(hurray_ipc_get_stats(peer.ch, &s, nullptr) == HURRAY_OK);
    CHECK(s.received == static_cast<uint64_t>(kBadCount) + 1);
    hurray_ipc_close(peer.ch);
    peer.ch = nullptr;
    CHECK(peer.wait_exit() == 0);
  }
  CHECK(open_fds() == fds);  // every descriptor that came is closed
  const std::vector<int> after = cu.counts();
  CHECK(after[cuda_ipc_test::kVmmLive] == before[cuda_ipc_test::kVmmLive]);
  CHECK(after[cuda_ipc_test::kMaps] - before[cuda_ipc_test::kMaps] == 1);  // the correct one
  CHECK(after[cuda_ipc_test::kUnmaps] - before[cuda_ipc_test::kUnmaps] == 1);
  CHECK(after[cuda_ipc_test::kBad] == before[cuda_ipc_test::kBad]);
}
