// The WebGPU plugin's thread (worker.h).
#include "worker.h"

namespace hurray::webgpu {

void Worker::start() {
  stopping_ = false;
  thread_ = std::thread([this] { loop(); });
}

void Worker::stop() noexcept {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Worker::submit(std::function<void()> *task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    task_ = task;
    done_ = false;
    failure_ = nullptr;
    finished_.store(false, std::memory_order_relaxed);
    pending_.store(true, std::memory_order_release);
  }
  cv_.notify_all();
  for (int i = 0; i < kSpin && !finished_.load(std::memory_order_acquire); ++i)
    std::this_thread::yield();
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return done_; });
  task_ = nullptr;
  if (failure_) std::rethrow_exception(failure_);
}

void Worker::loop() noexcept {
  for (;;) {
    for (int i = 0; i < kSpin && !pending_.load(std::memory_order_acquire); ++i)
      std::this_thread::yield();
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return stopping_ || (task_ != nullptr && !done_); });
    if (stopping_) return;
    std::function<void()> *task = task_;
    pending_.store(false, std::memory_order_relaxed);
    lock.unlock();
    std::exception_ptr failure;
    try {
      (*task)();
    } catch (...) {
      failure = std::current_exception();
    }
    lock.lock();
    failure_ = failure;
    done_ = true;
    finished_.store(true, std::memory_order_release);
    lock.unlock();
    cv_.notify_all();
  }
}

}  // namespace hurray::webgpu
