// hurray_handoff_release_after on the devices here: the release never
// happens before the device work it was given (the order is observed from
// the device's side: the work waits on a gate the test opens from the host
// later), happens exactly once afterwards (many buffers in flight, from
// many threads), the fallback of a backend without the entry waits on the
// host, and guard mode reports a deferred release whose work never completes
// (BP-REL-DEFER). Every wait is bounded (kWaitMs); a device that is absent
// exits 77 (skipped).
#include <catch2/catch.hpp>

#include <hurray.h>
#include <hurray_backend.h>

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <CL/cl.h>

#include "bounded_wait.h"
#include "vulkan_gate.h"

#include "release_test_util.h"

namespace {

// One counter per buffer: how many times its memory was released.
struct Counter {
  std::atomic<int> n{0};
};
void count_free(void *user, void *) { static_cast<Counter *>(user)->n.fetch_add(1); }

// A handoff of a wrapped opaque buffer of `tag` whose release calls
// free_fn(user, user).
hurray_handoff wrap_handoff(hurray_context *ctx, uint8_t tag, void *user,
                            void (*free_fn)(void *, void *)) {
  return release_test::wrapped_handoff(ctx, tag, free_fn, user);
}

// ... whose release counts into c.
hurray_handoff make_handoff(hurray_context *ctx, uint8_t tag, Counter *c) {
  return wrap_handoff(ctx, tag, c, count_free);
}

using hurray_test::settle;
using hurray_test::wait_for;
using hurray_test::wait_for_each;

// A context whose policy allows the private device tag (the example
// plugin's 0xF0).
hurray_context *private_tag_context(uint8_t tag) {
  hurray_context *ctx = nullptr;
  hurray_policy *pol = nullptr;
  hurray_error err{};
  INFO(err.message);
  REQUIRE(hurray_context_create(&ctx, &err) == HURRAY_OK);
  REQUIRE(hurray_policy_create(&pol, &err) == HURRAY_OK);
  REQUIRE(hurray_policy_allow_private_tag(pol, tag, 1, &err) == HURRAY_OK);
  REQUIRE(hurray_context_set_policy(ctx, pol, &err) == HURRAY_OK);
  hurray_policy_destroy(pol);
  return ctx;
}

void need_device(uint8_t tag) {
  int32_t n = 0;
  hurray_error err{};
  if (hurray_device_count(nullptr, tag, &n, &err) != HURRAY_OK || n < 1) {
    std::printf("skipped: device 0x%02x unavailable: %s\n", tag, err.message);
    std::fflush(stdout);
    std::_Exit(77);
  }
}

// ---- Vulkan: a queue submission that waits on a host-signalled gate ----

struct VkGate : hurray_test::VkGateBase {
  VkGate() {
    need_device(HURRAY_DEVICE_VULKAN);
    hurray_error err{};
    const char *failed = close(&err);
    INFO((failed ? failed : "") << ": " << err.message);
    REQUIRE(failed == nullptr);
  }
  void open() { REQUIRE(VkGateBase::open()); }
};

// ---- OpenCL: a marker on the plugin's queue gated by a user event ----

struct ClGate {
  cl_command_queue queue = nullptr;
  cl_event user = nullptr, gated = nullptr;
  decltype(&clSetUserEventStatus) set_status = nullptr;
  decltype(&clReleaseEvent) release = nullptr;
  decltype(&clFinish) finish = nullptr;
  bool opened = false;

