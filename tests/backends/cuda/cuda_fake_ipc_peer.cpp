// The consumer process of the IPC tests over the fake runtime
// (cuda_fake_ipc_process_test.cpp, cuda_fake_ipc_hostile_test.cpp); the
// environment points libhurray at the plugin and the plugin at the fake.
// Built for CUDA (hurray_cuda_ipc_peer) and for HIP (hurray_hip_ipc_peer,
// HURRAY_IPC_TEST_HIP: hipMalloc, hipIpcGetMemHandle, ROCM buffers).
//
//   hurray_cuda_ipc_peer FD check N OPENS MAPS  receive N buffers; buffer k must
//        hold bytes 0x10 + k (argument order); write 0xEE into the first byte of each;
//        the fake must have opened OPENS IPC memory handles (the plugin opens each
//        allocation once) and mapped MAPS VMM descriptors; release them all;
//        every handle closed and every map unmapped and released once; exit 0
//   hurray_cuda_ipc_peer FD die             receive one buffer, write 'D', and die
//        by SIGKILL holding it
//   hurray_cuda_ipc_peer FD export          cuMemAlloc 1 MiB through the driver, write
//        its 64-byte cuIpcGetMemHandle to stdout, wait until killed
// With HURRAY_CUDA_IPC_REAL=1 on a GPU (cuda-check.sh) the same, with the
// counts unchecked (a real driver has none). Exit status 0 when everything
// held; otherwise a message on stderr.
#include <dlfcn.h>
#include <hurray_ipc.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_ipc_driver.h"

namespace {

using cuda_ipc_test::kBad;
using cuda_ipc_test::kCloses;
using cuda_ipc_test::kMaps;
using cuda_ipc_test::kOpens;
using cuda_ipc_test::kUnmaps;
using cuda_ipc_test::kVmmLive;

int die(const char *what, const hurray_error *err = nullptr) {
  std::fprintf(stderr, "%s ipc peer: %s%s%s\n", cuda_ipc_test::kName, what, err ? ": " : "",
               err ? err->message : "");
  return 1;
}

int export_one(const cuda_ipc_test::Driver &cu) {
  void *p = cu.mem_alloc(size_t{1} << 20);
  cuda_ipc_test::IpcHandle h;
  if (p == nullptr || !cu.ipc_handle(p, &h)) return die("cuMemAlloc / cuIpcGetMemHandle");
  if (write(1, &h, sizeof h) != static_cast<ssize_t>(sizeof h)) return die("write");
  for (;;) pause();
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 3) return die("usage: hurray_cuda_ipc_peer FD check N OPENS MAPS | die | export");
  const std::string mode = argv[2];
  cuda_ipc_test::Driver cu;
  const char *why = nullptr;
  if (!cu.open(std::getenv(cuda_ipc_test::kLibraryEnv), &why)) return die(why);
  if (mode == "export") return export_one(cu);
  hurray_error err{};
  const hurray_ipc_options o = cuda_ipc_test::channel_options();
  hurray_ipc_channel *ch = nullptr;
  if (hurray_ipc_channel_from_fd(std::atoi(argv[1]), &o, &ch, &err) != HURRAY_OK)
    return die("channel", &err);
  if (mode == "die") {
    hurray_handoff h;
    if (hurray_ipc_receive(ch, 30000, &h, nullptr, &err) != HURRAY_OK) return die("receive", &err);
    if (write(1, "D", 1) != 1) return die("write");
    kill(getpid(), SIGKILL);
  }
  if (mode != "check" || argc < 6) return die("unknown mode");
  const int n = std::atoi(argv[3]), opens = std::atoi(argv[4]), maps = std::atoi(argv[5]);
  const std::vector<int> before = cu.counts();
  std::vector<hurray_handoff> got(static_cast<size_t>(n));
  for (int k = 0; k < n; ++k) {
    hurray_handoff &h = got[static_cast<size_t>(k)];
    if (hurray_ipc_receive(ch, 30000, &h, nullptr, &err) != HURRAY_OK) return die("receive", &err);
    if (h.handle[12] != cuda_ipc_test::kTag) return die("not a buffer of the plugin's device");
    uint64_t size = 0;
    std::memcpy(&size, h.handle, sizeof size);
    const std::vector<unsigned char> p = cu.read(h.data, size);
    if (p.size() != size) return die("cuMemcpyDtoH");
    for (uint64_t i = 0; i < size; ++i)
      if (p[i] != 0x10 + k) {
        std::fprintf(stderr, "%s ipc peer: buffer %d byte %llu is 0x%02x\n", cuda_ipc_test::kName,
                     k,
                     static_cast<unsigned long long>(i), p[i]);
        return 1;
      }
    if (!cu.fill(h.data, 0xEE, 1)) return die("cuMemcpyHtoD");
  }
  std::vector<int> after = cu.counts();
  if (cu.fake() && after[kOpens] - before[kOpens] != opens) {
    std::fprintf(stderr, "%s ipc peer: %d IPC handles opened for %d buffers, not %d\n",
                 cuda_ipc_test::kName, after[kOpens] - before[kOpens], n, opens);
    return 1;
  }
  if (cu.fake() && after[kMaps] - before[kMaps] != maps) {
    std::fprintf(stderr, "%s ipc peer: %d VMM descriptors mapped for %d buffers, not %d\n",
                 cuda_ipc_test::kName, after[kMaps] - before[kMaps], n, maps);
    return 1;
  }
  for (auto &h : got)
    if (hurray_handoff_release(&h, &err) != HURRAY_OK) return die("release", &err);
  after = cu.counts();
  int live[4] = {};
  if (cu.live_fn) cu.live_fn(live);
  if (cu.fake() && (after[kCloses] != after[kOpens] || after[kUnmaps] != after[kMaps] ||
                    after[kVmmLive] != 0 || after[kBad] != 0 || live[1] != 0 || live[2] != 0 ||
                    live[3] != 0)) {
    std::fprintf(stderr,
                 "%s ipc peer: after the releases: %d opens %d closes, %d maps %d unmaps, %d "
                 "VMM allocations alive, %d bad calls, %d/%d/%d ranges\n",
                 cuda_ipc_test::kName, after[kOpens], after[kCloses], after[kMaps],
                 after[kUnmaps], after[kVmmLive], after[kBad], live[1], live[2], live[3]);
    return 1;
  }
  hurray_ipc_close(ch);
  return 0;
}
