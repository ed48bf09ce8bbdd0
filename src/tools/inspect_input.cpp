// hurray-inspect's input parsing: hex text and raw bytes.
#include "inspect_input.h"

namespace hurray::inspect {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

namespace {
bool is_space(int c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}
}  // namespace

bool looks_like_hex_text(const std::vector<unsigned char> &bytes) {
  size_t digits = 0;
  for (const unsigned char b : bytes) {
    if (hex_value(static_cast<char>(b)) >= 0)
      ++digits;
    else if (!is_space(b))
      return false;
  }
  return digits >= 2;
}

bool parse_hex(std::string_view text, std::vector<unsigned char> *out, std::string *why) {
  int hi = -1;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (is_space(static_cast<unsigned char>(c))) continue;
    const int v = hex_value(c);
    if (v < 0) {
      *why = "not a hex digit at position " + std::to_string(i) + ": '" +
             printable(std::string_view(&text[i], 1)) + "'";
      return false;
    }
    if (hi < 0) {
      hi = v;
    } else {
      out->push_back(static_cast<unsigned char>(hi << 4 | v));
      hi = -1;
    }
  }
  if (hi >= 0) {
    *why = "odd number of hex digits (half a byte at the end)";
    return false;
  }
  return true;
}

bool read_all(std::FILE *f, std::vector<unsigned char> *out) {
  unsigned char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out->insert(out->end(), buf, buf + n);
  return !std::ferror(f);
}

ReadResult read_capped(std::FILE *f, size_t limit, std::vector<unsigned char> *out) {
  unsigned char buf[65536];
  const size_t start = out->size();
  for (;;) {
    const size_t have = out->size() - start;
    const size_t room = have > limit ? 0 : limit - have + 1;  // one byte past: too big
    if (room == 0) return ReadResult::kTooBig;
    const size_t n = std::fread(buf, 1, room < sizeof buf ? room : sizeof buf, f);
    if (n == 0) break;
    out->insert(out->end(), buf, buf + n);
  }
  if (std::ferror(f)) return ReadResult::kError;
  return out->size() - start > limit ? ReadResult::kTooBig : ReadResult::kOk;
}

std::string printable(std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  std::string r;
  r.reserve(s.size());
  for (const char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7F) {
      r += ch;
    } else {
      r += "\\x";
      r += kHex[c >> 4];
      r += kHex[c & 15];
    }
  }
  return r;
}

bool parse_size(std::string_view s, size_t *out) {
  if (s.empty()) return false;
  size_t unit = 1;
  switch (s.back()) {
    case 'K': case 'k': unit = size_t{1} << 10; break;
    case 'M': case 'm': unit = size_t{1} << 20; break;
    case 'G': case 'g': unit = size_t{1} << 30; break;
    default: break;
  }
  if (unit != 1) s.remove_suffix(1);
  if (s.empty() || s.size() > 20) return false;
  size_t v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
    if (__builtin_mul_overflow(v, size_t{10}, &v) ||
        __builtin_add_overflow(v, static_cast<size_t>(c - '0'), &v))
      return false;
  }
  return !__builtin_mul_overflow(v, unit, out);
}

}  // namespace hurray::inspect
