// A shareable buffer of `size` bytes at `alignment` (a memfd on the CPU, by
// default), for the tests that send one to another process or check how it
// is mapped; the test stops (REQUIRE) with the library's message where it is
// refused.
#pragma once

#include <hurray.h>

#include <catch2/catch.hpp>

#include <cstdint>

namespace hurray_test {

inline hurray_buffer *alloc_shareable(uint64_t size, uint32_t alignment,
                                      uint8_t tag = HURRAY_DEVICE_CPU,
                                      uint8_t memory_class = HURRAY_MEMORY_STANDARD,
                                      int32_t ordinal = 0) {
  hurray_alloc_desc d = HURRAY_ALLOC_DESC_INIT;
  d.flags = HURRAY_ALLOC_SHAREABLE;
  d.byte_size = size;
  d.alignment = alignment;
  d.device_tag = tag;
  d.memory_class = memory_class;
  d.device_ordinal = ordinal;
  hurray_buffer *b = nullptr;
  hurray_error err{};
  const hurray_status st = hurray_buffer_alloc(nullptr, &d, &b, &err);
  INFO(err.message);
  REQUIRE(st == HURRAY_OK);
  return b;
}

}  // namespace hurray_test