  ClGate() {
    need_device(HURRAY_DEVICE_OPENCL);
    hurray_backend_native nat{};
    hurray_error err{};
    REQUIRE(hurray_device_native(nullptr, HURRAY_DEVICE_OPENCL, 0, &nat, &err) == HURRAY_OK);
    auto context = static_cast<cl_context>(nat.handles[2]);
    queue = static_cast<cl_command_queue>(nat.handles[3]);
    void *lib = nat.handles[4];
    auto create_user = reinterpret_cast<decltype(&clCreateUserEvent)>(dlsym(lib, "clCreateUserEvent"));
    auto marker = reinterpret_cast<decltype(&clEnqueueMarkerWithWaitList)>(
        dlsym(lib, "clEnqueueMarkerWithWaitList"));
    auto flush = reinterpret_cast<decltype(&clFlush)>(dlsym(lib, "clFlush"));
    set_status = reinterpret_cast<decltype(&clSetUserEventStatus)>(dlsym(lib, "clSetUserEventStatus"));
    release = reinterpret_cast<decltype(&clReleaseEvent)>(dlsym(lib, "clReleaseEvent"));
    finish = reinterpret_cast<decltype(&clFinish)>(dlsym(lib, "clFinish"));
    REQUIRE((create_user && marker && flush && set_status && release && finish));
    cl_int e = CL_SUCCESS;
    user = create_user(context, &e);
    REQUIRE(e == CL_SUCCESS);
    // An in-order queue: everything after this marker waits for the user event.
    REQUIRE(marker(queue, 1, &user, &gated) == CL_SUCCESS);
    REQUIRE(flush(queue) == CL_SUCCESS);
  }
  void open() {
    if (opened) return;
    opened = true;
    REQUIRE(set_status(user, CL_COMPLETE) == CL_SUCCESS);
  }
  ~ClGate() {
    if (!opened) set_status(user, CL_COMPLETE);
    finish(queue);
    release(gated);
    release(user);
  }
};

// The gated pattern on one device: n buffers released after the work queued
// behind the gate, none before it opens, each exactly once after.
template <class Gate>
void gated_release(uint8_t tag, void *(*stream_of)(Gate &), int n) {
  Gate gate;
  // Freed only on success: a failed check leaves releases pending that would
  // count into it later.
  auto *owned = new std::vector<Counter>(static_cast<size_t>(n));
  std::vector<Counter> &counts = *owned;
  for (int i = 0; i < n; ++i) {
    hurray_handoff h = make_handoff(nullptr, tag, &counts[static_cast<size_t>(i)]);
    hurray_error err{};
    INFO(err.message);
    REQUIRE(hurray_handoff_release_after(nullptr, &h, stream_of(gate), nullptr, 0, &err) ==
            HURRAY_OK);
    REQUIRE(h.release == nullptr);  // moved in
  }
  settle();
  int early = 0;
  for (auto &c : counts) early += c.n.load();
  REQUIRE(early == 0);  // the gate is closed: no release may have happened
  gate.open();
  REQUIRE(wait_for_each(counts, [](auto &c) { return c.n.load(); }));
  settle();
  for (auto &c : counts) REQUIRE(c.n.load() == 1);
  delete owned;
}

void *vk_stream(VkGate &g) { return g.vk.queue; }
void *cl_stream(ClGate &g) { return g.queue; }

}  // namespace

TEST_CASE("release_after: CPU releases at once", "[cpu]") {
  Counter c;
  hurray_handoff h = make_handoff(nullptr, HURRAY_DEVICE_CPU, &c);
  hurray_error err{};
  REQUIRE(hurray_handoff_release_after(nullptr, &h, nullptr, nullptr, 0, &err) == HURRAY_OK);
  REQUIRE(c.n.load() == 1);
  REQUIRE(h.release == nullptr);
  // A released handoff cannot be released after anything.
  REQUIRE(hurray_handoff_release_after(nullptr, &h, nullptr, nullptr, 0, &err) ==
          HURRAY_E_ALREADY_RELEASED);
  int deferred = -1;
  REQUIRE(hurray_device_release_after_deferred(nullptr, HURRAY_DEVICE_CPU, 0, &deferred, &err) ==
          HURRAY_OK);
  REQUIRE(deferred == 1);
}

TEST_CASE("release_after: Vulkan waits for queued work", "[vulkan]") {
  gated_release<VkGate>(HURRAY_DEVICE_VULKAN, vk_stream, 1);
}

