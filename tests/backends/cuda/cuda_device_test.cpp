// The CUDA plugin on a real device, through libhurray's public API and the
// plugin's table; tests/gpu/cuda-check.sh runs these on a machine with an
// NVIDIA GPU. Every test but the first needs a device: without one it prints
// the reason and exits with 77 (CTest: skipped, never passed).
//
//   [api]     hurray_device_count(0x01) counts devices, or says why not
//   [classes] all four memory classes: allocated, classified by the driver
//             (cuPointerGetAttributes) and by the plugin, matched against
//             the class asked for; an absent class (PEER on one GPU) must be
//             refused with the reason
//   [event]   an EVENT handoff between two streams: a PTX kernel writes the
//             data on stream A, hurray_event_record on A, the consumer
//             acquires on stream B and copies on B: it sees the kernel's data
//   [ipc]     two processes: the parent exports device memory and an
//             interprocess event through the plugin's ipc functions and
//             sends them over a socketpair; the child (this program, run
//             again: CUDA does not survive fork) imports both, waits on the
//             event, reads the bytes back and reports
//   [release] release_after (cuda_device_release_test.cpp)
//
// What the device tests share is in cuda_device_util.h.
#include <cuda.h>
#include <dlfcn.h>
#include <hurray.h>
#include <hurray_backend.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "buffer_calls.h"
#include "cuda_device_util.h"

using namespace cuda_test;

namespace {

// ---- the kernel ---------------------------------------------------------------------

// fill(out, n, seed, spin): thread i spins for `spin` clock cycles (so that a
// consumer that did not wait would read too early), then writes
// out[i] = i * 2654435761 + seed (mod 2^32). -1640531535 is 2654435761 as s32.
constexpr const char *kFillPtx = R"PTX(
.version 6.0
.target sm_50
.address_size 64

.visible .entry fill(
  .param .u64 fill_out,
  .param .u32 fill_n,
  .param .u32 fill_seed,
  .param .u64 fill_spin)
{
  .reg .pred %p<3>;
  .reg .b32 %r<9>;
  .reg .b64 %rd<9>;

  ld.param.u64 %rd1, [fill_out];
  ld.param.u32 %r1, [fill_n];
  ld.param.u32 %r2, [fill_seed];
  ld.param.u64 %rd2, [fill_spin];
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r4, %ntid.x;
  mov.u32 %r5, %tid.x;
  mad.lo.s32 %r6, %r3, %r4, %r5;
  setp.ge.u32 %p1, %r6, %r1;
  @%p1 bra DONE;
  mov.u64 %rd3, %clock64;
SPIN:
  mov.u64 %rd4, %clock64;
  sub.s64 %rd5, %rd4, %rd3;
  setp.lt.u64 %p2, %rd5, %rd2;
  @%p2 bra SPIN;
  mul.lo.s32 %r7, %r6, -1640531535;
  add.s32 %r8, %r7, %r2;
  cvta.to.global.u64 %rd6, %rd1;
  mul.wide.u32 %rd7, %r6, 4;
  add.s64 %rd8, %rd6, %rd7;
  st.global.u32 [%rd8], %r8;
DONE:
  ret;
}
)PTX";

uint32_t fill_value(uint32_t i, uint32_t seed) { return i * 2654435761u + seed; }

constexpr uint32_t kElements = 1u << 20;      // 4 MiB of u32
constexpr uint64_t kSpinCycles = 20'000'000;  // ~10 ms per wave at 2 GHz

struct Kernel : Module {
  explicit Kernel(const Cu &c) : Module(c, kFillPtx, "fill") {}
  void launch(CUdeviceptr out, uint32_t n, uint32_t seed, uint64_t spin, CUstream stream) const {
    void *args[] = {&out, &n, &seed, &spin};
    Module::launch((n + 255) / 256, 256, args, stream);
  }
};

size_t count_mismatches(const std::vector<uint32_t> &v, uint32_t seed, uint32_t *first_bad) {
  size_t bad = 0;
  for (uint32_t i = 0; i < v.size(); ++i)
    if (v[i] != fill_value(i, seed)) {
      if (bad++ == 0) *first_bad = i;
    }
  return bad;
}

}  // namespace

// ---- [api] ------------------------------------------------------------------------

