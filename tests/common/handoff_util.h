// Helpers of the handoff and concurrency tests: counting free/event callbacks, a guard
// report collector, and wrapping a CPU buffer.
#pragma once
#include <hurray.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace hurray_test {

struct Counter {
  std::atomic<int> frees{0}, events{0};
  void *last_data = nullptr;
  static void on_free(void *user, void *data) {
    auto *c = static_cast<Counter *>(user);
    c->last_data = data;
    c->frees.fetch_add(1);
  }
  static void on_event(void *user, void *) { static_cast<Counter *>(user)->events.fetch_add(1); }
};

struct Reports {
  std::mutex mu;
  std::vector<hurray_error> all;
  static void collect(void *user, const hurray_error *e) {
    auto *r = static_cast<Reports *>(user);
    std::lock_guard<std::mutex> lock(r->mu);
    r->all.push_back(*e);
  }
  std::vector<std::string> rules() {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<std::string> v;
    for (auto &e : all) v.push_back(e.rule_id);
    return v;
  }
};

// A guarded context whose reports go to `reports`.
struct GuardedContext {
  hurray_context *ctx = nullptr;
  explicit GuardedContext(Reports *reports, bool guard = true) {
    hurray_context_create(&ctx, nullptr);
    hurray_context_set_guard(ctx, guard ? 1 : 0, nullptr);
    hurray_context_set_guard_callback(ctx, Reports::collect, reports, nullptr);
  }
  ~GuardedContext() { hurray_context_destroy(ctx); }
  operator hurray_context *() const { return ctx; }
};

inline hurray_buffer_desc cpu_desc(void *data, uint64_t size, Counter *c, uint32_t align = 64) {
  hurray_buffer_desc d = HURRAY_BUFFER_DESC_INIT;
  d.handle.byte_size = size;
  d.handle.alignment = align;
  d.handle.device_tag = HURRAY_DEVICE_CPU;
  d.data = data;
  d.free_fn = Counter::on_free;
  d.free_user = c;
  return d;
}

// 64-byte aligned heap memory that the Counter's free does not release
// (tests free it themselves).
struct Aligned {
  void *p;
  explicit Aligned(size_t n, size_t align = 4096) : p(std::aligned_alloc(align, n)) {}
  ~Aligned() { std::free(p); }
};

}  // namespace hurray_test