TEST_CASE("release_after: Vulkan, 1000 buffers in flight", "[vulkan]") {
  gated_release<VkGate>(HURRAY_DEVICE_VULKAN, vk_stream, 1000);
}

// Released once the gate's own event completes (Vulkan: its timeline
// semaphore at 1; OpenCL: its user event), and not before.
template <class Gate>
void event_gated_release(uint8_t tag, void *(*event_of)(Gate &), uint64_t value) {
  Gate gate;
  Counter c;
  hurray_handoff h = make_handoff(nullptr, tag, &c);
  hurray_error err{};
  REQUIRE(hurray_handoff_release_after(nullptr, &h, nullptr, event_of(gate), value, &err) ==
          HURRAY_OK);
  settle();
  REQUIRE(c.n.load() == 0);
  gate.open();
  REQUIRE(wait_for([&] { return c.n.load() == 1; }));
}

TEST_CASE("release_after: Vulkan, after an event", "[vulkan]") {
  event_gated_release<VkGate>(
      HURRAY_DEVICE_VULKAN, [](VkGate &g) -> void * { return g.gate; }, 1);
}

TEST_CASE("release_after: OpenCL waits for queued work", "[opencl]") {
  gated_release<ClGate>(HURRAY_DEVICE_OPENCL, cl_stream, 1);
}

TEST_CASE("release_after: OpenCL, 1000 buffers in flight", "[opencl]") {
  gated_release<ClGate>(HURRAY_DEVICE_OPENCL, cl_stream, 1000);
}

TEST_CASE("release_after: OpenCL, after a user event", "[opencl]") {
  event_gated_release<ClGate>(
      HURRAY_DEVICE_OPENCL, [](ClGate &g) -> void * { return g.user; }, 0);
}

// Exactly once when releases are deferred from many threads at once and the
// completions race with them (gate opened while they are being queued).
template <class Gate>
void racing_release(uint8_t tag, void *(*stream_of)(Gate &)) {
  constexpr int kThreads = 4, kEach = 250;
  Gate gate;
  auto *owned = new std::vector<Counter>(kThreads * kEach);  // freed only on success
  std::vector<Counter> &counts = *owned;
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        Counter *c = &counts[static_cast<size_t>(t * kEach + i)];
        hurray_buffer_desc bd = HURRAY_BUFFER_DESC_INIT;
        bd.flags = HURRAY_HANDOFF_OPAQUE_DATA;
        bd.handle = {256, 64, tag, HURRAY_SYNC_PRODUCER_SYNCED, HURRAY_MEMORY_STANDARD, 0};
        bd.data = c;
        bd.free_fn = count_free;
        bd.free_user = c;
        hurray_buffer *b = nullptr;
        hurray_handoff h{};
        if (hurray_buffer_wrap(nullptr, &bd, &b, nullptr) != HURRAY_OK ||
            hurray_buffer_export(b, nullptr, &h, nullptr) != HURRAY_OK) {
          failed.fetch_add(1);
          continue;
        }
        hurray_buffer_unref(b);
        if (hurray_handoff_release_after(nullptr, &h, stream_of(gate), nullptr, 0, nullptr) !=
            HURRAY_OK)
          failed.fetch_add(1);
      }
    });
  gate.open();
  for (auto &th : threads) th.join();
  REQUIRE(failed.load() == 0);
  REQUIRE(wait_for_each(counts, [](auto &c) { return c.n.load(); }));
  settle();
  for (auto &c : counts) REQUIRE(c.n.load() == 1);
  delete owned;
}

TEST_CASE("release_after: Vulkan, exactly once from four threads", "[vulkan][threads]") {
  racing_release<VkGate>(HURRAY_DEVICE_VULKAN, vk_stream);
}

TEST_CASE("release_after: OpenCL, exactly once from four threads", "[opencl][threads]") {
  racing_release<ClGate>(HURRAY_DEVICE_OPENCL, cl_stream);
}

