// The WebGPU plugin's own thread: every call into Dawn is made on it. Dawn's
// OpenGL ES backend keeps its GL context current on the thread that last
// used it, and a context current on one thread cannot be made current on
// another (Dawn then loses the device), so calls from the caller's threads
// are handed to this one thread and waited for. Callers are serialised by
// the state's mutex first: one task at a time. Both sides yield-spin a
// little (kSpin yields) before sleeping on the condition variable, so that
// a call that follows another soon pays no thread wake-up.
#pragma once

#include <atomic>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace hurray::webgpu {

class Worker {
 public:
  Worker() = default;
  Worker(const Worker &) = delete;
  Worker &operator=(const Worker &) = delete;
  ~Worker() { stop(); }

  void start();         // may throw std::system_error
  void stop() noexcept;  // runs nothing more; joins the thread

  // Run f on the worker and wait for it (directly when already there); an
  // exception f throws is thrown here.
  template <class F>
  auto run(F &&f) -> decltype(f()) {
    if (!thread_.joinable() || std::this_thread::get_id() == thread_.get_id()) return f();
    using R = decltype(f());
    if constexpr (std::is_void_v<R>) {
      std::function<void()> task = [&f] { f(); };
      submit(&task);
    } else {
      R result{};
      std::function<void()> task = [&f, &result] { result = f(); };
      submit(&task);
      return result;
    }
  }

 private:
  void submit(std::function<void()> *task);  // runs it on the worker, rethrows
  void loop() noexcept;

  static constexpr int kSpin = 64;

  std::thread thread_;
  std::atomic<bool> pending_{false};   // a task waits for the worker
  std::atomic<bool> finished_{false};  // the task given has run
  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> *task_ = nullptr;
  std::exception_ptr failure_;
  bool done_ = false;
  bool stopping_ = false;
};

}  // namespace hurray::webgpu
