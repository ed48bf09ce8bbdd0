// hurray-inspect's input parsing: hex text and raw bytes.
#include "inspect_input.h"

namespace hurray::inspect {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool parse_hex(std::string_view text, std::vector<unsigned char> *out, std::string *why) {
  int hi = -1;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f')
      continue;
    const int v = hex_value(c);
    if (v < 0) {
      *why = "not a hex digit at position " + std::to_string(i) + ": '" +
             std::string(1, c) + "'";
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

}  // namespace hurray::inspect
