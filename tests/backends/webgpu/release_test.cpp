// libhurray-webgpu.so: release_after (BP-REL-DEFER) on the real device. done
// runs once, after the entry returned, on the plugin's releaser thread (never
// inline on the caller's: the entry always defers to Dawn's work-done
// callback or the event's future), with no plugin lock held (done reads the
// buffer the queued work wrote, through the plugin), for many entries in
// flight and from several threads, and a done may defer another release;
// entries still pending at shutdown are dropped without done. Every wait is
// bounded (hurray_test::kWaitMs).
//
// On Mesa's llvmpipe Dawn has done submitted copies by the time
// wgpuQueueSubmit returns, so an early release cannot be seen as work
// unfinished; what a wrong entry changes here is where and when done runs
// (inline, under the plugin's lock, never, twice), which these cases check.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "bounded_wait.h"
#include "webgpu_test_util.h"

using webgpu_test::pattern;
using hurray_test::settle;
using hurray_test::wait_for;
using webgpu_test::Probed;

namespace {

// Set around each release_after call: a done that sees it runs inline.
thread_local bool in_release_after = false;

// What one deferred release saw when its done ran.
struct Seen {
  std::atomic<int> calls{0};
  std::atomic<int> inline_calls{0};  // on the caller's thread, inside the entry
  std::atomic<bool> data_ok{false};
  // Optional: the buffer the queued work wrote, read by done through the plugin.
  const Probed *p = nullptr;
  const hurray_backend_allocation *buffer = nullptr;
  const std::vector<unsigned char> *expect = nullptr;
};

void on_done(void *user) {
  auto *s = static_cast<Seen *>(user);
  if (in_release_after) {
    s->inline_calls.fetch_add(1);
  } else if (s->p != nullptr) {
    std::vector<unsigned char> out(s->expect->size());
    hurray_error err{};
    const hurray_status st =
        s->p->b->copy_to_host(s->p->state, s->buffer, 0, out.data(), out.size(), &err);
    if (st != HURRAY_OK) std::printf("done: copy_to_host: %s\n", err.message);
    s->data_ok = st == HURRAY_OK && out == *s->expect;
  }
  s->calls.fetch_add(1);
}

// release_after with in_release_after set around the call.
hurray_status defer_fn(const Probed &p, void *stream, void *event, uint64_t value,
                       void (*done)(void *), void *user, hurray_error *err) {
  in_release_after = true;
  const hurray_status st = p.b->release_after(p.state, 0, stream, event, value, done, user, err);
  in_release_after = false;
  return st;
}

hurray_status defer(const Probed &p, void *stream, void *event, uint64_t value, Seen *s,
                    hurray_error *err) {
  return defer_fn(p, stream, event, value, on_done, s, err);
}

// done(user) after the queue's work so far.
hurray_status defer_to(const Probed &p, void (*done)(void *), void *user, hurray_error *err) {
  return defer_fn(p, nullptr, nullptr, 0, done, user, err);
}

bool all_called(const std::vector<Seen> &seen) {
  for (const Seen &s : seen)
    if (s.calls.load() == 0) return false;
  return true;
}

bool all_once(const std::vector<Seen> &seen) {
  for (const Seen &s : seen)
    if (s.calls.load() != 1 || s.inline_calls.load() != 0) return false;
  return true;
}

}  // namespace

TEST_CASE("webgpu: release_after runs done once, later, after the queued work", "[webgpu]") {
  Probed p;
  REQUIRE(p.b->release_after != nullptr);
  const uint64_t n = 8u << 20;
  const std::vector<unsigned char> in = pattern(n, 7);
  hurray_backend_allocation b = p.alloc_with(in);  // queued: wgpuQueueWriteBuffer
  for (void *stream : {static_cast<void *>(nullptr), static_cast<void *>(p.queue())}) {
    Seen seen;
    seen.p = &p;
    seen.buffer = &b;
    seen.expect = &in;
    hurray_error err{};
    INFO(err.message);
    REQUIRE(defer(p, stream, nullptr, 0, &seen, &err) == HURRAY_OK);
    REQUIRE(wait_for([&] { return seen.calls.load() >= 1; }));
    settle();
    CHECK(seen.inline_calls.load() == 0);
    CHECK(seen.calls.load() == 1);
    CHECK(seen.data_ok.load());  // done could call into the plugin: no lock held
  }
  p.b->free(p.state, &b);
}