TEST_CASE("cuda: public API: hurray_device_count(0x01) counts devices or says why not", "[api]") {
  int32_t n = -1;
  hurray_error err{};
  const hurray_status st = hurray_device_count(nullptr, HURRAY_DEVICE_CUDA, &n, &err);
  std::printf("hurray_device_count(0x01): %s, %d device(s)%s%s\n", hurray_status_name(st), n,
              st != HURRAY_OK ? ": " : "", st != HURRAY_OK ? err.message : "");
  dlerror();
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const std::string why = dlerror();
    CHECK(st == HURRAY_E_DEVICE_UNAVAILABLE);
    CHECK(n == 0);
    CHECK(std::string(err.message) == "device_tag 0x01 CUDA is unavailable: cuda: " + why);
  } else if (st == HURRAY_OK) {
    CHECK(n >= 1);
  } else {
    CHECK(st == HURRAY_E_DEVICE_UNAVAILABLE);
    CHECK(std::string(err.message).find("device_tag 0x01 CUDA is unavailable: cuda: [cu") == 0);
  }
  // release_after is deferred to the device's completion where there is a device (the
  // driver has cuLaunchHostFunc); without one the query is refused the same way.
  int deferred = -1;
  hurray_error derr{};
  const hurray_status dst =
      hurray_device_release_after_deferred(nullptr, HURRAY_DEVICE_CUDA, 0, &deferred, &derr);
  CHECK(dst == st);
  CHECK(deferred == (st == HURRAY_OK ? 1 : 0));
  if (st != HURRAY_OK) CHECK(std::string(derr.message) == err.message);
  // The report says the same.
  std::vector<char> report(hurray_backend_report(nullptr, nullptr, 0) + 1);
  hurray_backend_report(nullptr, report.data(), report.size());
  CHECK(std::string(report.data()).find("device_tag 0x01 CUDA") != std::string::npos);
  if (st != HURRAY_OK) CHECK(std::string(report.data()).find("cuda: ") != std::string::npos);
}

// ---- [classes] ----------------------------------------------------------------------

