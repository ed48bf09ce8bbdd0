// The WebGPU plugin's unavailable reasons (src/backends/webgpu/reason.h):
// the head (what failed, the fix) always whole, the vendor's words cut at a
// word with "..." when hurray_error.message cannot hold them all.
#include <catch2/catch.hpp>

#include <string>

#include "webgpu/reason.h"

using hurray::webgpu::clip_reason;

TEST_CASE("webgpu: a reason too long for hurray_error.message is cut at a word, the fix kept",
          "[webgpu][reason]") {
  const std::string head = "webgpu: no adapter from Dawn (fix: EGL_PLATFORM=surfaceless)";
  CHECK(clip_reason(head, "short", 255) == head + ": short");
  std::string why;
  while (why.size() < 400) why += "[wgpuInstanceRequestAdapter] WGPURequestAdapterStatus 2; ";
  const std::string got = clip_reason(head, why, 255);
  INFO(got);
  REQUIRE(got.size() <= 255);
  CHECK(got.compare(0, head.size(), head) == 0);
  REQUIRE(got.size() > 3);
  CHECK(got.substr(got.size() - 3) == "...");
  const std::string kept = got.substr(0, got.size() - 3);
  const std::string full = head + ": " + why;
  // Cut where a word ends: the full text goes on with a space (or the
  // punctuation before one), never with the rest of a word.
  REQUIRE(full.compare(0, kept.size(), kept) == 0);
  const char next = full[kept.size()];
  CHECK((next == ' ' || next == ';' || next == ','));
  // One word longer than the room: the head stays, the word goes.
  const std::string one_word(400, 'x');
  CHECK(clip_reason(head, one_word, 255) == head + ":...");
}
