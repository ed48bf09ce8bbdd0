// What only the HIP plugin checks before it uses virtual memory management
// (src/backends/hip/vmm.cpp, gpu-stream/runtime_vmm.cpp), over the fake HIP
// runtime (fake_hip.cpp) and the plugin's table: SHAREABLE memory is VMM memory only where
// HURRAY_HIP_SHAREABLE=vmm; a runtime of another major version than the
// header's (hipMemAllocationProp is laid out differently) or a granularity
// that is no power of two means no VMM at all: SHAREABLE memory is then
// hipMalloc memory that crosses as an IPC memory handle, and a VMM
// descriptor that arrives is refused; a mapping the runtime does not open to
// the device is undone (unmapped, its range freed, the memory released). The
// cases the CUDA plugin shares are
// cuda_fake_ipc_*_test.cpp, built again for HIP.
#include <fcntl.h>
#include <hip/hip_version.h>
#include <hurray_backend.h>
#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "../../src/backends/kit/ipc.h"
#include "cuda_ipc_driver.h"
#include "plugin_test_util.h"

namespace {

using namespace cuda_ipc_test;

// The plugin over the fake with HURRAY_HIP_SHAREABLE=shareable, and the fake
// answering HURRAY_FAKE_HIP_MAJOR=major, HURRAY_FAKE_HIP_GRANULARITY=granularity
// (nullptr: the variable unset).
struct Plugin {
  gpu_test::ScopedEnv env{kLibraryEnv, HURRAY_GPU_IPC_FAKE};
  gpu_test::ScopedEnv vmm, major, granularity;
  gpu_test::Probed p;
  Plugin(const char *shareable, const char *major_version, const char *granularity_bytes)
      : vmm(kShareableEnv, shareable),
        major("HURRAY_FAKE_HIP_MAJOR", major_version),
        granularity("HURRAY_FAKE_HIP_GRANULARITY", granularity_bytes),
        p(HURRAY_GPU_IPC_PLUGIN, "no fake runtime") {}

  // The kind and descriptor of a SHAREABLE allocation's export (and it freed).
  std::pair<uint32_t, bool> shareable_export() {
    hurray_error err{};
    hurray_backend_allocation mem{};
    const hurray_status st = p.b->alloc(p.state, 0, HURRAY_MEMORY_STANDARD, 1 << 20, 4096,
                                        HURRAY_ALLOC_SHAREABLE, &mem, &err);
    INFO(err.message);
    REQUIRE(st == HURRAY_OK);
    hurray_backend_ipc_handle h{};
    REQUIRE(p.b->ipc_export_memory(p.state, &mem, &h, &err) == HURRAY_OK);
    const bool fd = h.fd >= 0;
    if (fd) close(h.fd);
    p.b->free(p.state, &mem);
    return {h.kind, fd};
  }
  bool says_vmm() const {
    return std::string(p.info(0).detail).find("VMM descriptors") != std::string::npos;
  }
};

std::string other_major() { return std::to_string(HIP_VERSION_MAJOR + 1); }

}  // namespace

TEST_CASE(FAKE("SHAREABLE memory is VMM memory with HURRAY_HIP_SHAREABLE=vmm only"), "[fake]") {
  {
    Plugin pl("vmm", nullptr, nullptr);
    CHECK(pl.says_vmm());
    CHECK(pl.shareable_export() == std::pair<uint32_t, bool>{kVmmKind, true});
  }
  Plugin pl(nullptr, nullptr, nullptr);
  CHECK(pl.says_vmm());  // VMM memory it is handed still crosses as descriptors
  CHECK(pl.shareable_export() == std::pair<uint32_t, bool>{kMemoryKind, false});
}

TEST_CASE(FAKE("no VMM with a runtime of another major version or an odd granularity"),
          "[fake]") {
  const std::string major = other_major();
  for (auto [m, g] : {std::pair<const char *, const char *>{major.c_str(), nullptr},
                      {nullptr, "3145728"}, {nullptr, "0"}}) {
    INFO("HURRAY_FAKE_HIP_MAJOR " << (m ? m : "unset") << ", HURRAY_FAKE_HIP_GRANULARITY "
                                  << (g ? g : "unset"));
    Plugin pl("vmm", m, g);
    CHECK_FALSE(pl.says_vmm());
    // SHAREABLE memory by hipMalloc, exported as an IPC memory handle
    CHECK(pl.shareable_export() == std::pair<uint32_t, bool>{kMemoryKind, false});
    // and a VMM descriptor that arrives is refused before the runtime sees it
    const uint64_t size = 2 << 20;
    hurray_backend_ipc_handle h{};
    hurray::kit::pack_ipc(kVmmKind, &size, sizeof size, 4096, 0, &h);
    h.fd = memfd_create("fake-cuda-vmm", MFD_CLOEXEC);
    REQUIRE(h.fd >= 0);
    hurray_backend_allocation in{};
    hurray_error err{};
    CHECK(pl.p.b->ipc_import_memory(pl.p.state, 0, &h, HURRAY_MEMORY_STANDARD, &in, &err) ==
          HURRAY_E_UNSUPPORTED);
    CHECK(std::string(err.message).find("cannot import VMM memory") != std::string::npos);
    close(h.fd);
  }
}

TEST_CASE(FAKE("a VMM mapping that cannot be opened to the device is undone"), "[fake]") {
  Plugin pl("vmm", nullptr, nullptr);
  Driver rt;
  const char *why = nullptr;
  INFO("the runtime for the test: " << (why ? why : ""));
  REQUIRE(rt.open(HURRAY_GPU_IPC_FAKE, &why));
  const std::vector<int> before = rt.counts();
  gpu_test::ScopedEnv no_access("HURRAY_FAKE_HIP_NO_ACCESS", "1");
  hurray_error err{};
  hurray_backend_allocation mem{};
  CHECK(pl.p.b->alloc(pl.p.state, 0, HURRAY_MEMORY_STANDARD, 1 << 20, 4096,
                      HURRAY_ALLOC_SHAREABLE, &mem, &err) == HURRAY_E_UNSUPPORTED);
  CHECK(std::string(err.message).find("hipMemSetAccess") != std::string::npos);
  const std::vector<int> after = rt.counts();
  CHECK(after[kCreates] - before[kCreates] == 1);
  CHECK(after[kMaps] - before[kMaps] == 1);
  CHECK(after[kUnmaps] - before[kUnmaps] == 1);  // the map undone
  CHECK(after[kVmmLive] == before[kVmmLive]);    // and the memory released
  CHECK(after[kBad] == before[kBad]);
  int live[4] = {};
  rt.live_fn(live);
  CHECK(live[3] == 0);  // no range left reserved
}
