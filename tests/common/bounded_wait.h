// Bounded waits for tests whose results arrive on another thread: wait_for
// polls a predicate every millisecond until it holds or kWaitMs passed
// (wait_for_each: a count per item, until none is zero);
// settle() gives a wrong extra or early completion the time to show (not a
// timing assertion).
#pragma once

#include <chrono>
#include <thread>

namespace hurray_test {

constexpr int kWaitMs = 20000;

// False when ms (default kWaitMs) milliseconds passed before pred() held.
template <class Pred>
bool wait_for(Pred pred, int ms = kWaitMs) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// wait_for until count(x) is non-zero for every x of items.
template <class Items, class Count>
bool wait_for_each(Items &items, Count count, int ms = kWaitMs) {
  return wait_for(
      [&] {
        for (auto &x : items)
          if (count(x) == 0) return false;
        return true;
      },
      ms);
}

inline void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(100)); }

}  // namespace hurray_test
