// fuzz_inspect_input: hurray-inspect's input parsing (src/tools/
// inspect_input.cpp) on any text. Properties:
//  - hex_value gives 0-15 for exactly the 22 hex digit characters;
//  - parse_hex accepts exactly the texts made of hex digits and whitespace
//    (space, \t, \n, \r, \v, \f) with an even number of digits;
//  - accepted, it appends to what *out held and the bytes it appended,
//    written back as hex, are the text's digits (case aside);
//  - refused, it says why: the position and character of the first
//    character that is neither, else the odd digit count; what it appended
//    by then is a prefix of the bytes the digits before it spell;
//  - read_all returns exactly the bytes a stream holds; read_capped the
//    same up to its limit, and kTooBig (holding at most limit + 1 bytes)
//    past it;
//  - printable() keeps printable ASCII, writes every other byte as \xNN,
//    its result is printable ASCII only, and printable() of it is itself;
//  - parse_size accepts exactly digits with an optional K/M/G suffix.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_util.h"
#include "inspect_input.h"

using namespace hurray_fuzz;
using hurray::inspect::hex_value;
using hurray::inspect::parse_hex;
using hurray::inspect::parse_size;
using hurray::inspect::printable;
using hurray::inspect::read_all;
using hurray::inspect::read_capped;
using hurray::inspect::ReadResult;

