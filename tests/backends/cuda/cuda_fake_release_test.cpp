// release_after of the GPU stream driver (src/backends/gpu-stream/release.cpp)
// without a GPU: the CUDA plugin over a fake driver (fake_cuda.cpp), whose
// streams the test holds with gates. Never before the work, exactly once
// after, never on the driver's thread (whose host functions call no driver
// function), dropped at shutdown and harmless when a host function runs after
// it, and a driver without cuLaunchHostFunc waits on the host. The same code
// on a real device: tests/gpu/cuda-check.sh, part "release".
#include <cuda.h>
#include <dlfcn.h>
#include <hurray_backend.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "plugin_test_util.h"
#include "release_test_util.h"

#define FAKE(text) "cuda (stand-in: fake driver): " text

namespace {

using Clock = std::chrono::steady_clock;

// The plugin probed over a fake driver, and the fake's own functions.
struct FakeDriver {
  gpu_test::ScopedEnv env;
  std::unique_ptr<gpu_test::Probed> p;
  void *lib = nullptr;
  CUresult (*gate)(CUstream) = nullptr;
  void (*set_gates)(int) = nullptr;
  void (*drain)() = nullptr;
  int (*in_host_func)() = nullptr;
  int (*calls_from_host_funcs)() = nullptr;
  CUresult (*stream_create)(CUstream *, unsigned) = nullptr;

  explicit FakeDriver(const char *path)
      : env("HURRAY_CUDA_LIBRARY", path),
        p(std::make_unique<gpu_test::Probed>(HURRAY_CUDA_PLUGIN, "no fake driver")) {
    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);  // the plugin's, loaded already
    REQUIRE(lib != nullptr);
    find(&gate, "hurray_fake_cuda_gate");
    find(&set_gates, "hurray_fake_cuda_set_gates");
    find(&drain, "hurray_fake_cuda_drain");
    find(&in_host_func, "hurray_fake_cuda_in_host_func");
    find(&calls_from_host_funcs, "hurray_fake_cuda_calls_from_host_funcs");
    find(&stream_create, "cuStreamCreate");
    set_gates(0);
  }
  ~FakeDriver() {
    set_gates(1);
    drain();
  }
  template <class F>
  void find(F *f, const char *name) {
    *f = reinterpret_cast<F>(dlsym(lib, name));
    INFO(name);
    REQUIRE(*f != nullptr);
  }
  CUstream stream() const {
    CUstream s = nullptr;
    REQUIRE(stream_create(&s, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
    return s;
  }
  CUstream plugin_stream() const { return static_cast<CUstream>(p->native(0).handles[2]); }
  void *record(CUstream s) const {
    void *event = nullptr;
    uint64_t value = 1;
    hurray_error err{};
    REQUIRE(p->b->event_record(p->state, 0, s, &event, &value, &err) == HURRAY_OK);
    REQUIRE(value == 0);
    return event;
  }
};

// One release: how often done ran, and whether ever on a driver thread.
struct Done {
  std::atomic<int> n{0};
  std::atomic<int> on_driver_thread{0};
  int (*in_host_func)() = nullptr;
};
void count_done(void *user) {
  auto *d = static_cast<Done *>(user);
  if (d->in_host_func()) d->on_driver_thread.fetch_add(1);
  d->n.fetch_add(1);
}

template <class Pred>
bool wait_for(Pred pred) {
  return hurray_test::wait_for(pred, 10000);
}

void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(50)); }

}  // namespace

TEST_CASE(FAKE("release_after: none before the work, each once after, on the plugin's thread")) {
  FakeDriver f(HURRAY_FAKE_CUDA);
  const hurray_backend_device_info info = f.p->info(0);
  CHECK(std::string(info.detail).find("release_after") == std::string::npos);
  const CUstream a = f.stream();
  f.gate(a);
  f.gate(f.plugin_stream());
  void *event = f.record(a);  // after a's gate
  // A third each: after stream a, after the plugin's stream (NULL), after the event.
  std::vector<Done> done(900);
  hurray_error err{};
  for (size_t i = 0; i < done.size(); ++i) {
    done[i].in_host_func = f.in_host_func;
    INFO(i << ": " << err.message);
    REQUIRE(f.p->b->release_after(f.p->state, 0, i % 3 == 0 ? a : nullptr,
                                  i % 3 == 2 ? event : nullptr, 0, count_done, &done[i],
                                  &err) == HURRAY_OK);
  }
  Done refused;
  refused.in_host_func = f.in_host_func;
  CHECK(f.p->b->release_after(f.p->state, 0, nullptr, event, 1, count_done, &refused, &err) ==
        HURRAY_E_INVALID_ARGUMENT);  // binary events: value 0
  settle();
  int early = 0;
  for (const Done &d : done) early += d.n.load();
  REQUIRE(early == 0);
  f.set_gates(1);
  REQUIRE(wait_for([&] {
    for (const Done &d : done)
      if (d.n.load() == 0) return false;
    return true;
  }));
  f.drain();
  settle();
  int once = 0, on_driver = 0;
  for (const Done &d : done) {
    once += d.n.load() == 1;
    on_driver += d.on_driver_thread.load();
  }
  CHECK(once == 900);
  CHECK(on_driver == 0);                     // done runs on the plugin's worker
  CHECK(f.calls_from_host_funcs() == 0);     // the host function calls no driver function
  CHECK(refused.n.load() == 0);
  f.p->b->event_release(f.p->state, 0, event);
}

