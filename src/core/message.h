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
// The rule ID is not repeated when the text already starts with it. A text
// that does not fit is cut at a UTF-8 character boundary and ends in "...".
__attribute__((format(printf, 4, 0))) inline void write_message(
    char (&message)[HURRAY_ERROR_MESSAGE_SIZE], const char *rule_id, const char *who,
    const char *fmt, va_list ap) noexcept {
  constexpr size_t kSize = HURRAY_ERROR_MESSAGE_SIZE;
  char text[kSize];
  const int n = std::vsnprintf(text, sizeof text, fmt, ap);
  bool cut = n >= static_cast<int>(sizeof text);
  if (n < 0) text[0] = '\0';
  const bool has_rule = rule_id != nullptr && rule_id[0] != '\0';
  const size_t rule_len = has_rule ? std::strlen(rule_id) : 0;
  const char *rest = text;  // the text without a rule ID typed in front of it
  if (has_rule && std::strncmp(text, rule_id, rule_len) == 0 && text[rule_len] == ':')
    rest = text + rule_len + (text[rule_len + 1] == ' ' ? 2 : 1);
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