TEST_CASE("webgpu: release_after an event, once that event completed", "[webgpu]") {
  Probed p;
  const uint64_t n = 8u << 20;
  const std::vector<unsigned char> in = pattern(n, 11);
  hurray_backend_allocation b = p.alloc_with(in);
  uint64_t value = 0;
  void *event = p.record(nullptr, &value);
  hurray_error err{};
  Seen seen;
  seen.p = &p;
  seen.buffer = &b;
  seen.expect = &in;
  REQUIRE(defer(p, nullptr, event, 0, &seen, &err) == HURRAY_OK);
  REQUIRE(wait_for([&] { return seen.calls.load() >= 1; }));
  settle();
  CHECK(seen.inline_calls.load() == 0);
  CHECK(seen.calls.load() == 1);
  CHECK(seen.data_ok.load());
  // Refused, and done never called: a value on a binary event, another
  // stream, no done.
  Seen refused;
  int other = 0;
  CHECK(defer(p, nullptr, event, 1, &refused, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(defer(p, &other, nullptr, 0, &refused, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(std::string(err.message).find("release_after") != std::string::npos);
  CHECK(p.b->release_after(p.state, 0, nullptr, nullptr, 0, nullptr, nullptr, &err) ==
        HURRAY_E_INVALID_ARGUMENT);
  CHECK(p.b->release_after(p.state, 1, nullptr, nullptr, 0, on_done, &refused, &err) ==
        HURRAY_E_DEVICE_UNAVAILABLE);
  settle();
  CHECK(refused.calls.load() == 0);
  p.b->event_release(p.state, 0, event);
  p.b->free(p.state, &b);
}

TEST_CASE("webgpu: 1000 releases in flight, each done once", "[webgpu]") {
  Probed p;
  constexpr int kN = 1000;
  hurray_backend_allocation a = p.alloc(4 * kN);
  std::vector<Seen> seen(kN);
  hurray_error err{};
  INFO(err.message);
  for (int i = 0; i < kN; ++i) {
    const uint32_t word = static_cast<uint32_t>(i);
    p.write(a, 4 * static_cast<uint64_t>(i), &word, 4);  // work between the releases
    // Half on the queue's work so far, half after an event.
    void *event = nullptr;
    uint64_t value = 0;
    if (i % 2) REQUIRE(p.b->event_record(p.state, 0, nullptr, &event, &value, &err) == HURRAY_OK);
    REQUIRE(defer(p, nullptr, event, 0, &seen[static_cast<size_t>(i)], &err) == HURRAY_OK);
  }
  REQUIRE(wait_for([&] { return all_called(seen); }));
  settle();
  CHECK(all_once(seen));
  p.b->free(p.state, &a);
}

TEST_CASE("webgpu: release_after from four threads, each done once", "[webgpu]") {
  Probed p;
  constexpr int kThreads = 4, kEach = 200;
  std::vector<Seen> seen(kThreads * kEach);
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      hurray_backend_allocation a{};
      hurray_error err{};
      if (p.b->alloc(p.state, 0, HURRAY_MEMORY_STANDARD, 64, 64, 0, &a, &err) != HURRAY_OK) {
        failed.fetch_add(1);
        return;
      }
      for (int i = 0; i < kEach; ++i) {
        const uint32_t word = static_cast<uint32_t>(i);
        if (p.b->copy_from_host(p.state, &a, 0, &word, 4, &err) != HURRAY_OK ||
            defer(p, nullptr, nullptr, 0, &seen[static_cast<size_t>(t * kEach + i)], &err) !=
                HURRAY_OK)
          failed.fetch_add(1);
      }
      p.b->free(p.state, &a);
    });
  for (std::thread &th : threads) th.join();
  REQUIRE(failed.load() == 0);
  REQUIRE(wait_for([&] { return all_called(seen); }));
  settle();
  CHECK(all_once(seen));
}

namespace {

// A done that defers the next release itself (from the releaser's thread),
// `left` times in all.
struct Chain {
  const Probed *p = nullptr;
  std::atomic<int> left{3};
  std::atomic<int> calls{0};
  std::atomic<int> failed{0};
  std::atomic<int> inline_calls{0};  // a re-entry would deadlock: counted, not made
};

void chain_done(void *user) {
  auto *c = static_cast<Chain *>(user);
  if (in_release_after) {
    c->inline_calls.fetch_add(1);
    return;
  }
  c->calls.fetch_add(1);
  if (c->left.fetch_sub(1) <= 1) return;
  hurray_error err{};
  if (defer_to(*c->p, chain_done, c, &err) != HURRAY_OK) c->failed.fetch_add(1);
}

}  // namespace

TEST_CASE("webgpu: a done may defer another release", "[webgpu]") {
  Probed p;
  Chain chain;
  chain.p = &p;
  hurray_error err{};
  INFO(err.message);
  REQUIRE(defer_to(p, chain_done, &chain, &err) == HURRAY_OK);
  REQUIRE(wait_for([&] { return chain.calls.load() == 3 || chain.inline_calls.load() > 0; }));
  settle();
  CHECK(chain.inline_calls.load() == 0);
  CHECK(chain.calls.load() == 3);
  CHECK(chain.failed.load() == 0);
}

namespace {

// A done that holds the releaser's thread until `open` (the pump then runs
// nothing: entries deferred meanwhile stay pending).
struct Blocker {
  std::atomic<int> entered{0};
  std::atomic<bool> open{false};
  std::atomic<bool> inline_call{false};
};

void block_done(void *user) {
  auto *b = static_cast<Blocker *>(user);
  if (in_release_after) {
    b->inline_call = true;
  } else {
    b->entered.fetch_add(1);
    while (!b->open.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace

TEST_CASE("webgpu: shutdown drops the releases still pending, done never runs", "[webgpu]") {
  Probed p;
  Blocker blocker;
  hurray_error err{};
  INFO(err.message);
  REQUIRE(defer_to(p, block_done, &blocker, &err) == HURRAY_OK);
  REQUIRE(!blocker.inline_call.load());
  REQUIRE(wait_for([&] { return blocker.entered.load() == 1; }));
  // Deferred while the releaser's thread is held: pending until shutdown.
  std::vector<Seen> pending(10);
  for (Seen &s : pending) REQUIRE(defer(p, nullptr, nullptr, 0, &s, &err) == HURRAY_OK);
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    blocker.open = true;  // shutdown is waiting for the thread by now
  });
  p.b->shutdown(p.state);  // joins the releaser's thread, then drops what is pending
  p.state = nullptr;
  opener.join();
  settle();
  CHECK(blocker.entered.load() == 1);
  for (const Seen &s : pending) CHECK(s.calls.load() == 0);
}