// WebGPU has no gate to hold its queue back (WebGPU defines no host-signalled
// wait; on llvmpipe the work is done once submitted): the same race on the
// device's queue, "opened" from the start.
struct WgpuQueue {
  void *queue = nullptr;
  WgpuQueue() {
    need_device(HURRAY_DEVICE_WEBGPU);
    hurray_backend_native nat{};
    hurray_error err{};
    REQUIRE(hurray_device_native(nullptr, HURRAY_DEVICE_WEBGPU, 0, &nat, &err) == HURRAY_OK);
    queue = nat.handles[3];
  }
  void open() {}
};

TEST_CASE("release_after: WebGPU, exactly once from four threads", "[webgpu][threads]") {
  racing_release<WgpuQueue>(HURRAY_DEVICE_WEBGPU, [](WgpuQueue &q) { return q.queue; });
}

namespace {
struct Reports {
  std::vector<std::string> messages;
};
void collect(void *user, const hurray_error *r) {
  static_cast<Reports *>(user)->messages.emplace_back(r->message);
}
}  // namespace

TEST_CASE("release_after: guard reports work that never completed (BP-REL-DEFER)", "[opencl]") {
  ClGate gate;
  Reports reports;
  hurray_context *ctx = nullptr;
  hurray_error err{};
  REQUIRE(hurray_context_create(&ctx, &err) == HURRAY_OK);
  REQUIRE(hurray_context_set_guard(ctx, 1, &err) == HURRAY_OK);
  REQUIRE(hurray_context_set_guard_callback(ctx, collect, &reports, &err) == HURRAY_OK);
  Counter c, done;
  hurray_handoff h = make_handoff(ctx, HURRAY_DEVICE_OPENCL, &c);
  hurray_handoff h2 = make_handoff(ctx, HURRAY_DEVICE_CPU, &done);
  REQUIRE(hurray_handoff_release_after(ctx, &h, cl_stream(gate), nullptr, 0, &err) == HURRAY_OK);
  REQUIRE(hurray_handoff_release_after(ctx, &h2, nullptr, nullptr, 0, &err) == HURRAY_OK);
  hurray_context_destroy(ctx);
  int deferred = 0;
  for (const std::string &m : reports.messages)
    if (m.rfind("BP-REL-DEFER:", 0) == 0) ++deferred;
  INFO((reports.messages.empty() ? std::string("no report") : reports.messages.front()));
  REQUIRE(deferred == 1);  // the gated one; the CPU one completed at once
  gate.open();
  REQUIRE(wait_for([&] { return c.n.load() == 1; }));
}

// The example private plugin (tag 0xF0) has no release_after entry: libhurray
// records an event, waits for it on the host, then releases, before
// returning; a wait that fails releases nothing and the caller keeps the
// handoff. Run with HURRAY_BACKEND_PATH naming the example plugin.
TEST_CASE("release_after: a backend without the entry waits on the host", "[fallback]") {
  constexpr uint8_t kTag = 0xF0;
  hurray_error err{};
  hurray_context *ctx = private_tag_context(kTag);
  need_device(kTag);
  int deferred = -1;
  REQUIRE(hurray_device_release_after_deferred(ctx, kTag, 0, &deferred, &err) == HURRAY_OK);
  REQUIRE(deferred == 0);
  hurray_backend_device_info info{};
  REQUIRE(hurray_device_info(ctx, kTag, 0, &info, &err) == HURRAY_OK);
  REQUIRE(std::strstr(info.detail, "release_after: host wait") != nullptr);

  Counter c;
  hurray_handoff h = make_handoff(ctx, kTag, &c);
  // An event the plugin never recorded: its wait fails, nothing is released.
  static int bogus;
  REQUIRE(hurray_handoff_release_after(ctx, &h, nullptr, &bogus, 1, &err) != HURRAY_OK);
  REQUIRE(c.n.load() == 0);
  REQUIRE(h.release != nullptr);  // still the caller's
  // The stream's work: recorded, waited for, released before the return.
  REQUIRE(hurray_handoff_release_after(ctx, &h, nullptr, nullptr, 0, &err) == HURRAY_OK);
  REQUIRE(c.n.load() == 1);
  REQUIRE(h.release == nullptr);
  hurray_context_destroy(ctx);
}

