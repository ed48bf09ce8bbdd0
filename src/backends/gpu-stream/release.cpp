// The GPU stream driver: release_after. The completion is the runtime's: a
// host function (rt::launch_host_func: cuLaunchHostFunc; HIP:
// hipLaunchHostFunc, else hipStreamAddCallback) queued on the stream after
// the work (stream NULL: the plugin's), or, with an event, on the device's
// release stream (a second stream of the plugin, made on first use) after a
// wait for the event: the plugin's own stream, which its copies synchronise,
// never waits for a caller's work. The host function runs on the runtime's
// thread and must not call the runtime: it only hands its entry to the
// state's worker thread (a queue under a mutex and condition variable,
// started on first use), which calls done. Shutdown stops and joins the
// worker first; entries pending then are dropped without calling done
// (BP-REL-DEFER: guard mode reports them). Each entry holds the queue, so a
// host function that runs after shutdown (on a caller's stream, which the
// plugin does not synchronise) finds it and only drops its entry. A runtime
// without a host function call (a CUDA driver that lacks cuLaunchHostFunc, a
// HIP runtime with neither call): the entry waits on the host, then calls
// done before returning (device_info's detail says so).
#include <condition_variable>
#include <thread>

#include "driver.h"

namespace hurray::gpu_stream {

namespace {

struct Queue;

// One release: pending on a stream, then completed in the queue.
struct Item {
  std::shared_ptr<Queue> queue;  // while pending; given up by the host function
  void (*done)(void *);
  void *user;
  Item *next = nullptr;  // in Queue, which allocates nothing
};

// The completed releases, oldest first, for the worker.
struct Queue {
  std::mutex mu;
  std::condition_variable cv;
  Item *head = nullptr;
  Item *tail = nullptr;
  bool stop = false;  // shutdown: completions from now on are dropped
};

// The host function, on the runtime's thread: neither a runtime call nor done.
void on_complete(void *p) noexcept {
  auto *it = static_cast<Item *>(p);
  const std::shared_ptr<Queue> q = std::move(it->queue);
  {
    std::lock_guard<std::mutex> lock(q->mu);
    if (!q->stop) {
      (q->tail != nullptr ? q->tail->next : q->head) = it;
      q->tail = it;
      it = nullptr;
    }
  }
  q->cv.notify_one();
  delete it;  // after shutdown: dropped
}

// The worker: done for each completed release, in the order they completed.
void work(Queue &q) noexcept {
  std::unique_lock<std::mutex> lock(q.mu);
  for (;;) {
    q.cv.wait(lock, [&] { return q.stop || q.head != nullptr; });
    if (q.stop) return;  // what is left is dropped by ReleaserDelete
    Item *it = q.head;
    q.head = it->next;
    if (q.head == nullptr) q.tail = nullptr;
    lock.unlock();
    it->done(it->user);  // may call the plugin, release_after included
    delete it;
    lock.lock();
  }
}

}  // namespace

struct Releaser {
  State *s = nullptr;
  std::shared_ptr<Queue> queue = std::make_shared<Queue>();
  std::thread worker;
  std::mutex streams_mu;            // guards streams
  std::vector<rt::Stream> streams;  // each device's release stream, made on first use
};

void ReleaserDelete::operator()(Releaser *r) const noexcept {
  Item *left;
  {
    std::lock_guard<std::mutex> lock(r->queue->mu);
    r->queue->stop = true;
    left = r->queue->head;
    r->queue->head = r->queue->tail = nullptr;
  }
  r->queue->cv.notify_all();
  if (r->worker.joinable()) r->worker.join();
  while (left != nullptr) {  // completed, but done was not called yet: dropped
    Item *next = left->next;
    delete left;
    left = next;
  }
  // Destroyed at once: work still queued there (a wait that never completes)
  // does not hold shutdown up.
  const Api &api = r->s->api;
  for (size_t i = 0; i < r->streams.size(); ++i)
    if (r->streams[i] != nullptr) {
      rt::Current cur(api, r->s->devices[i]->ref);
      rt::stream_destroy(api, r->streams[i]);
    }
  delete r;
}

namespace {

Releaser *start_releaser(State *s) {
  std::lock_guard<std::mutex> lock(s->mu);
  if (!s->releaser) {
    std::unique_ptr<Releaser, ReleaserDelete> r(new Releaser);
    r->s = s;
    r->streams.assign(s->devices.size(), nullptr);
    r->worker = std::thread([q = r->queue.get()] { work(*q); });
    s->releaser = std::move(r);
  }
  return s->releaser.get();
}

// The device's release stream (the device current), made on first use.
hurray_status release_stream(const State *s, Releaser *r, int32_t device, const Device *d,
                             rt::Stream *out, hurray_error *err) {
  std::lock_guard<std::mutex> lock(r->streams_mu);
  rt::Stream &made = r->streams[static_cast<size_t>(device)];
  if (made == nullptr) {
    const Result res = rt::stream_create(s->api, &made);
    if (res != rt::kSuccess) {
      made = nullptr;
      return rt_fail(err, s->api, HURRAY_OK, rt::kStreamCreate, res,
                     "release_after's stream on '%s'", d->name.c_str());
    }
  }
  *out = made;
  return HURRAY_OK;
}

// Without a host function call: wait on the host for the work, then done.
hurray_status wait_then_done(void *state, int32_t device, void *stream, void *event,
                             void (*done)(void *), void *user, hurray_error *err) {
  void *recorded = nullptr;
  if (event == nullptr) {
    uint64_t value = 0;
    if (const hurray_status st = event_record(state, device, stream, &recorded, &value, err))
      return st;
    event = recorded;
  }
  const hurray_status st = event_wait(state, device, event, 0, nullptr, err);
  if (recorded != nullptr) event_release(state, device, recorded);
  if (st != HURRAY_OK) return st;
  done(user);
  return HURRAY_OK;
}

}  // namespace

hurray_status release_after(void *state, int32_t device, void *stream, void *event,
                            uint64_t value, void (*done)(void *), void *user,
                            hurray_error *err) {
  auto [refused, s, d] = kit::enter_release_after<State>(state, device, event, value, done,
                                                         rt::kVendor, err);
  if (refused != HURRAY_OK) return refused;
  const Api &api = s->api;
  if (!rt::has_host_func(api)) return wait_then_done(state, device, stream, event, done, user, err);
  const rt::Current current(s->api, d->ref);
  if (const hurray_status st = check_current(current, s->api, *d, err)) return st;
  Releaser *r = start_releaser(s);
  {
    std::lock_guard<std::mutex> lock(r->queue->mu);
    if (r->queue->stop)  // a done that releases again while the plugin shuts down
      return refuse(err, HURRAY_E_DEVICE_UNAVAILABLE, "release_after: '%s' is shutting down",
                    d->name.c_str());
  }
  auto on = stream != nullptr ? static_cast<rt::Stream>(stream) : d->stream;
  if (event != nullptr) {
    if (const hurray_status st = release_stream(s, r, device, d, &on, err)) return st;
    const Result res = rt::stream_wait_event(api, on, static_cast<rt::Event>(event));
    if (res != rt::kSuccess)
      return rt_fail(err, api, HURRAY_OK, rt::stream_wait_name, res,
                     "release_after's stream on '%s'", d->name.c_str());
  }
  std::unique_ptr<Item> it(new Item{r->queue, done, user});
  const Result res = rt::launch_host_func<on_complete>(api, on, it.get());
  if (res != rt::kSuccess) {
    const char *which = event != nullptr    ? "release_after's"
                        : stream != nullptr ? "the given"
                                            : "the plugin's";
    return rt_fail(err, api, HURRAY_OK, rt::host_func_name(api), res, "%s stream of '%s'%s",
                   which, d->name.c_str(), rt::record_hint(res));
  }
  it.release();  // the host function's now (it may have run already)
  return HURRAY_OK;
}

}  // namespace hurray::gpu_stream
