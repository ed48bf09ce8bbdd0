// GPU memory across processes through libhurray's public API, over the
// fake runtime (fake_cuda_memory.cpp; HIP: fake_hip.cpp over it), with a
// consumer process of its own (cuda_fake_ipc_peer.cpp): pieces of one
// allocation the caller made (hurray_buffer_wrap, and a view of one) opened
// once by the consumer; VMM memory made by hurray_buffer_alloc(SHAREABLE)
// and the caller's own VMM memory crossing as file descriptors; a consumer
// that dies holding imported VMM memory. Built for the CUDA plugin and again
// for the HIP plugin (HURRAY_IPC_TEST_HIP, cuda_ipc_driver.h). On a GPU the
// same tests run with HURRAY_CUDA_IPC_REAL=1 (the fake's counts unchecked):
// tests/gpu/cuda-check.sh, part "ipc-wrapped-vmm".
#include <dlfcn.h>
#include <hurray.h>
#include <hurray_ipc.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bounded_wait.h"
#include "cuda_ipc_checks.h"
#include "cuda_ipc_driver.h"
#include "peer_process.h"
#include "../../common/shareable_alloc.h"

namespace {

using namespace cuda_ipc_test;
using hurray_test::view;

// libhurray finds the plugin, and the plugin the fake runtime, in this
// process and in the peer (which inherits the environment); SHAREABLE memory
// is VMM memory. With HURRAY_CUDA_IPC_REAL=1 (cuda-check.sh), the machine's.
const bool g_env = [] {
  setenv("HURRAY_BACKEND_PATH", HURRAY_GPU_IPC_PLUGIN_DIR, 1);
  setenv("HURRAY_BACKENDS", kBackends, 1);
  if (!real_device()) setenv(kLibraryEnv, HURRAY_GPU_IPC_FAKE, 1);
  shareable_by_vmm();
  return true;
}();

// The runtime the test uses itself (the plugin's: one dlopen of one path).
struct Cu : Driver {
  Cu() {
    const char *why = nullptr;
    INFO("the runtime for the test: " << (why ? why : ""));
    REQUIRE(open(HURRAY_GPU_IPC_FAKE, &why));
  }
};

hurray_buffer *wrap(void *data, uint64_t size) {
  hurray_buffer_desc d = HURRAY_BUFFER_DESC_INIT;
  d.handle.byte_size = size;
  d.handle.alignment = 4096;
  d.handle.device_tag = kTag;
  d.handle.memory_class = HURRAY_MEMORY_STANDARD;
  d.data = data;
  return hurray_test::wrap(d);
}

// SHAREABLE STANDARD memory of device 0 (VMM memory where it can be).
hurray_buffer *shareable(uint64_t size) {
  return hurray_test::alloc_shareable(size, 4096, kTag, HURRAY_MEMORY_STANDARD);
}

void send(hurray_ipc_channel *ch, hurray_buffer *b) {
  hurray_error err{};
  hurray_test::require_ok(hurray_ipc_send(ch, b, nullptr, nullptr, &err), err);
}

hurray_ipc_stats stats_of(hurray_ipc_channel *ch) {
  hurray_ipc_stats s;
  s.size = sizeof s;
  REQUIRE(hurray_ipc_get_stats(ch, &s, nullptr) == HURRAY_OK);
  return s;
}

// Run the peer in mode "check" over the buffers (buffer k holds 0x10 + k),
// which must open `opens` IPC memory handles and map `maps` VMM descriptors:
// it exits 0 and every buffer comes back released.
void check_peer(const std::vector<hurray_buffer *> &bufs, int opens, int maps) {
  const hurray_ipc_options o = channel_options();
  hurray_test::PeerProcess peer(HURRAY_GPU_IPC_PEER,
                                {"{fd}", "check", std::to_string(bufs.size()),
                                 std::to_string(opens), std::to_string(maps)},
                                &o);
  for (hurray_buffer *b : bufs) send(peer.ch, b);
  CHECK(hurray_test::wait_for([&] {
    hurray_ipc_progress(peer.ch, 10, nullptr, nullptr);
    return stats_of(peer.ch).released == bufs.size();
  }));
  CHECK(peer.wait_exit() == 0);
}

}  // namespace