TEST_CASE("cuda: device: four memory classes, classified by cuPointerGetAttributes", "[classes]") {
  Probed p;
  std::string summary;
  for (int32_t dev = 0; dev < p.count(); ++dev) {
    const hurray_backend_device_info info = p.info(dev);
    const hurray_backend_native nat = p.native(dev);
    const Cu cu(nat.handles[4]);
    const auto cu_dev = static_cast<CUdevice>(reinterpret_cast<uintptr_t>(nat.handles[0]));
    summary += "device " + std::to_string(dev) + " '" + info.name + "':";
    for (uint8_t mc = 0; mc <= HURRAY_MEMORY_PEER; ++mc) {
      INFO("device " << dev << " class " << gpu_test::class_name(mc));
      hurray_error err{};
      if (!(info.memory_classes & (1u << mc))) {
        hurray_backend_allocation a{};
        CHECK(p.b->alloc(p.state, dev, mc, 4096, 4096, 0, &a, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
        CHECK(std::strlen(err.message) > 0);
        summary += std::string(" ") + gpu_test::class_name(mc) + " refused (" + err.message + ")";
        continue;
      }
      const uint64_t size = (1u << 20) + 123;
      gpu_test::AllocGuard g{p, p.alloc(dev, mc, size, 65536)};
      REQUIRE(reinterpret_cast<uintptr_t>(g.a.data) % 65536 == 0);
      // What the driver says the memory is.
      uint64_t type = 0, managed = 0, ordinal = 0;
      CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                     CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                     CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
      void *values[] = {&type, &managed, &ordinal};
      {
        Push push(cu, nat.handles[1]);
        CU_OK(cu, cu.cuPointerGetAttributes(
                      3, attrs, values,
                      static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(g.a.data))));
      }
      type &= 0xffffffffu;
      const bool is_managed = (managed & 0xffffffffu) != 0;
      const auto owner = static_cast<int>(static_cast<int32_t>(static_cast<uint32_t>(ordinal)));
      INFO("cuPointerGetAttributes: memory type " << type << ", managed " << is_managed
                                                  << ", device ordinal " << owner);
      switch (mc) {
        case HURRAY_MEMORY_STANDARD:
        case HURRAY_MEMORY_PEER:
          CHECK(type == CU_MEMORYTYPE_DEVICE);
          CHECK_FALSE(is_managed);
          CHECK(owner == cu_dev);
          break;
        case HURRAY_MEMORY_HOST_PINNED:
          CHECK(type == CU_MEMORYTYPE_HOST);
          CHECK_FALSE(is_managed);
          CHECK(g.a.host == g.a.data);
          break;
        default:
          CHECK(is_managed);
          CHECK(g.a.host == g.a.data);
          break;
      }
      // What the plugin says, and the bytes round trip.
      int32_t cdev = -1;
      uint8_t cmc = 0xFF;
      REQUIRE(p.b->classify(p.state, g.a.data, &cdev, &cmc, &err) == HURRAY_OK);
      CHECK(cdev == dev);
      CHECK(cmc == mc);
      const auto in = gpu_test::pattern(static_cast<size_t>(size), mc);
      std::vector<unsigned char> out(in.size());
      REQUIRE(p.b->copy_from_host(p.state, &g.a, 0, in.data(), size, &err) == HURRAY_OK);
      REQUIRE(p.b->copy_to_host(p.state, &g.a, 0, out.data(), size, &err) == HURRAY_OK);
      CHECK(out == in);
      summary += std::string(" ") + gpu_test::class_name(mc) + " ok";
    }
    summary += ";";
  }
  std::printf("classes: %s\n", summary.c_str());
}

// ---- [event] ---------------------------------------------------------------------------

TEST_CASE("cuda: device: EVENT handoff between two streams, a PTX kernel writes the data",
          "[event]") {
  const int32_t n_dev = require_device();
  for (int32_t dev = 0; dev < n_dev; ++dev) {
    INFO("device " << dev);
    hurray_backend_native nat{};
    hurray_error err{};
    REQUIRE(hurray_device_native(nullptr, HURRAY_DEVICE_CUDA, dev, &nat, &err) == HURRAY_OK);
    const Cu cu(nat.handles[4]);
    Push push(cu, nat.handles[1]);
    const Kernel kernel(cu);
    CUstream a = nullptr, b = nullptr;
    CU_OK(cu, cu.cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
    CU_OK(cu, cu.cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));

    const hurray_alloc_desc desc = hurray_test::alloc_desc(
        uint64_t{kElements} * 4, 4096, HURRAY_DEVICE_CUDA, HURRAY_MEMORY_STANDARD, dev);
    hurray_buffer *buf = nullptr;
    REQUIRE(hurray_buffer_alloc(nullptr, &desc, &buf, &err) == HURRAY_OK);
    const std::vector<uint32_t> zeros(kElements, 0);
    REQUIRE(hurray_buffer_copy_from_host(buf, 0, zeros.data(), desc.byte_size, &err) == HURRAY_OK);
    const auto out_ptr =
        static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(hurray_buffer_data(buf)));

    // Producer: the kernel on stream A, then the event after it.
    kernel.launch(out_ptr, kElements, 1234, kSpinCycles, a);
    const bool still_running = cu.cuStreamQuery(a) == CUDA_ERROR_NOT_READY;
    hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
    REQUIRE(hurray_event_record(nullptr, HURRAY_DEVICE_CUDA, dev, a, &e, &err) == HURRAY_OK);
    hurray_handoff h;
    REQUIRE(hurray_buffer_export(buf, &e, &h, &err) == HURRAY_OK);
    CHECK(hurray_handoff_check(&h, nullptr, &err) == HURRAY_OK);

    // Consumer: stream B waits for the event, then copies on B.
    REQUIRE(hurray_handoff_acquire(nullptr, &h, b, &err) == HURRAY_OK);
    CHECK(h.release_event == nullptr);
    std::vector<uint32_t> out(kElements, 0xDEADBEEF);
    CU_OK(cu, cu.cuMemcpyDtoHAsync(out.data(), reinterpret_cast<CUdeviceptr>(h.data),
                                   out.size() * 4, b));
    CU_OK(cu, cu.cuStreamSynchronize(b));
    uint32_t first_bad = 0;
    const size_t bad = count_mismatches(out, 1234, &first_bad);
    INFO(bad << " mismatches, the first at " << first_bad << ": " << out[first_bad]
             << " instead of " << fill_value(first_bad, 1234));
    CHECK(bad == 0);
    std::printf(
        "event: device %d: %u values written by the kernel on stream A, read on stream B "
        "after the handoff (%s when the event was recorded): %zu wrong\n",
        dev, kElements, still_running ? "kernel still running" : "kernel already done", bad);
    if (!still_running) WARN("the kernel had finished before the event was recorded");

    REQUIRE(hurray_handoff_release(&h, &err) == HURRAY_OK);
    hurray_buffer_unref(buf);
    CU_OK(cu, cu.cuStreamSynchronize(a));
    cu.cuStreamDestroy(a);
    cu.cuStreamDestroy(b);
  }
}

