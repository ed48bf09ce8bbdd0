// libhurray's buffer calls that a test needs to succeed, one line each:
// where one fails, the test stops (REQUIRE) with the library's message.
// Header-only, for Catch2 test programs.
#pragma once

#include <hurray.h>

#include <catch2/catch.hpp>

#include <cstdint>

namespace hurray_test {

// Stop the test unless st is HURRAY_OK, saying what err says.
inline void require_ok(hurray_status st, const hurray_error &err) {
  INFO(err.message);
  REQUIRE(st == HURRAY_OK);
}

// What hurray_buffer_alloc is asked for.
inline hurray_alloc_desc alloc_desc(uint64_t size, uint32_t alignment, uint8_t tag,
                                    uint8_t memory_class = HURRAY_MEMORY_STANDARD,
                                    int32_t ordinal = 0, uint32_t flags = 0) {
  return hurray_alloc_desc{.size = sizeof(hurray_alloc_desc), .flags = flags, .byte_size = size,
                           .alignment = alignment, .device_tag = tag, .memory_class = memory_class,
                           .reserved0 = {0, 0}, .device_ordinal = ordinal, .reserved1 = 0};
}

inline hurray_buffer *alloc(const hurray_alloc_desc &d) {
  hurray_buffer *b = nullptr;
  hurray_error err{};
  require_ok(hurray_buffer_alloc(nullptr, &d, &b, &err), err);
  return b;
}

inline hurray_buffer *wrap(const hurray_buffer_desc &d) {
  hurray_buffer *b = nullptr;
  hurray_error err{};
  require_ok(hurray_buffer_wrap(nullptr, &d, &b, &err), err);
  return b;
}

// The view of n bytes of parent from byte at.
inline hurray_buffer *view(hurray_buffer *parent, uint64_t at, uint64_t n) {
  hurray_buffer *v = nullptr;
  hurray_error err{};
  require_ok(hurray_buffer_view(parent, at, n, &v, &err), err);
  return v;
}

}  // namespace hurray_test
