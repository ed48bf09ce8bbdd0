// A view of `len` bytes at `off` of buffer p (hurray_buffer_view), for the
// tests that send or put views (tests/views, tests/net); the test stops
// (REQUIRE) with the library's message where it is refused.
#pragma once

#include <hurray.h>

#include <catch2/catch.hpp>

#include <cstdint>

namespace hurray_test {

inline hurray_buffer *view_of(hurray_buffer *p, uint64_t off, uint64_t len) {
  hurray_buffer *v = nullptr;
  hurray_error err{};
  const hurray_status st = hurray_buffer_view(p, off, len, &v, &err);
  INFO(err.message);
  REQUIRE(st == HURRAY_OK);
  return v;
}

}  // namespace hurray_test
