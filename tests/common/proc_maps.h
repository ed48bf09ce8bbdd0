// What /proc/self/maps says, for tests that check a library is (not) loaded
// or how a mapping is protected (tests/runtime, tests/ipc).
#pragma once

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

namespace hurray_test {

// Does a line of /proc/self/maps (a mapped file's path) contain needle?
inline bool mapped(const char *needle) {
  std::ifstream f("/proc/self/maps");
  std::string line;
  while (std::getline(f, line))
    if (line.find(needle) != std::string::npos) return true;
  return false;
}

// The permissions column ("rw-s") of the mapping holding p; "" if none does.
inline std::string perms_of(const void *p) {
  std::ifstream f("/proc/self/maps");
  std::string line;
  const auto a = reinterpret_cast<uintptr_t>(p);
  while (std::getline(f, line)) {
    unsigned long lo = 0, hi = 0;
    char perms[8] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %7s", &lo, &hi, perms) == 3 && a >= lo && a < hi)
      return perms;
  }
  return "";
}

}  // namespace hurray_test
