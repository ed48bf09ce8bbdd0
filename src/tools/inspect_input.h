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

// Append everything `f` yields until end of file to *out. Returns false on a
// read error.
bool read_all(std::FILE *f, std::vector<unsigned char> *out);

}  // namespace hurray::inspect
