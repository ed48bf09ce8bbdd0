// The WebGPU plugin: release_after. With event NULL the entry registers a
// wgpuQueueOnSubmittedWorkDone callback (AllowProcessEvents) that marks the
// entry fired; with an event (a work-done future of event_record) the entry
// holds the future. Dawn runs such a callback, and reports a future
// complete, only when the instance processes events, so one thread per
// plugin state (started on first use, joined first thing at shutdown)
// pumps while entries are pending: every kTick (or at once when a new entry
// wakes it) it takes the state's mutex and, on the worker, runs
// wgpuInstanceProcessEvents and polls each event's future (WaitAny, zero
// timeout); with nothing pending it sleeps on its condition variable. It
// calls done for what completed after that, with no lock held, off the
// worker and outside Dawn's callback, so done may call into the plugin.
// Entries still pending at shutdown are dropped without calling done (their
// work never completed: guard mode reports them, BP-REL-DEFER).
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <thread>
#include <utility>

#include "state.h"

namespace hurray::webgpu {

struct Releaser {
  struct Entry {
    WGPUFuture future{};   // the event's, polled; 0 for a work-done callback's entry
    bool fired = false;    // the callback ran (on the worker, s->mu held)
    void (*done)(void *) = nullptr;  // NULL: never called (its registration failed)
    void *user = nullptr;
  };
  using Ready = std::pair<void (*)(void *), void *>;
  static constexpr auto kTick = std::chrono::milliseconds(1);

  State *const s;
  std::vector<std::unique_ptr<Entry>> entries;  // under s->mu, used on the worker
  std::mutex mu;                                // woken, stop
  std::condition_variable cv;
  bool woken = false;
  bool stop = false;
  std::thread thread;  // last: the members above exist when it starts

  explicit Releaser(State *state) : s(state), thread([this] { run(); }) {}

  void wake() noexcept {
    {
      std::lock_guard<std::mutex> lock(mu);
      woken = true;
    }
    cv.notify_one();
  }

  // On the worker, s->mu held: process events, move what completed into
  // *ready (erased from entries only once all are moved: a throw keeps them
  // for the next tick). True when entries remain.
  bool reap(std::vector<Ready> *ready) {
    const hwgpu_api &w = s->wgpu;
    w.wgpuInstanceProcessEvents(s->instance);
    for (std::unique_ptr<Entry> &e : entries) {
      if (e->future.id != 0 && !e->fired) {
        WGPUFutureWaitInfo info{e->future, 0};
        const uint32_t r = w.wgpuInstanceWaitAny(s->instance, 1, &info, 0);
        // An error (not a future Dawn knows): nothing runs for it any more.
        e->fired = info.completed != 0 || r != HWGPU_WAIT_TIMED_OUT;
      }
      if (e->fired && e->done != nullptr) ready->emplace_back(e->done, e->user);
    }
    entries.erase(std::remove_if(entries.begin(), entries.end(),
                                 [](const std::unique_ptr<Entry> &e) { return e->fired; }),
                  entries.end());
    return !entries.empty();
  }

  void run() noexcept {
    std::vector<Ready> ready;
    bool busy = false;  // entries remained after the last tick
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu);
        const auto go = [this] { return stop || woken; };
        if (busy) {
          cv.wait_for(lock, kTick, go);
        } else {
          cv.wait(lock, go);
        }
        if (stop) return;  // what is left never completed: dropped
        woken = false;
      }
      ready.clear();
      try {
        std::lock_guard<std::mutex> lock(s->mu);
        busy = on_worker(s, [&] { return reap(&ready); });
      } catch (...) {  // out of memory: this tick's completions wait for the next
        ready.clear();
        busy = true;
      }
      for (const Ready &r : ready) r.first(r.second);
    }
  }
};

namespace {

// The work-done callback of an entry with event NULL (on the worker, inside
// wgpuInstanceProcessEvents, s->mu held): marks it only; the releaser's
// thread calls done. Any status (also a lost device's) ends the work.
void on_released_work_done(uint32_t, WGPUStringView, void *userdata1, void *) {
  static_cast<Releaser::Entry *>(userdata1)->fired = true;
}

}  // namespace

void ReleaserDelete::operator()(Releaser *r) const noexcept {
  stop_releaser(r);
  delete r;
}

void stop_releaser(Releaser *r) noexcept {
  if (r == nullptr || !r->thread.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(r->mu);
    r->stop = true;
  }
  r->cv.notify_all();
  r->thread.join();
}

hurray_status release_after(void *state, int32_t device, void *stream, void *event,
                            uint64_t value, void (*done)(void *), void *user, hurray_error *err) {
  auto [refused, s, d] = kit::enter_release_after<State>(state, device, event, value, done,
                                                         "WebGPU", err);
  if (refused != HURRAY_OK) return refused;
  if (const hurray_status st = check_stream(*d, stream, "release_after", err)) return st;
  std::lock_guard<std::mutex> lock(s->mu);
  if (!s->releaser) s->releaser.reset(new Releaser(s));  // its thread starts here
  Releaser *const r = s->releaser.get();
  auto entry = std::make_unique<Releaser::Entry>();
  r->entries.reserve(r->entries.size() + 1);  // may throw: before Dawn knows the entry
  if (event != nullptr) {
    entry->future.id = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(event));
  } else {
    const WGPUQueueWorkDoneCallbackInfo info{nullptr, HWGPU_CALLBACK_MODE_ALLOW_PROCESS_EVENTS,
                                             on_released_work_done, entry.get(), nullptr};
    const WGPUFuture f = on_worker(
        s, [&, s = s, d = d] { return s->wgpu.wgpuQueueOnSubmittedWorkDone(d->queue, info); });
    if (f.id == 0) {  // kept, without done: Dawn may still run the callback
      r->entries.push_back(std::move(entry));
      return fail(err, HURRAY_E_BACKEND, "[wgpuQueueOnSubmittedWorkDone] no future on '%s'",
                  d->name.c_str());
    }
  }
  entry->done = done;
  entry->user = user;
  r->entries.push_back(std::move(entry));
  r->wake();
  return HURRAY_OK;
}

}  // namespace hurray::webgpu