// ---- WebGPU (Dawn): the plugin's entry defers ----
//
// Its releaser thread pumps Dawn's events while releases are pending and
// releases after the queue's work-done callback (or the event's future):
// after the call returned, never inline on the caller's thread, once. (On
// Mesa's llvmpipe the work is done when it is submitted: where the release
// runs is what a wrong entry changes; tests/backends/webgpu has the
// plugin-level cases.)

namespace {

thread_local bool in_release_after = false;  // set around the call

struct Seen {
  Counter c;
  std::atomic<int> inline_n{0};  // released on the caller's thread, inside the call
  std::atomic<bool> open{true};  // false: the release waits until it is true
};
void seen_free(void *user, void *) {
  auto *s = static_cast<Seen *>(user);
  if (in_release_after) {
    s->inline_n.fetch_add(1);
  } else {
    while (!s->open.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  s->c.n.fetch_add(1);
}

// A wrapped WebGPU handoff whose release reports into *s.
hurray_handoff webgpu_handoff(hurray_context *ctx, Seen *s) {
  return wrap_handoff(ctx, HURRAY_DEVICE_WEBGPU, s, seen_free);
}

hurray_status webgpu_release_after(hurray_context *ctx, hurray_handoff *h, void *stream,
                                   void *event, hurray_error *err) {
  in_release_after = true;
  const hurray_status st = hurray_handoff_release_after(ctx, h, stream, event, 0, err);
  in_release_after = false;
  return st;
}

}  // namespace

TEST_CASE("release_after: WebGPU defers to the queue's work-done callback", "[webgpu]") {
  need_device(HURRAY_DEVICE_WEBGPU);
  hurray_error err{};
  INFO(err.message);
  int deferred = -1;
  REQUIRE(hurray_device_release_after_deferred(nullptr, HURRAY_DEVICE_WEBGPU, 0, &deferred,
                                               &err) == HURRAY_OK);
  REQUIRE(deferred == 1);
  hurray_backend_device_info info{};
  REQUIRE(hurray_device_info(nullptr, HURRAY_DEVICE_WEBGPU, 0, &info, &err) == HURRAY_OK);
  REQUIRE(std::strstr(info.detail, "host wait") == nullptr);
  hurray_backend_native nat{};
  REQUIRE(hurray_device_native(nullptr, HURRAY_DEVICE_WEBGPU, 0, &nat, &err) == HURRAY_OK);
  // The queue's work so far (NULL or the queue, native slot 3), or an event.
  constexpr int kN = 300;
  auto *owned = new std::vector<Seen>(kN);  // freed only on success
  std::vector<Seen> &seen = *owned;
  for (int i = 0; i < kN; ++i) {
    hurray_handoff h = webgpu_handoff(nullptr, &seen[static_cast<size_t>(i)]);
    void *stream = i % 3 == 1 ? nat.handles[3] : nullptr;
    hurray_export_desc ev = HURRAY_EXPORT_DESC_INIT;
    if (i % 3 == 2)
      REQUIRE(hurray_event_record(nullptr, HURRAY_DEVICE_WEBGPU, 0, nullptr, &ev, &err) ==
              HURRAY_OK);
    REQUIRE(webgpu_release_after(nullptr, &h, stream, ev.sync_object, &err) == HURRAY_OK);
    REQUIRE(h.release == nullptr);
    if (ev.event_free_fn) ev.event_free_fn(ev.event_user, ev.sync_object);
  }
  REQUIRE(wait_for_each(seen, [](auto &s) { return s.c.n.load(); }));
  settle();
  for (auto &s : seen) {
    REQUIRE(s.c.n.load() == 1);
    REQUIRE(s.inline_n.load() == 0);
  }
  delete owned;
}

// Deterministically pending: the first release holds the plugin's releaser
// thread (its free waits), so the second cannot run before the context is
// destroyed.
TEST_CASE("release_after: WebGPU, guard reports a release still pending (BP-REL-DEFER)",
          "[webgpu]") {
  need_device(HURRAY_DEVICE_WEBGPU);
  auto *held = new Seen;  // freed only on success
  auto *later = new Seen;
  held->open = false;
  hurray_error err{};
  INFO(err.message);
  hurray_handoff h1 = webgpu_handoff(nullptr, held);
  REQUIRE(webgpu_release_after(nullptr, &h1, nullptr, nullptr, &err) == HURRAY_OK);
  REQUIRE(held->inline_n.load() == 0);
  settle();  // the releaser's thread is in held's free by now

  Reports reports;
  hurray_context *ctx = nullptr;
  REQUIRE(hurray_context_create(&ctx, &err) == HURRAY_OK);
  REQUIRE(hurray_context_set_guard(ctx, 1, &err) == HURRAY_OK);
  REQUIRE(hurray_context_set_guard_callback(ctx, collect, &reports, &err) == HURRAY_OK);
  hurray_handoff h2 = webgpu_handoff(ctx, later);
  REQUIRE(webgpu_release_after(ctx, &h2, nullptr, nullptr, &err) == HURRAY_OK);
  hurray_context_destroy(ctx);
  int pending = 0;
  for (const std::string &m : reports.messages)
    if (m.rfind("BP-REL-DEFER:", 0) == 0) ++pending;
  INFO((reports.messages.empty() ? std::string("no report") : reports.messages.front()));
  REQUIRE(pending == 1);
  REQUIRE(later->c.n.load() == 0);
  held->open = true;
  REQUIRE(wait_for([&] { return held->c.n.load() == 1 && later->c.n.load() == 1; }));
  REQUIRE(later->inline_n.load() == 0);
  delete held;
  delete later;
}

// ---- hurray_handoff_release_after_event: the event is handed over too ----
//
// The library frees the event (event_free_fn) exactly once, after the
// release has run; on any error it takes neither and frees nothing.

namespace {

// One handoff and its event: how many times each was released / freed, and
// whether the release had run when the event was freed.
struct EventSeen {
  Counter released;
  std::atomic<int> freed{0};
  std::atomic<int> freed_before_release{0};
};
void event_seen_release(void *user, void *) {
  static_cast<EventSeen *>(user)->released.n.fetch_add(1);
}
void event_seen_free(void *user, void *) {
  auto *s = static_cast<EventSeen *>(user);
  if (s->released.n.load() == 0) s->freed_before_release.fetch_add(1);
  s->freed.fetch_add(1);
}
hurray_handoff event_seen_handoff(hurray_context *ctx, uint8_t tag, EventSeen *s) {
  return wrap_handoff(ctx, tag, s, event_seen_release);
}

// The gated pattern with the gate's own event handed over: neither the
// release nor the free before the gate opens, each once after, in order.
template <class Gate>
void event_handed_over(uint8_t tag, void *(*event_of)(Gate &), uint64_t value, int n) {
  Gate gate;
  auto *owned = new std::vector<EventSeen>(static_cast<size_t>(n));  // freed only on success
  std::vector<EventSeen> &seen = *owned;
  for (auto &s : seen) {
    hurray_handoff h = event_seen_handoff(nullptr, tag, &s);
    hurray_error err{};
    INFO(err.message);
    REQUIRE(hurray_handoff_release_after_event(nullptr, &h, event_of(gate), value,
                                               event_seen_free, &s, &err) == HURRAY_OK);
    REQUIRE(h.release == nullptr);  // moved in
  }
  settle();
  for (auto &s : seen) {
    REQUIRE(s.released.n.load() == 0);
    REQUIRE(s.freed.load() == 0);  // the deferred release still needs the event
  }
  gate.open();
  REQUIRE(wait_for_each(seen, [](auto &s) { return s.freed.load(); }));
  settle();
  for (auto &s : seen) {
    REQUIRE(s.released.n.load() == 1);
    REQUIRE(s.freed.load() == 1);
    REQUIRE(s.freed_before_release.load() == 0);
  }
  delete owned;
}

}  // namespace

TEST_CASE("release_after_event: CPU releases, then frees the event, once each", "[event-cpu]") {
  EventSeen s;
  static int event;  // the CPU has no events and waits on none
  hurray_handoff h = event_seen_handoff(nullptr, HURRAY_DEVICE_CPU, &s);
  hurray_error err{};
  INFO(err.message);
  REQUIRE(hurray_handoff_release_after_event(nullptr, &h, &event, 0, event_seen_free, &s, &err) ==
          HURRAY_OK);
  REQUIRE(h.release == nullptr);
  REQUIRE(s.released.n.load() == 1);
  REQUIRE(s.freed.load() == 1);
  REQUIRE(s.freed_before_release.load() == 0);
  settle();
  REQUIRE(s.released.n.load() == 1);
  REQUIRE(s.freed.load() == 1);
}

TEST_CASE("release_after_event: CPU, exactly once from four threads", "[event-cpu]") {
  constexpr int kThreads = 4, kEach = 250;
  auto *owned = new std::vector<EventSeen>(kThreads * kEach);  // freed only on success
  std::vector<EventSeen> &seen = *owned;
  std::vector<hurray_handoff> handoffs;
  for (auto &s : seen) handoffs.push_back(event_seen_handoff(nullptr, HURRAY_DEVICE_CPU, &s));
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = t * kEach; i < (t + 1) * kEach; ++i) {
        auto k = static_cast<size_t>(i);
        if (hurray_handoff_release_after_event(nullptr, &handoffs[k], &seen[k], 0,
                                               event_seen_free, &seen[k],
                                               nullptr) != HURRAY_OK)
          failed.fetch_add(1);
      }
    });
  for (auto &th : threads) th.join();
  REQUIRE(failed.load() == 0);
  for (auto &s : seen) {
    REQUIRE(s.released.n.load() == 1);
    REQUIRE(s.freed.load() == 1);
    REQUIRE(s.freed_before_release.load() == 0);
  }
  delete owned;
}

