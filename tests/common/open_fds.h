// The number of descriptors this process holds, for tests that check a peer
// or a refusal leaves none behind (compare before and after). The
// directory's own descriptor, open while it is read, is not counted.
#pragma once

#include <dirent.h>

#include <cstdio>
#include <cstdlib>

namespace hurray_test {

inline int open_fds() {
  DIR *d = opendir("/proc/self/fd");
  if (d == nullptr) {  // a count that cannot be taken must not compare equal
    std::perror("open_fds: /proc/self/fd");
    std::abort();
  }
  int n = 0;
  while (const dirent *e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n - 1;
}

}  // namespace hurray_test
