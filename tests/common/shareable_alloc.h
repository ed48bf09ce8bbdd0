// A shareable buffer of `size` bytes at `alignment` (a memfd on the CPU, by
// default), for the tests that send one to another process or check how it
// is mapped; the test stops (REQUIRE) with the library's message where it is
// refused.
#pragma once

#include <hurray.h>

#include <cstdint>

#include "buffer_calls.h"

namespace hurray_test {

inline hurray_buffer *alloc_shareable(uint64_t size, uint32_t alignment,
                                      uint8_t tag = HURRAY_DEVICE_CPU,
                                      uint8_t memory_class = HURRAY_MEMORY_STANDARD,
                                      int32_t ordinal = 0) {
  return alloc(alloc_desc(size, alignment, tag, memory_class, ordinal, HURRAY_ALLOC_SHAREABLE));
}

}  // namespace hurray_test
