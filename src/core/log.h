// HURRAY_LOG=debug: one line on stderr per event, "<prefix>: <text>", for
// libhurray ("hurray") and libhurray-net ("hurray-net") alike. The variable
// is read once per library. Not installed.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace hurray::detail {

inline bool debug_logging() noexcept {
  static const bool on = [] {
    const char *v = std::getenv("HURRAY_LOG");
    return v != nullptr && std::strcmp(v, "debug") == 0;
  }();
  return on;
}

// The line of a printf-style log_debug(fmt, ...), under `prefix`.
inline void vlog_debug(const char *prefix, const char *fmt, va_list ap) noexcept {
  char line[512];
  std::vsnprintf(line, sizeof line, fmt, ap);
  std::fprintf(stderr, "%s: %s\n", prefix, line);
}

}  // namespace hurray::detail
