// The Level Zero plugin: release_after. One waiter thread per plugin state,
// started on first use and stopped and joined first thing at shutdown, takes
// the pending entries in order and waits for each event on the host
// (zeEventHostSynchronize, in bounded 100 ms steps so that shutdown is never
// blocked by work that does not complete), then calls done. With event NULL
// the entry records an event on the stream (event_record) and gives it back
// to the pool once done ran. Entries still pending at shutdown are dropped
// without calling done (their work never completed: guard mode reports them,
// BP-REL-DEFER). In order: an entry waits behind earlier ones, which suits
// in-order command lists.
#include "state.h"

#include <condition_variable>
#include <deque>
#include <thread>

namespace hurray::level_zero {

struct Releaser {
  struct Item {
    int32_t device;
    ze_event_handle_t event;
    bool recorded;  // ours: given back to the pool after done
    void (*done)(void *);
    void *user;
  };
  State *s = nullptr;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Item> items;
  bool stop = false;
  std::thread thread;

  void run() noexcept {
    for (;;) {
      Item it;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return stop || !items.empty(); });
        if (stop) return;  // what is left never completed: dropped
        it = items.front();
      }
      ze_result_t r;
      do {
        r = s->ze.zeEventHostSynchronize(it.event, 100'000'000);  // 100 ms
        if (r == ZE_RESULT_NOT_READY) {
          std::lock_guard<std::mutex> lock(mu);
          if (stop) return;
        }
      } while (r == ZE_RESULT_NOT_READY);
      {
        std::lock_guard<std::mutex> lock(mu);
        items.pop_front();
      }
      // Completed, or failed (the work no longer runs either way).
      it.done(it.user);
      if (it.recorded) event_release(s, it.device, it.event);
    }
  }
};

void ReleaserDelete::operator()(Releaser *r) const noexcept {
  {
    std::lock_guard<std::mutex> lock(r->mu);
    r->stop = true;
  }
  r->cv.notify_all();
  if (r->thread.joinable()) r->thread.join();
  for (const Releaser::Item &it : r->items)
    if (it.recorded) event_release(r->s, it.device, it.event);
  delete r;
}

hurray_status release_after(void *state, int32_t device, void *stream, void *event,
                            uint64_t value, void (*done)(void *), void *user, hurray_error *err) {
  auto [refused, s, d] = kit::enter_release_after<State>(state, device, event, value, done,
                                                         "Level Zero", err);
  if (refused != HURRAY_OK) return refused;
  Releaser *r;
  {
    std::lock_guard<std::mutex> lock(s->mu);
    if (!s->releaser) {
      std::unique_ptr<Releaser, ReleaserDelete> made(new Releaser);
      made->s = s;
      made->thread = std::thread([p = made.get()] { p->run(); });
      s->releaser = std::move(made);
    }
    r = s->releaser.get();
  }
  const bool recorded = event == nullptr;
  if (recorded) {
    uint64_t v = 0;
    if (const hurray_status st = event_record(state, device, stream, &event, &v, err)) return st;
  }
  {
    std::lock_guard<std::mutex> lock(r->mu);
    r->items.push_back({device, static_cast<ze_event_handle_t>(event), recorded, done, user});
  }
  r->cv.notify_one();
  (void)d;
  return HURRAY_OK;
}

}  // namespace hurray::level_zero