TEST_CASE("release_after_event: on an error the caller keeps both", "[event-errors]") {
  EventSeen s;
  static int event;
  hurray_handoff h = event_seen_handoff(nullptr, HURRAY_DEVICE_CPU, &s);
  hurray_error err{};
  // NULL arguments: nothing taken, nothing freed.
  REQUIRE(hurray_handoff_release_after_event(nullptr, nullptr, &event, 0, event_seen_free, &s,
                                             &err) == HURRAY_E_INVALID_ARGUMENT);
  REQUIRE(hurray_handoff_release_after_event(nullptr, &h, nullptr, 0, event_seen_free, &s,
                                             &err) == HURRAY_E_INVALID_ARGUMENT);
  REQUIRE(std::strstr(err.message, "event is NULL") != nullptr);
  REQUIRE(hurray_handoff_release_after_event(nullptr, &h, &event, 0, nullptr, &s, &err) ==
          HURRAY_E_INVALID_ARGUMENT);
  REQUIRE(std::strstr(err.message, "event_free_fn is NULL") != nullptr);
  REQUIRE(h.release != nullptr);
  REQUIRE(s.freed.load() == 0);
  REQUIRE(s.released.n.load() == 0);
  // Released already (BP-REL-ONCE): refused, the event still the caller's.
  REQUIRE(hurray_handoff_release(&h, &err) == HURRAY_OK);
  REQUIRE(s.released.n.load() == 1);
  REQUIRE(hurray_handoff_release_after_event(nullptr, &h, &event, 0, event_seen_free, &s, &err) ==
          HURRAY_E_ALREADY_RELEASED);
  REQUIRE(std::string(hurray_rule_id(static_cast<hurray_rule>(err.rule))) == "BP-REL-ONCE");
  REQUIRE(s.freed.load() == 0);
  REQUIRE(s.released.n.load() == 1);

  // The example private plugin (tag 0xF0, no release_after entry: a host
  // wait) refuses an event it never recorded: the handoff and the event stay
  // the caller's; one it recorded is waited for, then both go before the return.
  constexpr uint8_t kTag = 0xF0;
  hurray_context *ctx = private_tag_context(kTag);
  need_device(kTag);
  EventSeen p;
  hurray_handoff ph = event_seen_handoff(ctx, kTag, &p);
  static int bogus;
  REQUIRE(hurray_handoff_release_after_event(ctx, &ph, &bogus, 1, event_seen_free, &p, &err) !=
          HURRAY_OK);
  REQUIRE(ph.release != nullptr);  // still the caller's
  REQUIRE(p.released.n.load() == 0);
  REQUIRE(p.freed.load() == 0);
  hurray_export_desc ev = HURRAY_EXPORT_DESC_INIT;
  REQUIRE(hurray_event_record(ctx, kTag, 0, nullptr, &ev, &err) == HURRAY_OK);
  REQUIRE(ev.event_free_fn != nullptr);
  // The plugin's own free, wrapped so that the test sees it.
  struct Chain {
    EventSeen *seen;
    hurray_export_desc ev;
  } chain{&p, ev};
  auto chained_free = [](void *user, void *ev_object) {
    auto *c = static_cast<Chain *>(user);
    event_seen_free(c->seen, ev_object);
    c->ev.event_free_fn(c->ev.event_user, ev_object);
  };
  REQUIRE(hurray_handoff_release_after_event(ctx, &ph, ev.sync_object, ev.sync_value,
                                             chained_free, &chain, &err) == HURRAY_OK);
  REQUIRE(ph.release == nullptr);
  REQUIRE(p.released.n.load() == 1);
  REQUIRE(p.freed.load() == 1);
  REQUIRE(p.freed_before_release.load() == 0);
  hurray_context_destroy(ctx);
}

