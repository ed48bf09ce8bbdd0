// The Vulkan plugin: release_after. One waiter thread per device, started on
// first use and joined at shutdown, holds what is pending (timeline
// semaphore, value, done) and waits for any of them at once with
// vkWaitSemaphores(WAIT_ANY), together with a wake semaphore that a new entry
// (or shutdown) signals from the host; done runs on the waiter thread. The
// queue is bounded (kMaxPending): a caller beyond it waits for room, except
// the waiter thread itself (a done that releases after again). Entries
// pending at shutdown are dropped without calling done (their work never
// completed: guard mode reports them, BP-REL-DEFER).
#include "state.h"

#include <condition_variable>
#include <thread>

namespace hurray::vulkan {

struct ReleaseWaiter {
  struct Item {
    VkSemaphore sem;
    uint64_t value;
    void (*done)(void *);
    void *user;
  };
  static constexpr size_t kMaxPending = 4096;

  Device &d;
  VkSemaphore wake = VK_NULL_HANDLE;
  std::mutex mu;                // incoming, wake_value, stop, count
  std::condition_variable room;
  std::vector<Item> incoming;
  uint64_t wake_value = 0;
  size_t count = 0;             // incoming + the thread's own list
  bool stop = false;
  std::thread thread;

  explicit ReleaseWaiter(Device &dev) : d(dev) {}

  void signal_locked() noexcept {
    VkSemaphoreSignalInfo si{};
    si.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO;
    si.semaphore = wake;
    si.value = ++wake_value;
    (void)d.fn.vkSignalSemaphore(d.dev, &si);
  }

  void run() noexcept {
    std::vector<Item> pending;
    std::vector<VkSemaphore> sems;
    std::vector<uint64_t> values;
    for (;;) {
      uint64_t seen;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (stop) return;  // what is left never completed: dropped
        pending.insert(pending.end(), incoming.begin(), incoming.end());
        incoming.clear();
        seen = wake_value;
      }
      size_t fired = 0;
      for (size_t i = 0; i < pending.size();) {
        uint64_t now = 0;
        if (d.fn.vkGetSemaphoreCounterValue(d.dev, pending[i].sem, &now) == VK_SUCCESS &&
            now >= pending[i].value) {
          const Item it = pending[i];
          pending[i] = pending.back();
          pending.pop_back();
          it.done(it.user);
          ++fired;
        } else {
          ++i;
        }
      }
      if (fired) {
        std::lock_guard<std::mutex> lock(mu);
        count -= fired;
        room.notify_all();
      }
      sems.clear();
      values.clear();
      for (const Item &it : pending) {
        sems.push_back(it.sem);
        values.push_back(it.value);
      }
      sems.push_back(wake);
      values.push_back(seen + 1);
      VkSemaphoreWaitInfo wi{};
      wi.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
      wi.flags = VK_SEMAPHORE_WAIT_ANY_BIT;
      wi.semaphoreCount = static_cast<uint32_t>(sems.size());
      wi.pSemaphores = sems.data();
      wi.pValues = values.data();
      // Bounded, so that a lost device or a failed wait never spins nor hangs.
      (void)d.fn.vkWaitSemaphores(d.dev, &wi, 100'000'000);  // 100 ms
    }
  }
};

void WaiterDelete::operator()(ReleaseWaiter *w) const noexcept {
  {
    std::lock_guard<std::mutex> lock(w->mu);
    w->stop = true;
    w->signal_locked();
    w->room.notify_all();
  }
  if (w->thread.joinable()) w->thread.join();
  if (w->wake) w->d.fn.vkDestroySemaphore(w->d.dev, w->wake, nullptr);
  delete w;
}

namespace {

hurray_status start_waiter(Device &d, hurray_error *err) {
  std::lock_guard<std::mutex> lock(d.mu);
  if (d.waiter) return HURRAY_OK;
  std::unique_ptr<ReleaseWaiter, WaiterDelete> w(new ReleaseWaiter(d));
  const VkSemaphoreTypeCreateInfo type = timeline_type(nullptr);
  VkSemaphoreCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  ci.pNext = &type;
  const VkResult r = d.fn.vkCreateSemaphore(d.dev, &ci, nullptr, &w->wake);
  if (r != VK_SUCCESS)
    return vk_fail(err, status_of(r), "vkCreateSemaphore", r, "release_after's waiter on %s",
                   d.label.c_str());
  w->thread = std::thread([p = w.get()] { p->run(); });
  d.waiter = std::move(w);
  return HURRAY_OK;
}

}  // namespace

hurray_status release_after(void *state, int32_t device, void *stream, void *event,
                            uint64_t value, void (*done)(void *), void *user,
                            hurray_error *err) {
  auto [refused, s, d] = kit::enter<State>(state, device, err, "release_after: done",
                                           reinterpret_cast<const void *>(done));
  if (refused != HURRAY_OK) return refused;
  if (event == nullptr) {
    if (const hurray_status st = event_record_impl(d, stream, &event, &value, err)) return st;
  }
  if (const hurray_status st = start_waiter(*d, err)) return st;
  ReleaseWaiter &w = *d->waiter;
  std::unique_lock<std::mutex> lock(w.mu);
  if (std::this_thread::get_id() != w.thread.get_id())
    w.room.wait(lock, [&] { return w.count < ReleaseWaiter::kMaxPending || w.stop; });
  if (w.stop)
    return refuse(err, HURRAY_E_DEVICE_UNAVAILABLE, "release_after: %s is shutting down",
                  d->label.c_str());
  w.incoming.push_back({from_ptr<VkSemaphore>(event), value, done, user});
  ++w.count;
  w.signal_locked();
  return HURRAY_OK;
}

}  // namespace hurray::vulkan
