// A shareable (memfd) CPU buffer of `size` bytes at `alignment`, for the
// tests that send one to another process or check how it is mapped; the
// test stops (REQUIRE) with the library's message where it is refused.
#pragma once

#include <hurray.h>

#include <catch2/catch.hpp>

#include <cstdint>

namespace hurray_test {

inline hurray_buffer *alloc_shareable(uint64_t size, uint32_t alignment) {
  hurray_alloc_desc d = HURRAY_ALLOC_DESC_INIT;
  d.flags = HURRAY_ALLOC_SHAREABLE;
  d.byte_size = size;
  d.alignment = alignment;
  hurray_buffer *b = nullptr;
  hurray_error err{};
  const hurray_status st = hurray_buffer_alloc(nullptr, &d, &b, &err);
  INFO(err.message);
  REQUIRE(st == HURRAY_OK);
  return b;
}

}  // namespace hurray_test
