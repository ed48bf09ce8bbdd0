// An unavailable reason that fits hurray_error.message whole: the head (what
// failed and the fix) first, then as much of the vendor's words as fits, cut
// at a word with "..." rather than mid-word. Header-only, so that
// tests/backends/webgpu/reason_test.cpp checks it without Dawn.
#pragma once

#include <cstddef>
#include <string>

namespace hurray::webgpu {

// head + ": " + why, at most `room` characters (room >= head.size() + 5).
inline std::string clip_reason(const std::string &head, const std::string &why, size_t room) {
  std::string text = head + ": " + why;
  if (text.size() <= room) return text;
  size_t cut = text.rfind(' ', room - 3);  // the last word boundary that leaves room for "..."
  if (cut == std::string::npos || cut < head.size()) cut = head.size() + 1;
  while (cut > head.size() && (text[cut - 1] == ' ' || text[cut - 1] == ',' ||
                               text[cut - 1] == ';'))
    --cut;
  text.resize(cut);
  return text + "...";
}

}  // namespace hurray::webgpu