// ---- [ipc] -------------------------------------------------------------------------------

namespace {

constexpr uint32_t kIpcMagic = 0x48495043;  // "HIPC"
constexpr uint32_t kIpcSeed = 77;

struct IpcRequest {
  uint32_t magic;
  int32_t device;
  uint32_t elements;
  uint32_t seed;
  hurray_backend_ipc_handle memory;
  hurray_backend_ipc_handle event;
};

struct IpcReply {
  uint32_t magic;
  int32_t status;  // 0: every value as the kernel wrote it
  uint64_t mismatches;
  char message[512];
};

bool write_all(int fd, const void *p, size_t n) {
  const auto *c = static_cast<const char *>(p);
  while (n > 0) {
    const ssize_t w = write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// Read n bytes, waiting at most timeout_ms for each chunk.
bool read_all(int fd, void *p, size_t n, int timeout_ms) {
  auto *c = static_cast<char *>(p);
  while (n > 0) {
    pollfd pfd{fd, POLLIN, 0};
    const int ready = poll(&pfd, 1, timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    const ssize_t r = read(fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// The child: a fresh process that imports what the parent exported.
int ipc_child(int fd) {
  alarm(120);  // never outlive a stuck parent
  IpcReply reply{};
  reply.magic = kIpcMagic;
  reply.status = 1;
  auto answer = [&](int status, const char *fmt, const char *detail) {
    reply.status = status;
    std::snprintf(reply.message, sizeof reply.message, fmt, detail);
    return write_all(fd, &reply, sizeof reply) ? status : 3;
  };
  IpcRequest req{};
  if (!read_all(fd, &req, sizeof req, 60000) || req.magic != kIpcMagic)
    return answer(2, "child: %s", "no request from the parent");
  void *lib = dlopen(HURRAY_CUDA_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return answer(2, "child: dlopen: %s", dlerror());
  auto entry = reinterpret_cast<hurray_backend_entry_fn>(dlsym(lib, HURRAY_BACKEND_ENTRY_SYMBOL));
  const hurray_backend_v1 *b = entry != nullptr ? entry() : nullptr;
  if (b == nullptr) return answer(2, "child: %s", "no plugin table");
  void *state = nullptr;
  hurray_error err{};
  if (b->probe(&state, &err) != HURRAY_OK) return answer(2, "child: probe: %s", err.message);
  void *event = nullptr;
  hurray_backend_allocation mem{};
  int status = 0;
  std::string msg;
  if (b->ipc_import_event(state, req.device, &req.event, &event, &err) != HURRAY_OK) {
    status = 2;
    msg = std::string("ipc_import_event: ") + err.message;
  } else if (b->ipc_import_memory(state, req.device, &req.memory, HURRAY_MEMORY_STANDARD, &mem,
                                  &err) != HURRAY_OK) {
    status = 2;
    msg = std::string("ipc_import_memory: ") + err.message;
  } else if (b->event_wait(state, req.device, event, 0, nullptr, &err) != HURRAY_OK) {
    status = 2;
    msg = std::string("event_wait: ") + err.message;
  } else {
    std::vector<uint32_t> out(req.elements, 0xDEADBEEF);
    if (b->copy_to_host(state, &mem, 0, out.data(), out.size() * 4, &err) != HURRAY_OK) {
      status = 2;
      msg = std::string("copy_to_host: ") + err.message;
    } else {
      uint32_t first_bad = 0;
      reply.mismatches = count_mismatches(out, req.seed, &first_bad);
      status = reply.mismatches == 0 ? 0 : 1;
      char line[256];
      std::snprintf(line, sizeof line,
                    "child %d: imported %" PRIu64 " bytes at offset %" PRIu64
                    " and the event, waited, read back: %" PRIu64 " wrong value(s)",
                    static_cast<int>(getpid()), req.memory.byte_size, req.memory.offset,
                    reply.mismatches);
      msg = line;
    }
  }
  if (mem.plugin_data != nullptr) b->free(state, &mem);
  if (event != nullptr) b->event_release(state, req.device, event);
  b->shutdown(state);
  return answer(status, "%s", msg.c_str());
}

}  // namespace

TEST_CASE("cuda: device: two processes share device memory and an event over IPC", "[ipc]") {
  Probed p;
  const int32_t dev = 0;
  const hurray_backend_device_info info = p.info(dev);
  INFO("device_info.ipc 0x" << std::hex << info.ipc);
  REQUIRE((info.ipc & HURRAY_BACKEND_IPC_MEMORY) != 0);
  REQUIRE((info.ipc & HURRAY_BACKEND_IPC_EVENTS) != 0);
  const hurray_backend_native nat = p.native(dev);
  const Cu cu(nat.handles[4]);
  hurray_error err{};

  // Device memory, aligned for IPC (BP-ALIGN-IPC), written by the kernel:
  // cuMemAlloc memory (not SHAREABLE, which is VMM memory where the device
  // has it, whose descriptor this test's socketpair does not carry; the
  // "[ipc-vmm]" tests send it over libhurray's channel).
  gpu_test::AllocGuard g{p, p.alloc(dev, HURRAY_MEMORY_STANDARD, uint64_t{kElements} * 4, 4096,
                                    0)};
  const std::vector<uint32_t> zeros(kElements, 0);
  REQUIRE(p.b->copy_from_host(p.state, &g.a, 0, zeros.data(), g.a.byte_size, &err) == HURRAY_OK);
  void *event = nullptr;
  uint64_t value = 0;
  {
    Push push(cu, nat.handles[1]);
    const Kernel kernel(cu);
    kernel.launch(static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(g.a.data)), kElements,
                  kIpcSeed, kSpinCycles, static_cast<CUstream>(nat.handles[2]));
    // The plugin's stream (NULL) is where the kernel runs.
    REQUIRE(p.b->event_record(p.state, dev, nullptr, &event, &value, &err) == HURRAY_OK);
    IpcRequest req{};
    req.magic = kIpcMagic;
    req.device = dev;
    req.elements = kElements;
    req.seed = kIpcSeed;
    REQUIRE(p.b->ipc_export_memory(p.state, &g.a, &req.memory, &err) == HURRAY_OK);
    INFO(err.message);
    REQUIRE(p.b->ipc_export_event(p.state, dev, event, &req.event, &err) == HURRAY_OK);

    int sv[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    std::fflush(nullptr);
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      close(sv[0]);
      const std::string arg = "--hurray-ipc-child=" + std::to_string(sv[1]);
      execl("/proc/self/exe", "hurray_cuda_device_tests", arg.c_str(),
            static_cast<char *>(nullptr));
      _exit(127);
    }
    close(sv[1]);
    const bool sent = write_all(sv[0], &req, sizeof req);
    IpcReply reply{};
    const bool answered = sent && read_all(sv[0], &reply, sizeof reply, 90000);
    close(sv[0]);
    int wstatus = 0;
    if (!answered) kill(pid, SIGKILL);
    waitpid(pid, &wstatus, 0);
    std::printf("ipc: %s\n", answered ? reply.message : "the child did not answer");
    REQUIRE(sent);
    REQUIRE(answered);
    INFO(reply.message);
    CHECK(reply.magic == kIpcMagic);
    CHECK(reply.status == 0);
    CHECK(reply.mismatches == 0);
    CHECK(WIFEXITED(wstatus));
    CHECK(WEXITSTATUS(wstatus) == 0);
    CU_OK(cu, cu.cuStreamSynchronize(static_cast<CUstream>(nat.handles[2])));
  }
  p.b->event_release(p.state, dev, event);
}

int main(int argc, char **argv) {
  constexpr const char *kChild = "--hurray-ipc-child=";
  if (argc == 2 && std::strncmp(argv[1], kChild, std::strlen(kChild)) == 0)
    return ipc_child(std::atoi(argv[1] + std::strlen(kChild)));
  return Catch::Session().run(argc, argv);
}