TEST_CASE(FAKE("pieces of one allocation the caller made cross as one opened handle"),
          "[process]") {
  Cu cu;
  auto *m = static_cast<unsigned char *>(cu.mem_alloc(size_t{1} << 20));
  REQUIRE(m != nullptr);
  const uint64_t at[] = {0, 64 << 10, 512 << 10};
  std::vector<hurray_buffer *> bufs;
  for (int k = 0; k < 3; ++k) {
    REQUIRE(cu.fill(m + at[k], static_cast<unsigned char>(0x10 + k), 8192));
    bufs.push_back(wrap(m + at[k], 8192));
  }
  REQUIRE(cu.fill(m + 768 * 1024 + 4096, 0x13, 4096));
  hurray_buffer *whole = wrap(m + 768 * 1024, 3 * 4096);
  bufs.push_back(view(whole, 4096, 4096));  // a view of a wrapped buffer
  const std::vector<int> before = cu.counts();
  check_peer(bufs, 1, 0);  // four buffers of one allocation: one IPC handle opened
  for (int k = 0; k < 3; ++k) CHECK(cu.at(m + at[k]) == 0xEE);  // the consumer's writes
  CHECK(cu.at(m + 768 * 1024 + 4096) == 0xEE);
  CHECK(cu.counts()[kBad] == before[kBad]);
  for (hurray_buffer *b : bufs) hurray_buffer_unref(b);
  hurray_buffer_unref(whole);
  CHECK(cu.mem_free(m));
}

TEST_CASE(FAKE("hurray_buffer_alloc(SHAREABLE) makes VMM memory, which crosses as descriptors"),
          "[process]") {
  Cu cu;
  const std::vector<int> before = cu.counts();
  hurray_buffer *b = shareable(3 << 20);
  if (cu.fake()) CHECK(cu.counts()[kCreates] == before[kCreates] + 1);  // cuMemCreate, hipMemCreate
  auto *m = static_cast<unsigned char *>(hurray_buffer_data(b));
  REQUIRE(cu.fill(m, 0x10, 1 << 20));
  REQUIRE(cu.fill(m + (1 << 20), 0x11, 1 << 20));
  hurray_buffer *v = view(b, 1 << 20, 1 << 20);
  hurray_buffer *first = view(b, 0, 1 << 20);
  check_peer({first, v}, 0, 2);  // two descriptors, each mapped and unmapped once
  CHECK(cu.at(m) == 0xEE);
  CHECK(cu.at(m + (1 << 20)) == 0xEE);
  hurray_buffer_unref(v);
  hurray_buffer_unref(first);
  hurray_buffer_unref(b);
  const std::vector<int> after = cu.counts();
  CHECK(after[kVmmLive] == before[kVmmLive]);  // unmapped and released here too
  CHECK(after[kUnmaps] - before[kUnmaps] == after[kMaps] - before[kMaps]);
  CHECK(after[kBad] == before[kBad]);
}

TEST_CASE(FAKE("VMM memory the caller made (its VMM calls, wrapped) crosses as a descriptor"),
          "[process]") {
  Cu cu;
  const std::vector<int> before = cu.counts();
  VmmMemory vmm;
  REQUIRE(cu.vmm_make(&vmm));
  auto *m = static_cast<unsigned char *>(host(vmm.base));
  std::memset(m + 8192, 0x10, 4096);
  hurray_buffer *b = wrap(m + 8192, 4096);
  check_peer({b}, 0, 1);
  CHECK(m[8192] == 0xEE);
  hurray_buffer_unref(b);
  CHECK(cu.vmm_free(vmm));
  check_nothing_left(before, cu.counts());
}

TEST_CASE(FAKE("a consumer that dies holding imported VMM memory: the producer gets it back"),
          "[process]") {
  Cu cu;
  const std::vector<int> before = cu.counts();
  hurray_buffer *b = shareable(1 << 20);
  REQUIRE(cu.fill(hurray_buffer_data(b), 0x10, 1 << 20));
  {
    const hurray_ipc_options o = channel_options();
    hurray_test::PeerProcess peer(HURRAY_GPU_IPC_PEER, {"{fd}", "die"}, &o);
    send(peer.ch, b);
    CHECK(peer.signal_byte() == 'D');
    CHECK(peer.wait_exit() == 128 + SIGKILL);
    CHECK(hurray_test::wait_for([&] {
      hurray_ipc_progress(peer.ch, 10, nullptr, nullptr);
      return stats_of(peer.ch).outstanding == 0;
    }));
  }
  hurray_buffer_unref(b);  // the last reference: unmapped and released once
  const std::vector<int> after = cu.counts();
  CHECK(after[kVmmLive] == before[kVmmLive]);
  CHECK(after[kUnmaps] - before[kUnmaps] == after[kMaps] - before[kMaps]);
  CHECK(after[kBad] == before[kBad]);
}
