// Helpers shared by the fuzz targets: a property check that aborts (so
// libFuzzer records the input as a crash), a reader that turns the fuzzer's
// bytes into choices, and printing for failure reports.
#pragma once

#include <hurray.h>

#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace hurray_fuzz {

// What to print, besides the broken property, about the input at hand (the
// targets set it to dump the table and the diagnostics).
inline std::function<void()> &failure_context() {
  static std::function<void()> fn;
  return fn;
}

// A broken property: say which and where, then abort. Under libFuzzer the
// abort is a crash; the input is saved as crash-<sha1> in -artifact_prefix.
[[noreturn]] inline void property_failed(const char *file, int line, const char *expr,
                                         const char *why) {
  std::fprintf(stderr, "\n%s:%d: PROPERTY BROKEN: %s\n  %s\n", file, line, expr, why);
  if (failure_context()) failure_context()();
  std::fflush(stderr);
  std::abort();
}

#define FUZZ_CHECK(cond, why)                                            \
  do {                                                                   \
    if (!(cond)) ::hurray_fuzz::property_failed(__FILE__, __LINE__, #cond, (why)); \
  } while (0)

// The target's verdict on the input, read by the seed-corpus replay
// (replay_main.cpp), which holds it against the seed's name: ok-* must be
// accepted with no finding, warn-RULE-* accepted with a warning of RULE,
// bad-* refused (bad-RULE-*: with an error of RULE). A target that reports
// no verdict makes no claim (its seeds may have any name); one that reports
// one must have every seed named so. Under libFuzzer it is written and
// never read.
struct Verdict {
  bool reported = false;
  bool accepted = false;
  std::vector<std::string> errors, warnings;  // rule IDs, "" where none applies
};
inline Verdict &verdict() {
  static Verdict v;
  return v;
}
inline void verdict_accepted(std::vector<std::string> warnings = {}) {
  verdict() = Verdict{true, true, {}, std::move(warnings)};
}
inline void verdict_refused(std::vector<std::string> errors) {
  verdict() = Verdict{true, false, std::move(errors), {}};
}

// Choices from the input: each call takes the next bytes; once the input is
// used up every read returns 0, so any input (even an empty one) is a valid
// sequence of choices.
class Reader {
 public:
  Reader(const uint8_t *data, size_t size) : p_(data), n_(size) {}
  uint8_t u8() {
    if (n_ == 0) return 0;
    --n_;
    return *p_++;
  }
  uint16_t u16() { return static_cast<uint16_t>(u8() | u8() << 8); }
  uint32_t u32() { return static_cast<uint32_t>(u16() | uint32_t{u16()} << 16); }
  uint64_t u64() { return u32() | uint64_t{u32()} << 32; }
  size_t left() const { return n_; }
  const uint8_t *rest() const { return p_; }

 private:
  const uint8_t *p_;
  size_t n_;
};

inline void print_error(const char *label, const hurray_error &e) {
  std::fprintf(stderr,
               "  %s: status %d rule %u severity %d index %" PRId64 " offset %" PRId64
               " rule_id \"%.32s\"\n    message \"%.256s\"\n",
               label, e.status, e.rule, e.severity, e.buffer_index, e.byte_offset,
               e.rule_id, e.message);
}

inline void print_hex(const char *label, const uint8_t *p, size_t n) {
  std::fprintf(stderr, "  %s (%zu bytes):", label, n);
  for (size_t i = 0; i < n; ++i) std::fprintf(stderr, "%s%02x", i % 16 ? "" : " ", p[i]);
  std::fprintf(stderr, "\n");
}

inline bool same_error(const hurray_error &a, const hurray_error &b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

}  // namespace hurray_fuzz
