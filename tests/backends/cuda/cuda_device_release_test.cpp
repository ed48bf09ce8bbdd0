// The CUDA plugin's release_after on a real device, through libhurray's
// public API and the plugin's table: tests/gpu/cuda-check.sh runs these
// (part "release"); without a device they exit 77 (CTest: skipped).
//
//   [release] 3000 releases from 4 threads, after a gate kernel on a stream,
//             on the plugin's stream and after an event: none before the
//             test opens the gate, each exactly once after, each seeing the
//             kernel's mark; and a plugin state shut down with 200 releases
//             pending: not held up, none called, the host functions that run
//             after it harmless
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "cuda_device_util.h"
#include "release_test_util.h"

using namespace cuda_test;

// ---- [release] ------------------------------------------------------------------------

namespace {

// gate(flag, mark, limit): one thread spins until the word at flag (mapped
// pinned memory the test sets from the host) is not 0, or `limit` clock
// cycles have passed, then writes its mark: 1 (opened) or 2 (gave up).
constexpr const char *kGatePtx = R"PTX(
.version 6.0
.target sm_50
.address_size 64

.visible .entry gate(
  .param .u64 gate_flag,
  .param .u64 gate_mark,
  .param .u64 gate_limit)
{
  .reg .pred %p<3>;
  .reg .b32 %r<3>;
  .reg .b64 %rd<8>;

  ld.param.u64 %rd1, [gate_flag];
  ld.param.u64 %rd2, [gate_mark];
  ld.param.u64 %rd3, [gate_limit];
  cvta.to.global.u64 %rd4, %rd1;
  cvta.to.global.u64 %rd5, %rd2;
  mov.u32 %r2, 1;
  mov.u64 %rd6, %clock64;
SPIN:
  ld.volatile.global.u32 %r1, [%rd4];
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra OPEN;
  mov.u64 %rd7, %clock64;
  sub.s64 %rd7, %rd7, %rd6;
  setp.lt.u64 %p2, %rd7, %rd3;
  @%p2 bra SPIN;
  mov.u32 %r2, 2;
OPEN:
  st.volatile.global.u32 [%rd5], %r2;
  membar.sys;
  ret;
}
)PTX";

constexpr uint64_t kGateCycles = 60'000'000'000;  // ~30 s at 2 GHz: a failed test ends
constexpr int kReleaseWaitMs = 20000;

// Work that waits for the host: gate kernels, each on its stream, that the
// test opens with one word of mapped pinned memory; each leaves its mark in
// that memory too, which the release callbacks read.
struct Gate {
  const Cu &cu;
  Module kernel;
  volatile uint32_t *words = nullptr;  // [0]: the gate; [1 + i]: launch i's mark
  int launched = 0;
  explicit Gate(const Cu &c) : cu(c), kernel(c, kGatePtx, "gate") {
    void *p = nullptr;
    CU_OK(cu, cu.cuMemHostAlloc(&p, 4096, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
    std::memset(p, 0, 4096);
    words = static_cast<volatile uint32_t *>(p);
  }
  // A gate kernel on `stream`; returns where its mark will be.
  const volatile uint32_t *launch(CUstream stream) {
    REQUIRE(launched < 1000);
    auto flag = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(words));
    auto mark = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(words + 1 + launched));
    uint64_t limit = kGateCycles;
    void *args[] = {&flag, &mark, &limit};
    kernel.launch(1, 1, args, stream);
    return words + 1 + launched++;
  }
  void open() { __atomic_store_n(const_cast<uint32_t *>(words), 1u, __ATOMIC_SEQ_CST); }
  ~Gate() {
    open();
    cu.cuCtxSynchronize();  // no kernel still reads the words
    cu.cuMemFreeHost(const_cast<uint32_t *>(words));
  }
  Gate(const Gate &) = delete;
  Gate &operator=(const Gate &) = delete;
};

// One buffer's releases: how many, and the gate kernel's mark each saw.
struct Released {
  const volatile uint32_t *mark = nullptr;
  std::atomic<int> n{0};
  std::atomic<uint32_t> seen{0};
};
void count_release(void *user, void *) {
  auto *r = static_cast<Released *>(user);
  r->seen.store(*r->mark);
  r->n.fetch_add(1);
}

// A handoff of a wrapped opaque CUDA buffer whose release counts into r.
hurray_handoff release_counted(Released *r) {
  return release_test::wrapped_handoff(nullptr, HURRAY_DEVICE_CUDA, count_release, r);
}

bool wait_for(const std::function<bool()> &pred) {
  return hurray_test::wait_for(pred, kReleaseWaitMs);
}

// Time for a release that comes too early to show.
void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(200)); }

}  // namespace