namespace {

// A done that defers one more release from the worker thread.
struct Again {
  const hurray_backend_v1 *b;
  void *state;
  CUstream stream;
  Done first, second;
  std::atomic<int> status{-1};
};
void release_again(void *user) {
  auto *a = static_cast<Again *>(user);
  count_done(&a->first);
  a->status.store(a->b->release_after(a->state, 0, a->stream, nullptr, 0, count_done,
                                      &a->second, nullptr));
}

}  // namespace

TEST_CASE(FAKE("release_after: a done that releases after again, from the worker")) {
  FakeDriver f(HURRAY_FAKE_CUDA);
  Again again{f.p->b, f.p->state, f.stream(), {}, {}};
  again.first.in_host_func = again.second.in_host_func = f.in_host_func;
  f.set_gates(1);
  hurray_error err{};
  REQUIRE(f.p->b->release_after(f.p->state, 0, again.stream, nullptr, 0, release_again, &again,
                                &err) == HURRAY_OK);
  REQUIRE(wait_for([&] { return again.second.n.load() == 1; }));
  CHECK(again.status.load() == HURRAY_OK);
  CHECK(again.first.n.load() == 1);
}

TEST_CASE(FAKE("release_after: pending at shutdown, dropped, and late host functions are "
               "harmless")) {
  FakeDriver f(HURRAY_FAKE_CUDA);
  const CUstream a = f.stream();  // the test's: the plugin does not wait for it at shutdown
  f.gate(a);
  void *event = f.record(a);
  std::vector<Done> done(200);
  hurray_error err{};
  for (size_t i = 0; i < done.size(); ++i) {
    done[i].in_host_func = f.in_host_func;
    REQUIRE(f.p->b->release_after(f.p->state, 0, i % 2 ? a : nullptr, i % 2 ? nullptr : event,
                                  0, count_done, &done[i], &err) == HURRAY_OK);
  }
  f.p->b->event_release(f.p->state, 0, event);
  settle();
  const auto t0 = Clock::now();
  f.p.reset();  // shutdown with every release pending behind the closed gate
  CHECK(Clock::now() - t0 < std::chrono::seconds(2));
  f.set_gates(1);  // now the host functions run, after shutdown
  f.drain();
  settle();
  int called = 0;
  for (const Done &d : done) called += d.n.load();
  CHECK(called == 0);
}

TEST_CASE(FAKE("release_after: a driver without cuLaunchHostFunc waits on the host, then "
               "releases")) {
  FakeDriver f(HURRAY_FAKE_CUDA_OLD);
  const hurray_backend_device_info info = f.p->info(0);
  CHECK(std::string(info.detail).find("; release_after: host wait (no cuLaunchHostFunc)") !=
        std::string::npos);
  const CUstream a = f.stream();
  for (const bool event_form : {false, true}) {
    INFO((event_form ? "after an event" : "after the stream"));
    f.set_gates(0);
    f.gate(a);
    void *event = event_form ? f.record(a) : nullptr;
    std::thread opener([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      f.set_gates(1);
    });
    Done d;
    d.in_host_func = f.in_host_func;
    hurray_error err{};
    const auto t0 = Clock::now();
    const hurray_status st = f.p->b->release_after(f.p->state, 0, event_form ? nullptr : a,
                                                   event, 0, count_done, &d, &err);
    const auto waited = Clock::now() - t0;
    const int at_return = d.n.load();
    opener.join();
    INFO(err.message);
    CHECK(st == HURRAY_OK);
    CHECK(at_return == 1);  // done ran before the entry returned
    CHECK(waited >= std::chrono::milliseconds(150));  // and only once the gate had opened
    if (event != nullptr) f.p->b->event_release(f.p->state, 0, event);
  }
}
