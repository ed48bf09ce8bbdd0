// What the hurray.hpp and hurray_dlpack.hpp tests share: 256 bytes of CPU
// memory, 64-aligned, wrapped into a hurray::buffer whose free the test
// counts.
#pragma once

#include <hurray.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>

namespace hpp_test {

struct free_count {
  std::atomic<int> n{0};
};

inline void count_free(void *user, void *data) {
  static_cast<free_count *>(user)->n.fetch_add(1);
  std::free(data);
}

// 256 bytes, 64-aligned, filled by fill(mem), freed through count_free.
template <class Fill>
hurray::buffer wrapped_256(free_count &frees, Fill fill) {
  void *mem = std::aligned_alloc(64, 256);
  REQUIRE(mem != nullptr);
  fill(mem);
  hurray_buffer_desc d = HURRAY_BUFFER_DESC_INIT;
  d.handle.byte_size = 256;
  d.handle.alignment = 64;
  d.data = mem;
  d.free_fn = count_free;
  d.free_user = &frees;
  return hurray::buffer::wrap(d);
}

}  // namespace hpp_test