TEST_CASE("release_after_event: Vulkan releases, then frees, after the event", "[event-vulkan]") {
  event_handed_over<VkGate>(
      HURRAY_DEVICE_VULKAN, [](VkGate &g) -> void * { return g.gate; }, 1, 100);
}

TEST_CASE("release_after_event: OpenCL releases, then frees, after the event", "[event-opencl]") {
  event_handed_over<ClGate>(
      HURRAY_DEVICE_OPENCL, [](ClGate &g) -> void * { return g.user; }, 0, 100);
}

TEST_CASE("release_after_event: guard reports one still pending, its event kept (BP-REL-DEFER)",
          "[event-opencl]") {
  ClGate gate;
  Reports reports;
  hurray_context *ctx = nullptr;
  hurray_error err{};
  INFO(err.message);
  REQUIRE(hurray_context_create(&ctx, &err) == HURRAY_OK);
  REQUIRE(hurray_context_set_guard(ctx, 1, &err) == HURRAY_OK);
  REQUIRE(hurray_context_set_guard_callback(ctx, collect, &reports, &err) == HURRAY_OK);
  auto *s = new EventSeen;  // freed only on success
  hurray_handoff h = event_seen_handoff(ctx, HURRAY_DEVICE_OPENCL, s);
  REQUIRE(hurray_handoff_release_after_event(ctx, &h, gate.user, 0, event_seen_free, s, &err) ==
          HURRAY_OK);
  hurray_context_destroy(ctx);
  int deferred = 0;
  for (const std::string &m : reports.messages)
    if (m.rfind("BP-REL-DEFER:", 0) == 0) ++deferred;
  REQUIRE(deferred == 1);
  REQUIRE(s->freed.load() == 0);
  gate.open();
  REQUIRE(wait_for([&] { return s->freed.load() == 1; }));
  REQUIRE(s->released.n.load() == 1);
  REQUIRE(s->freed_before_release.load() == 0);
  delete s;
}
