// A process-lifetime pool of fixed-size records, so that wrapping and
// releasing a handoff allocates nothing once warm. Records are never freed
// (a stale pointer to one is always safe to read, which is how a double
// release through a copied handoff is detected), and each has a stable index.
// The free list is a lock-free stack whose head carries a tag against ABA.
// Header-only and free of libhurray's symbols: the handoff layer's records
// and the OpenCL plugin's allocation records both use it.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <new>

#include <sys/mman.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define HURRAY_POOL_LSAN 1
#endif

namespace hurray::detail {

// T must have `std::atomic<uint32_t> pool_next` and `uint32_t pool_index`.
template <class T>
class Pool {
 public:
  static constexpr uint32_t kChunkBits = 10;
  static constexpr uint32_t kChunk = 1u << kChunkBits;
  static constexpr uint32_t kMaxChunks = 1u << 14;  // 16M records
  static constexpr size_t kChunkBytes = sizeof(T) * kChunk;

  // nullptr when out of memory.
  T *pop() noexcept {
    for (;;) {
      uint64_t head = head_.load(std::memory_order_acquire);
      while ((head & 0xFFFFFFFFu) != 0) {
        T *top = at(static_cast<uint32_t>(head & 0xFFFFFFFFu) - 1);
        const uint64_t next = top->pool_next.load(std::memory_order_relaxed);
        const uint64_t tagged = ((head >> 32) + 1) << 32 | next;
        if (head_.compare_exchange_weak(head, tagged, std::memory_order_acq_rel,
                                        std::memory_order_acquire))
          return top;
      }
      if (!grow()) return nullptr;
    }
  }

  void push(T *t) noexcept { push_list(t, t); }

  // One past the highest index a record has had: find() knows [0, capacity()).
  uint64_t capacity() const noexcept {
    return static_cast<uint64_t>(nchunks_.load(std::memory_order_acquire)) * kChunk;
  }

  // Free every record, for an owner that goes away (a plugin's state at
  // shutdown) when no thread uses the pool or any record from it any more.
  void destroy() noexcept {
    const uint32_t n = nchunks_.load(std::memory_order_acquire);
    for (uint32_t i = 0; i < n; ++i) {
      T *chunk = chunks_[i].exchange(nullptr);
      for (uint32_t j = 0; j < kChunk; ++j) chunk[j].~T();
#ifdef HURRAY_POOL_LSAN
      __lsan_unregister_root_region(chunk, kChunkBytes);
#endif
      munmap(chunk, kChunkBytes);
    }
    nchunks_.store(0, std::memory_order_release);
    head_.store(0, std::memory_order_release);
  }

  // The record with this index, or nullptr if it was never handed out.
  T *find(uint64_t index) const noexcept {
    if (index >= static_cast<uint64_t>(nchunks_.load(std::memory_order_acquire)) * kChunk)
      return nullptr;
    return at(static_cast<uint32_t>(index));
  }

 private:
  T *at(uint32_t index) const noexcept {
    return &chunks_[index >> kChunkBits].load(std::memory_order_acquire)[index & (kChunk - 1)];
  }

  // Push the chain first..last (linked through pool_next) in one step.
  void push_list(T *first, T *last) noexcept {
    uint64_t head = head_.load(std::memory_order_relaxed);
    do {
      last->pool_next.store(static_cast<uint32_t>(head & 0xFFFFFFFFu), std::memory_order_relaxed);
    } while (!head_.compare_exchange_weak(head, ((head >> 32) + 1) << 32 | (first->pool_index + 1),
                                          std::memory_order_acq_rel, std::memory_order_relaxed));
  }

  bool grow() noexcept {
    std::lock_guard<std::mutex> lock(grow_);
    if ((head_.load(std::memory_order_acquire) & 0xFFFFFFFFu) != 0) return true;  // someone else did
    const uint32_t n = nchunks_.load(std::memory_order_relaxed);
    if (n == kMaxChunks) return false;
    // Chunks are mapped pages, not heap: a pool that grows in the middle of
    // an application's work leaves the layout of its heap alone (a 90 KiB
    // chunk carved from the top of the heap made PoCL's every free of a
    // cl_mem consolidate it, bench/count.c showed).
    void *mem = mmap(nullptr, kChunkBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
    if (mem == MAP_FAILED) return false;
#ifdef HURRAY_POOL_LSAN
    // LeakSanitizer does not look inside mapped pages by itself; records
    // hold pointers to heap objects (a context, a buffer).
    __lsan_register_root_region(mem, kChunkBytes);
#endif
    T *chunk = static_cast<T *>(mem);
    for (uint32_t i = 0; i < kChunk; ++i) new (&chunk[i]) T;
    for (uint32_t i = 0; i < kChunk; ++i) {
      chunk[i].pool_index = n * kChunk + i;
      chunk[i].pool_next.store(i + 1 < kChunk ? n * kChunk + i + 2 : 0, std::memory_order_relaxed);
    }
    chunks_[n].store(chunk, std::memory_order_release);
    nchunks_.store(n + 1, std::memory_order_release);
    push_list(&chunk[0], &chunk[kChunk - 1]);
    return true;
  }

  std::atomic<uint64_t> head_{0};  // tag << 32 | (index + 1); low word 0 = empty
  std::atomic<uint32_t> nchunks_{0};
  std::atomic<T *> chunks_[kMaxChunks] = {};
  std::mutex grow_;
};

}  // namespace hurray::detail
