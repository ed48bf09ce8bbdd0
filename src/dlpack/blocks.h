// The memory of exported DLPack tensors (dlpack.cpp's blocks): one spare
// small block per thread in front of malloc, so that the common cycle (a
// tensor made, consumed and deleted on one thread) neither mallocs nor
// frees. Plain data in initial-exec TLS (no TLS wrapper call); a pthread
// key frees a thread's spare when the thread exits. Off under AddressSanitizer,
// so that a consumer touching a deleted tensor is still caught there.
#ifndef HURRAY_DLPACK_BLOCKS_H
#define HURRAY_DLPACK_BLOCKS_H

#include <cstddef>
#include <cstdlib>

#if defined(__SANITIZE_ADDRESS__)
#define HURRAY_DLPACK_SPARE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HURRAY_DLPACK_SPARE 0
#endif
#endif
#ifndef HURRAY_DLPACK_SPARE
#define HURRAY_DLPACK_SPARE 1
#endif

namespace hurray::detail::dlpack {

// Blocks of at most this many bytes are all allocated at this size, so
// that any of them can be reused for any other (dlpack.cpp picks it to hold
// a versioned tensor of up to 7 dimensions).
inline constexpr std::size_t kSmallBlock = 320;

struct SpareBlock {
  void *mem = nullptr;
  bool registered = false;  // the pthread key will free mem at thread exit
};
extern constinit thread_local SpareBlock t_spare __attribute__((tls_model("initial-exec")));

bool register_spare(SpareBlock &s);  // blocks.cpp; false: no key, free instead

// `bytes` of memory for a block; nullptr when out of memory.
[[gnu::always_inline]] inline void *block_alloc(std::size_t bytes) {
  if (!HURRAY_DLPACK_SPARE || bytes > kSmallBlock) return std::malloc(bytes);
  SpareBlock &s = t_spare;
  if (void *m = s.mem) {
    s.mem = nullptr;
    return m;
  }
  return std::malloc(kSmallBlock);
}

// Gives back what block_alloc(bytes) returned.
[[gnu::always_inline]] inline void block_free(void *mem, std::size_t bytes) {
  if (HURRAY_DLPACK_SPARE && bytes <= kSmallBlock) {
    SpareBlock &s = t_spare;
    if (!s.mem && (s.registered || register_spare(s))) {
      s.mem = mem;
      return;
    }
  }
  std::free(mem);
}

}  // namespace hurray::detail::dlpack

#endif