TEST_CASE("cuda: device: release_after: 3000 releases from 4 threads, none before the kernel, "
          "each once", "[release]") {
  require_device();
  hurray_backend_native nat{};
  hurray_error err{};
  REQUIRE(hurray_device_native(nullptr, HURRAY_DEVICE_CUDA, 0, &nat, &err) == HURRAY_OK);
  int deferred = -1;
  REQUIRE(hurray_device_release_after_deferred(nullptr, HURRAY_DEVICE_CUDA, 0, &deferred, &err) ==
          HURRAY_OK);
  REQUIRE(deferred == 1);
  const Cu cu(nat.handles[4]);
  Push push(cu, nat.handles[1]);
  Gate gate(cu);
  CUstream a = nullptr;
  CU_OK(cu, cu.cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
  // Three forms, a third of the releases each: after the work queued on stream a, after the
  // plugin's stream (NULL), after an event recorded on a behind its gate kernel.
  const volatile uint32_t *mark_a = gate.launch(a);
  const volatile uint32_t *mark_plugin = gate.launch(static_cast<CUstream>(nat.handles[2]));
  hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
  REQUIRE(hurray_event_record(nullptr, HURRAY_DEVICE_CUDA, 0, a, &e, &err) == HURRAY_OK);
  REQUIRE(cu.cuStreamQuery(a) == CUDA_ERROR_NOT_READY);

  constexpr int kThreads = 4, kEach = 750;
  // Freed only on success: a failed check leaves releases that count into it later.
  auto *owned = new std::vector<Released>(kThreads * kEach);
  std::vector<Released> &rel = *owned;
  std::vector<hurray_handoff> handoffs(rel.size());
  for (size_t i = 0; i < rel.size(); ++i) {
    rel[i].mark = i % 3 == 1 ? mark_plugin : mark_a;
    handoffs[i] = release_counted(&rel[i]);
  }
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {  // the plugin makes its context current itself
      for (size_t i = static_cast<size_t>(t); i < rel.size(); i += kThreads) {
        hurray_error terr{};
        const bool event_form = i % 3 == 2;
        if (hurray_handoff_release_after(nullptr, &handoffs[i], i % 3 == 0 ? a : nullptr,
                                         event_form ? e.sync_object : nullptr, e.sync_value,
                                         &terr) != HURRAY_OK ||
            handoffs[i].release != nullptr)
          refused.fetch_add(1);
      }
    });
  for (auto &t : threads) t.join();
  REQUIRE(refused.load() == 0);
  settle();
  int early = 0;
  for (auto &r : rel) early += r.n.load();
  INFO("gate marks before opening: " << *mark_a << ", " << *mark_plugin);
  REQUIRE(early == 0);  // the gate kernels still spin: no release may have happened
  REQUIRE(*mark_a == 0);

  gate.open();
  REQUIRE(wait_for([&] {
    for (auto &r : rel)
      if (r.n.load() == 0) return false;
    return true;
  }));
  settle();
  size_t once = 0, after = 0;
  for (auto &r : rel) {
    once += r.n.load() == 1;
    after += r.seen.load() == 1;  // the kernel's mark was there when the release ran
  }
  std::printf("release: %zu releases (stream, plugin stream, event) from %d threads: %zu exactly "
              "once, %zu after the kernel's mark\n",
              rel.size(), kThreads, once, after);
  CHECK(once == rel.size());
  CHECK(after == rel.size());
  e.event_free_fn(e.event_user, e.sync_object);
  CU_OK(cu, cu.cuStreamSynchronize(a));
  cu.cuStreamDestroy(a);
  if (once == rel.size()) delete owned;
}

TEST_CASE("cuda: device: release_after: pending at shutdown, dropped, and a late completion is "
          "harmless", "[release]") {
  require_device();  // libhurray holds the primary context: it outlives the plugin state below
  auto p = std::make_unique<Probed>();
  const hurray_backend_native nat = p->native(0);
  const Cu cu(nat.handles[4]);
  Push push(cu, nat.handles[1]);
  Gate gate(cu);
  CUstream a = nullptr;
  CU_OK(cu, cu.cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
  const volatile uint32_t *mark = gate.launch(a);
  hurray_error err{};
  void *event = nullptr;
  uint64_t value = 0;
  REQUIRE(p->b->event_record(p->state, 0, a, &event, &value, &err) == HURRAY_OK);
  auto *calls = new int(0);  // done must never run: kept for a late one to find
  for (int i = 0; i < 100; ++i) {
    INFO(err.message);
    REQUIRE(p->b->release_after(p->state, 0, a, nullptr, 0, gpu_test::count_call, calls, &err) ==
            HURRAY_OK);
    REQUIRE(p->b->release_after(p->state, 0, nullptr, event, value, gpu_test::count_call, calls,
                                &err) == HURRAY_OK);
  }
  CHECK(p->b->release_after(p->state, 0, nullptr, event, 1, gpu_test::count_call, calls, &err) ==
        HURRAY_E_INVALID_ARGUMENT);  // binary events
  p->b->event_release(p->state, 0, event);
  settle();
  REQUIRE(*calls == 0);
  const auto t0 = std::chrono::steady_clock::now();
  p.reset();  // shutdown, with 200 releases pending behind the closed gate
  const auto shutdown_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::steady_clock::now() - t0)
                               .count();
  CHECK(shutdown_ms < 5000);  // not held up by the work
  gate.open();
  CU_OK(cu, cu.cuStreamSynchronize(a));
  CU_OK(cu, cu.cuCtxSynchronize());
  settle();
  std::printf("release: shutdown with 200 releases pending took %lld ms; gate mark %u; done "
              "called %d times after it\n",
              static_cast<long long>(shutdown_ms), *mark, *calls);
  CHECK(*mark == 1);
  CHECK(*calls == 0);  // dropped, and the host functions that ran late only dropped theirs
  cu.cuStreamDestroy(a);
  delete calls;
}
