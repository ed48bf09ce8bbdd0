// The one format of hurray_error.message (docs/errors.md), written by one
// function that libhurray (core/errors.cpp), libhurray-net (net/ucx.cpp) and
// every plugin (backends/kit/errors.cpp) share, so that the rule ID, the
// prefix and the cut come out the same everywhere:
//   [RULE-ID ": "] [who ": "] text
// Header-only and libc-only: it calls nothing of libhurray, so a plugin may
// compile it in.
#pragma once

#include <hurray.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace hurray::detail {

// Write "[rule_id: ][who: ]<fmt...>" into message (HURRAY_ERROR_MESSAGE_SIZE
// bytes, always NUL-terminated). rule_id and who may be NULL or "" (left out).
// A rule ID the text starts with ("BP-X: ...") is written once, first,
// instead of rule_id (it is rule_id, or a finer ID of the library). A text
// that does not fit is cut at a UTF-8 character boundary and ends in "...".
__attribute__((format(printf, 4, 0))) inline void write_message(
    char (&message)[HURRAY_ERROR_MESSAGE_SIZE], const char *rule_id, const char *who,
    const char *fmt, va_list ap) noexcept {
  constexpr size_t kSize = HURRAY_ERROR_MESSAGE_SIZE;
  char text[kSize];
  const int n = std::vsnprintf(text, sizeof text, fmt, ap);
  bool cut = n >= static_cast<int>(sizeof text);
  if (n < 0) text[0] = '\0';
  // A rule ID typed in front of the text ("BP-REL-DEFER: ...", the same as
  // rule_id or a finer one the library defines) is the one that goes first.
  char typed[HURRAY_ERROR_RULE_ID_SIZE] = "";
  const size_t id_len = std::strspn(text, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-");
  const char *rest = text;
  if (id_len > 0 && id_len < sizeof typed && text[id_len] == ':' &&
      std::memchr(text, '-', id_len) != nullptr && text[0] != '-') {
    std::memcpy(typed, text, id_len);
    rest = text + id_len + (text[id_len + 1] == ' ' ? 2 : 1);
    rule_id = typed;
  }
  const bool has_rule = rule_id != nullptr && rule_id[0] != '\0';
  const bool has_who = who != nullptr && who[0] != '\0';
  const int m = std::snprintf(message, kSize, "%s%s%s%s%s", has_rule ? rule_id : "",
                              has_rule ? ": " : "", has_who ? who : "", has_who ? ": " : "", rest);
  if (m >= static_cast<int>(kSize)) cut = true;
  if (!cut) return;
  // End on a whole character, then mark the cut.
  size_t end = kSize - 4;
  while (end > 0 && (static_cast<unsigned char>(message[end]) & 0xC0) == 0x80) --end;
  std::memcpy(message + end, "...", 4);
}

}  // namespace hurray::detail
