// What a hostile or broken producer can hand the CUDA (or, built with
// HURRAY_IPC_TEST_HIP, the HIP) plugin's ipc_import_memory (the memory part
// of a HANDOFF, as src/ipc/receive.cpp passes it), over the fake driver: an offset or size outside the exported
// allocation (VMM descriptor and IPC memory handle), a descriptor of the
// wrong kind, a handle kind with a descriptor it does not take, one without
// the descriptor it needs. Each is refused with nothing left opened, mapped
// or imported; and a handle of another process opened twice here is opened
// once. The plugin is used through its table; the producer of the IPC
// memory handle is a process of its own (cuda_fake_ipc_peer.cpp, "export").
#include <dlfcn.h>
#include <fcntl.h>
#include <hurray_backend.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "../../src/backends/kit/ipc.h"
#include "cuda_ipc_checks.h"
#include "cuda_ipc_driver.h"
#include "plugin_test_util.h"

namespace {

using namespace cuda_ipc_test;

// The plugin over the fake, SHAREABLE memory by VMM.
struct Plugin {
  gpu_test::ScopedEnv env{kLibraryEnv, HURRAY_GPU_IPC_FAKE};
  gpu_test::ScopedEnv vmm{kShareableEnv, kShareableVmm};
  gpu_test::Probed p{HURRAY_GPU_IPC_PLUGIN, "no fake runtime"};
  void *lib = dlopen(HURRAY_GPU_IPC_FAKE, RTLD_NOW | RTLD_LOCAL);

