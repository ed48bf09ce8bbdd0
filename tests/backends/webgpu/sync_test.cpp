// libhurray-webgpu.so: events (futures of wgpuQueueOnSubmittedWorkDone) and
// the plugin's use from several threads at once.
#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "webgpu_test_util.h"

using webgpu_test::pattern;
using webgpu_test::Probed;

namespace {

// Queue writes of in_a to a and in_b to b, `rounds` times each, through the
// plugin: the work an event must wait for. (Not with Dawn's own calls from
// this thread: the plugin calls Dawn on its own thread, and Dawn's GL ES
// device is lost when another thread uses it; a lost device's futures all
// report complete, so a test doing that would check nothing.)
void queue_work(const Probed &p, hurray_backend_allocation &a, hurray_backend_allocation &b,
                const std::vector<unsigned char> &in_a, const std::vector<unsigned char> &in_b,
                int rounds) {
  for (int i = 0; i < rounds; ++i) {
    p.write(a, 0, in_a.data(), in_a.size());
    p.write(b, 0, in_b.data(), in_b.size());
  }
}

bool completed(const Probed &p, void *event) {
  WGPUFutureWaitInfo info{{static_cast<uint64_t>(reinterpret_cast<uintptr_t>(event))}, 0};
  const uint32_t r = p.w.wgpuInstanceWaitAny(p.instance(), 1, &info, 0);
  CHECK((r == HWGPU_WAIT_SUCCESS || r == HWGPU_WAIT_TIMED_OUT));
  return info.completed != 0;
}

}  // namespace

TEST_CASE("webgpu: a host wait on an event returns once the work before it is done", "[webgpu]") {
  Probed p;
  const uint64_t n = 8u << 20;
  hurray_backend_allocation a = p.alloc(n), b = p.alloc(n);
  const std::vector<unsigned char> in_a = pattern(n, 3), in_b = pattern(n, 4);
  queue_work(p, a, b, in_a, in_b, 4);
  void *event = nullptr;
  uint64_t value = 99;
  hurray_error err{};
  REQUIRE(p.b->event_record(p.state, 0, nullptr, &event, &value, &err) == HURRAY_OK);
  CHECK(event != nullptr);
  CHECK(value == 0);
  REQUIRE(p.b->event_wait(p.state, 0, event, 0, nullptr, &err) == HURRAY_OK);
  CHECK(completed(p, event));  // Dawn agrees the work is done
  // Waiting again (another consumer) returns at once; release is once.
  CHECK(p.b->event_wait(p.state, 0, event, 0, nullptr, &err) == HURRAY_OK);
  // The device is still there and holds what was queued before the event.
  std::vector<unsigned char> out(n);
  p.read(a, 0, out.data(), n);
  CHECK(out == in_a);
  p.read(b, 0, out.data(), n);
  CHECK(out == in_b);
  p.b->event_release(p.state, 0, event);
  p.b->free(p.state, &a);
  p.b->free(p.state, &b);
}

TEST_CASE("webgpu: the event orders a write before the consumer's read", "[webgpu]") {
  Probed p;
  const size_t n = 1 << 16;
  const std::vector<unsigned char> in = pattern(n, 5);
  hurray_backend_allocation a = p.alloc_with(in);
  uint64_t value = 0;
  void *event = p.record(p.queue(), &value);
  hurray_error err{};
  REQUIRE(p.b->event_wait(p.state, 0, event, 0, nullptr, &err) == HURRAY_OK);
  std::vector<unsigned char> out(n);
  p.read(a, 0, out.data(), n);
  CHECK(out == in);
  p.b->event_release(p.state, 0, event);
  p.b->free(p.state, &a);
}

TEST_CASE("webgpu: streams are the device queue or NULL, events are binary", "[webgpu]") {
  Probed p;
  void *event = nullptr;
  uint64_t value = 0;
  hurray_error err{};
  int other = 0;
  CHECK(p.b->event_record(p.state, 0, &other, &event, &value, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(std::string(err.message).find("one queue per device") != std::string::npos);
  REQUIRE(p.b->event_record(p.state, 0, nullptr, &event, &value, &err) == HURRAY_OK);
  // A wait on the queue itself: the queue runs in order, nothing to do.
  CHECK(p.b->event_wait(p.state, 0, event, 0, p.queue(), &err) == HURRAY_OK);
  CHECK(p.b->event_wait(p.state, 0, event, 0, &other, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(p.b->event_wait(p.state, 0, event, 1, nullptr, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(p.b->event_wait(p.state, 0, nullptr, 0, nullptr, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(p.b->event_record(p.state, 0, nullptr, nullptr, &value, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(p.b->event_record(p.state, 1, nullptr, &event, &value, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(p.b->event_wait(p.state, 0, event, 0, nullptr, &err) == HURRAY_OK);
  p.b->event_release(p.state, 0, event);
}

TEST_CASE("webgpu: four threads allocate, copy, record and wait at once", "[webgpu]") {
  Probed p;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 4; ++t) {
    threads.emplace_back([&p, &failures, t] {
      for (int round = 0; round < 8; ++round) {
        const size_t n = 1000 + 37 * t + static_cast<size_t>(round);
        hurray_backend_allocation a{};
        hurray_error err{};
        if (p.b->alloc(p.state, 0, HURRAY_MEMORY_STANDARD, n, 64, 0, &a, &err) != HURRAY_OK) {
          ++failures;
          return;
        }
        const std::vector<unsigned char> in = pattern(n, t * 100 + static_cast<unsigned>(round));
        std::vector<unsigned char> out(n);
        void *event = nullptr;
        uint64_t value = 0;
        if (p.b->copy_from_host(p.state, &a, 1, in.data(), n - 1, &err) != HURRAY_OK ||
            p.b->event_record(p.state, 0, nullptr, &event, &value, &err) != HURRAY_OK ||
            p.b->event_wait(p.state, 0, event, 0, nullptr, &err) != HURRAY_OK ||
            p.b->copy_to_host(p.state, &a, 1, out.data(), n - 1, &err) != HURRAY_OK ||
            std::memcmp(out.data(), in.data(), n - 1) != 0) {
          if (failures++ == 0) std::printf("thread %u round %d: %s\n", t, round, err.message);
        }
        if (event != nullptr) p.b->event_release(p.state, 0, event);
        p.b->free(p.state, &a);
      }
    });
  }
  for (std::thread &th : threads) th.join();
  CHECK(failures.load() == 0);
}
