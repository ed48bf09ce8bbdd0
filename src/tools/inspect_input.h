// hurray-inspect's input parsing, apart from the tool so that it can be
// tested and fuzzed on its own (tests/fuzz/fuzz_inspect_input.cpp).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace hurray::inspect {

// The value of one hex digit (0-9, a-f, A-F), -1 for any other character.
int hex_value(char c);

// Parse hex digits, ignoring whitespace (space, \t, \n, \r, \v, \f), and
// append the bytes they spell to *out, two digits a byte, high nibble first.
// Returns false and sets *why on any other character (naming its position)
// or on an odd number of digits; *out may then hold a partial result.
bool parse_hex(std::string_view text, std::vector<unsigned char> *out, std::string *why);

// True when `bytes` is non-empty and holds only hex digits and whitespace,
// with at least two digits: hex text, not raw handle bytes.
bool looks_like_hex_text(const std::vector<unsigned char> &bytes);

// Append everything `f` yields until end of file to *out. Returns false on a
// read error.
bool read_all(std::FILE *f, std::vector<unsigned char> *out);

enum class ReadResult { kOk, kError, kTooBig };

// As read_all, but stop once more than `limit` bytes have come: kTooBig
// (then *out holds limit + 1 bytes at most, so memory stays bounded, even
// for /dev/zero).
ReadResult read_capped(std::FILE *f, size_t limit, std::vector<unsigned char> *out);

// `s` with every byte that is not printable ASCII (below 0x20, 0x7F and
// above) and the backslash written as \xNN, so that a message quoting input
// never sends control bytes to a terminal.
std::string printable(std::string_view s);

// "1048576", "64K", "16M", "2G" (binary multiples) as a byte count; false
// for anything else or a value that does not fit in size_t.
bool parse_size(std::string_view s, size_t *out);

}  // namespace hurray::inspect