  std::vector<int> counts() {
    std::vector<int> c(8);
    auto f = reinterpret_cast<void (*)(int *)>(dlsym(lib, "hurray_fake_cuda_memory_counts"));
    REQUIRE(f != nullptr);
    f(c.data());
    return c;
  }
  hurray_status import(const hurray_backend_ipc_handle &h, hurray_backend_allocation *out,
                       hurray_error *err) {
    *out = {};
    return p.b->ipc_import_memory(p.state, 0, &h, HURRAY_MEMORY_STANDARD, out, err);
  }
};

// A process of its own that allocates 1 MiB and writes its IPC memory handle.
struct Exporter {
  pid_t pid = -1;
  IpcHandle handle{};
  Exporter() {
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      dup2(fds[1], 1);
      execl(HURRAY_GPU_IPC_PEER, HURRAY_GPU_IPC_PEER, "-1", "export", nullptr);
      _exit(127);
    }
    close(fds[1]);
    size_t got = 0;
    while (got < sizeof handle) {
      const ssize_t n = read(fds[0], reinterpret_cast<char *>(&handle) + got, sizeof handle - got);
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    close(fds[0]);
    REQUIRE(got == sizeof handle);
  }
  ~Exporter() {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
};

hurray_backend_ipc_handle legacy(const IpcHandle &h, uint64_t size, uint64_t offset) {
  hurray_backend_ipc_handle out;
  hurray::kit::pack_ipc(kMemoryKind, &h, sizeof h, size, offset, &out);
  return out;
}

}  // namespace

TEST_CASE(FAKE("an IPC memory handle: opened once per process, refused outside its block"),
          "[fake]") {
  Plugin pl;
  Exporter ex;
  const std::vector<int> before = pl.counts();
  hurray_error err{};
  hurray_backend_allocation a{}, b{}, bad{};
  const uint64_t mib = 1 << 20;
  SECTION("an offset past the block, and a size that runs past it") {
    for (auto h : {legacy(ex.handle, 4096, mib), legacy(ex.handle, 4096, mib - 100),
                   legacy(ex.handle, mib + 1, 0), legacy(ex.handle, 4096, ~uint64_t{0} - 10)}) {
      CHECK(pl.import(h, &bad, &err) == HURRAY_E_INVALID_ARGUMENT);
      CHECK(std::string(err.message).find("do not fit") != std::string::npos);
    }
    const std::vector<int> after = pl.counts();
    CHECK(after[kOpens] - before[kOpens] == 4);  // each opened to be measured, then closed
    CHECK(after[kCloses] - before[kCloses] == 4);
  }
  SECTION("two buffers of one allocation: one open, closed with the last") {
    REQUIRE(pl.import(legacy(ex.handle, 4096, 0), &a, &err) == HURRAY_OK);
    REQUIRE(pl.import(legacy(ex.handle, 4096, 65536), &b, &err) == HURRAY_OK);
    CHECK(static_cast<char *>(b.data) - static_cast<char *>(a.data) == 65536);
    CHECK(pl.counts()[kOpens] - before[kOpens] == 1);
    pl.p.b->free(pl.p.state, &a);
    CHECK(pl.counts()[kCloses] - before[kCloses] == 0);
    pl.p.b->free(pl.p.state, &b);
    CHECK(pl.counts()[kCloses] - before[kCloses] == 1);
  }
  SECTION("a memory handle that comes with a descriptor") {
    hurray_backend_ipc_handle h = legacy(ex.handle, 4096, 0);
    h.fd = memfd_create("stray", MFD_CLOEXEC);
    CHECK(pl.import(h, &bad, &err) == HURRAY_E_INVALID_ARGUMENT);
    close(h.fd);
    CHECK(pl.counts()[kOpens] == before[kOpens]);
  }
  CHECK(pl.counts()[kBad] == before[kBad]);
}

TEST_CASE(FAKE("a VMM descriptor: refused outside its allocation, or of the wrong kind"),
          "[fake]") {
  Plugin pl;
  const std::vector<int> before = pl.counts();
  hurray_error err{};
  hurray_backend_allocation mem{}, bad{};
  // VMM memory of this plugin (SHAREABLE), exported as a descriptor
  REQUIRE(pl.p.b->alloc(pl.p.state, 0, HURRAY_MEMORY_STANDARD, 3 << 20, 4096,
                        HURRAY_ALLOC_SHAREABLE, &mem, &err) == HURRAY_OK);
  hurray_backend_ipc_handle h{};
  REQUIRE(pl.p.b->ipc_export_memory(pl.p.state, &mem, &h, &err) == HURRAY_OK);
  CHECK(h.kind == kVmmKind);
  REQUIRE(h.fd >= 0);
  uint64_t vmm_size = 0;
  std::memcpy(&vmm_size, h.bytes, sizeof vmm_size);
  CHECK(vmm_size == 4 << 20);  // rounded up to the 2 MiB granularity
  const std::vector<int> exported = pl.counts();
  SECTION("offsets and sizes outside the allocation") {
    for (auto [size, offset] : {std::pair<uint64_t, uint64_t>{4096, vmm_size},
                                {4096, vmm_size - 100}, {vmm_size + 1, 0},
                                {4096, ~uint64_t{0} - 10}, {0, 0}}) {
      hurray_backend_ipc_handle x = h;
      x.byte_size = size;
      x.offset = offset;
      CHECK(pl.import(x, &bad, &err) == HURRAY_E_INVALID_ARGUMENT);
    }
    hurray_backend_ipc_handle x = h;  // an allocation size that is no multiple of it
    const uint64_t odd = vmm_size + 4096;
    std::memcpy(x.bytes, &odd, sizeof odd);
    CHECK(pl.import(x, &bad, &err) == HURRAY_E_INVALID_ARGUMENT);
  }
  SECTION("a descriptor of the wrong kind: another memfd, a pipe, none") {
    hurray_backend_ipc_handle x = h;
    x.fd = memfd_create("not-vmm", MFD_CLOEXEC);
    REQUIRE(ftruncate(x.fd, 4 << 20) == 0);
    CHECK(pl.import(x, &bad, &err) != HURRAY_OK);
    CHECK(std::string(err.message).find(kVmmImport) != std::string::npos);
    close(x.fd);
    int p[2];
    REQUIRE(pipe(p) == 0);
    x.fd = p[0];
    CHECK(pl.import(x, &bad, &err) == HURRAY_E_INVALID_ARGUMENT);
    CHECK(std::string(err.message).find("not a memory descriptor") != std::string::npos);
    close(p[0]);
    close(p[1]);
    x.fd = -1;
    CHECK(pl.import(x, &bad, &err) == HURRAY_E_INVALID_ARGUMENT);
    CHECK(std::string(err.message).find("came without") != std::string::npos);
  }
  SECTION("the descriptor under a memory handle's kind") {
    hurray_backend_ipc_handle x = h;
    x.kind = kMemoryKind;
    CHECK(pl.import(x, &bad, &err) == HURRAY_E_INVALID_ARGUMENT);
  }
  SECTION("a good import maps it; its free unmaps and releases it once") {
    hurray_backend_allocation in{};
    hurray_backend_ipc_handle x = h;
    x.byte_size = 4096;
    x.offset = 8192;
    REQUIRE(pl.import(x, &in, &err) == HURRAY_OK);
    CHECK(static_cast<char *>(in.data) != static_cast<char *>(mem.data) + 8192);  // a new range
    static_cast<char *>(mem.data)[8192] = 0x5a;
    CHECK(static_cast<char *>(in.data)[0] == 0x5a);  // the same memory
    CHECK(pl.counts()[kImports] - exported[kImports] == 1);
    pl.p.b->free(pl.p.state, &in);
    const std::vector<int> after = pl.counts();
    CHECK(after[kUnmaps] - exported[kUnmaps] == 1);
    CHECK(after[kVmmLive] == exported[kVmmLive]);
  }
  const std::vector<int> refused = pl.counts();
  CHECK(refused[kMaps] - exported[kMaps] == refused[kUnmaps] - exported[kUnmaps]);
  CHECK(refused[kVmmLive] == exported[kVmmLive]);  // nothing imported is left
  close(h.fd);
  pl.p.b->free(pl.p.state, &mem);
  check_nothing_left(before, pl.counts());
}

TEST_CASE(FAKE("ipc_export_pointer: a range past its allocation, unknown memory, host classes"),
          "[fake]") {
  Plugin pl;
  Driver rt;
  const char *why = nullptr;
  INFO("the runtime for the test: " << (why ? why : ""));
  REQUIRE(rt.open(HURRAY_GPU_IPC_FAKE, &why));
  auto *m = static_cast<unsigned char *>(rt.mem_alloc(65536));
  REQUIRE(m != nullptr);
  hurray_error err{};
  hurray_backend_ipc_handle h{};
  auto exp = [&](uint8_t mc, const void *data, uint64_t n) {
    return pl.p.b->ipc_export_pointer(pl.p.state, 0, mc, data, n, &h, &err);
  };
  // inside: the allocation's handle at the pointer's offset
  REQUIRE(exp(HURRAY_MEMORY_STANDARD, m + 4096, 8192) == HURRAY_OK);
  CHECK(h.kind == kMemoryKind);
  CHECK(h.offset == 4096);
  CHECK(h.byte_size == 8192);
  CHECK(h.fd == -1);
  // running past the end of the allocation that holds it
  CHECK(exp(HURRAY_MEMORY_STANDARD, m + 61440, 8192) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(std::string(err.message).find("run past the end") != std::string::npos);
  // memory the driver does not know
  static unsigned char host[4096];
  CHECK(exp(HURRAY_MEMORY_STANDARD, host, sizeof host) == HURRAY_E_INVALID_ARGUMENT);
  // host-visible classes are not exported by IPC memory handles
  CHECK(exp(HURRAY_MEMORY_HOST_PINNED, m, 4096) == HURRAY_E_UNSUPPORTED);
  CHECK(exp(HURRAY_MEMORY_STANDARD, m, 0) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(rt.mem_free(m));
}