namespace {

// The oracle's own classification, not the parser's.
int digit_value(unsigned char c) {
  static const char kDigits[] = "0123456789abcdef";
  for (int v = 0; v < 16; ++v)
    if (c == static_cast<unsigned char>(kDigits[v]) ||
        c == static_cast<unsigned char>(kDigits[v] - (v >= 10 ? 'a' - 'A' : 0)))
      return v;
  return -1;
}
bool is_space(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// The oracle's escape of one byte.
std::string oracle_printable(unsigned char c) {
  if (c >= 0x20 && c < 0x7F) return std::string(1, static_cast<char>(c));
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", c);
  return buf;
}

void check_printable(const uint8_t *data, size_t size) {
  const std::string_view text(reinterpret_cast<const char *>(data), size);
  std::string want;
  for (size_t i = 0; i < size; ++i) want += oracle_printable(data[i]);
  const std::string got = printable(text);
  FUZZ_CHECK(got == want, "printable escapes exactly the bytes outside printable ASCII");
  for (const char c : got)
    FUZZ_CHECK(c >= 0x20 && c < 0x7F, "printable's result is printable ASCII");
  FUZZ_CHECK(printable(got) == got, "printable of printable text is itself");
}

void check_read_capped(const uint8_t *data, size_t size) {
  if (size == 0) return;
  const size_t limit = data[0] % 64;
  std::vector<uint8_t> copy(data, data + size);
  std::FILE *f = fmemopen(copy.data(), copy.size(), "rb");
  FUZZ_CHECK(f != nullptr, "fmemopen");
  std::vector<unsigned char> got;
  const ReadResult r = read_capped(f, limit, &got);
  std::fclose(f);
  if (size <= limit) {
    FUZZ_CHECK(r == ReadResult::kOk && got.size() == size &&
                   std::memcmp(got.data(), data, size) == 0,
               "read_capped reads a stream within its limit whole");
  } else {
    FUZZ_CHECK(r == ReadResult::kTooBig && got.size() <= limit + 1,
               "read_capped stops one byte past its limit");
  }
}

void check_parse_size(const uint8_t *data, size_t size) {
  const std::string_view text(reinterpret_cast<const char *>(data), size < 24 ? size : 24);
  size_t v = 0;
  const bool ok = parse_size(text, &v);
  bool want = !text.empty();
  std::string_view digits = text;
  if (want && std::strchr("KkMmGg", digits.back()) && digits.back() != '\0')
    digits.remove_suffix(1);
  want = want && !digits.empty();
  for (const char c : digits) want = want && c >= '0' && c <= '9';
  if (!want) FUZZ_CHECK(!ok, "parse_size refuses what is not digits and a suffix");
  if (ok && digits == text && digits.size() < 10) {
    size_t n = 0;
    for (const char c : digits) n = n * 10 + static_cast<size_t>(c - '0');
    FUZZ_CHECK(v == n, "parse_size reads plain digits");
  }
}

void check_hex_value_once() {
  static bool done = false;
  if (done) return;
  for (int c = 0; c < 256; ++c)
    FUZZ_CHECK(hex_value(static_cast<char>(c)) == digit_value(static_cast<unsigned char>(c)),
               "hex_value is 0-15 for 0-9, a-f, A-F and -1 for every other byte");
  done = true;
}

void check_read_all(const uint8_t *data, size_t size) {
  if (size == 0) return;  // fmemopen needs a non-empty buffer
  std::vector<uint8_t> copy(data, data + size);
  std::FILE *f = fmemopen(copy.data(), copy.size(), "rb");
  FUZZ_CHECK(f != nullptr, "fmemopen");
  std::vector<unsigned char> got{0x42};  // read_all appends
  const bool ok = read_all(f, &got);
  std::fclose(f);
  FUZZ_CHECK(ok, "read_all reads a memory stream without error");
  FUZZ_CHECK(got.size() == size + 1 && got[0] == 0x42 &&
                 std::memcmp(got.data() + 1, data, size) == 0,
             "read_all appends exactly the stream's bytes");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  check_hex_value_once();
  const std::string_view text(reinterpret_cast<const char *>(data), size);

  // What the oracle expects.
  std::string digits;  // the hex digits, lower case
  size_t bad = std::string_view::npos;
  for (size_t i = 0; i < size; ++i) {
    const unsigned char c = data[i];
    const int v = digit_value(c);
    if (v >= 0) {
      digits += "0123456789abcdef"[v];
    } else if (!is_space(c)) {
      bad = i;
      break;
    }
  }
  const bool want_ok = bad == std::string_view::npos && digits.size() % 2 == 0;

  const std::vector<unsigned char> prefix{0xDE, 0xAD};  // parse_hex appends
  std::vector<unsigned char> out = prefix;
  std::string why;
  const bool ok = parse_hex(text, &out, &why);
  failure_context() = [&] {
    print_hex("text", data, size);
    std::fprintf(stderr, "  parse_hex: %s, why \"%s\", %zu bytes out\n", ok ? "ok" : "refused",
                 why.c_str(), out.size());
  };
  if (ok) verdict_accepted();
  else verdict_refused({""});
  FUZZ_CHECK(ok == want_ok,
             "parse_hex accepts exactly hex digits and whitespace, an even number of digits");
  FUZZ_CHECK(out.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), out.begin()),
             "parse_hex appends to *out and keeps what it held");

  // The appended bytes, as lower-case hex.
  std::string again;
  for (size_t i = prefix.size(); i < out.size(); ++i) {
    again += "0123456789abcdef"[out[i] >> 4];
    again += "0123456789abcdef"[out[i] & 15];
  }
  if (ok) {
    FUZZ_CHECK(again == digits, "the bytes re-encode to the text's digits");
  } else {
    FUZZ_CHECK(!why.empty(), "a refusal says why");
    FUZZ_CHECK(digits.compare(0, again.size(), again) == 0,
               "bytes appended before a refusal spell the digits read so far");
    if (bad != std::string_view::npos) {
      const std::string want = "not a hex digit at position " + std::to_string(bad) + ": '" +
                               oracle_printable(data[bad]) + "'";
      FUZZ_CHECK(why == want, "a refusal names the first bad character and its position");
    } else {
      FUZZ_CHECK(why.rfind("odd number of hex digits", 0) == 0,
                 "with only digits and whitespace, a refusal is the odd digit count");
    }
  }
  check_read_all(data, size);
  check_read_capped(data, size);
  check_printable(data, size);
  check_parse_size(data, size);
  failure_context() = nullptr;
  return 0;
}
