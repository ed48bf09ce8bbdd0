// What the release_after tests share (tests/release and the CUDA plugin's
// tests): a handoff of a wrapped opaque buffer whose release the test
// observes through its free function; the bounded waits are bounded_wait.h's.
// Header-only, for Catch2 test programs (wrapped_handoff needs libhurray).
#pragma once

#include <hurray.h>

#include <catch2/catch.hpp>
#include <cstdint>

#include "bounded_wait.h"

namespace release_test {

// A handoff of a wrapped opaque buffer of `tag` (its handle is `user`, never
// read) whose release calls free_fn(user, user).
inline hurray_handoff wrapped_handoff(hurray_context *ctx, uint8_t tag,
                                      void (*free_fn)(void *, void *), void *user) {
  hurray_buffer_desc bd = HURRAY_BUFFER_DESC_INIT;
  bd.flags = HURRAY_HANDOFF_OPAQUE_DATA;
  bd.handle.byte_size = 256;
  bd.handle.alignment = 64;
  bd.handle.device_tag = tag;
  bd.handle.sync_mode = HURRAY_SYNC_PRODUCER_SYNCED;
  bd.handle.memory_class = HURRAY_MEMORY_STANDARD;
  bd.data = user;  // any non-NULL handle
  bd.free_fn = free_fn;
  bd.free_user = user;
  hurray_error err{};
  hurray_buffer *b = nullptr;
  INFO(err.message);
  REQUIRE(hurray_buffer_wrap(ctx, &bd, &b, &err) == HURRAY_OK);
  hurray_handoff h{};
  REQUIRE(hurray_buffer_export(b, nullptr, &h, &err) == HURRAY_OK);
  hurray_buffer_unref(b);
  return h;
}

}  // namespace release_test
