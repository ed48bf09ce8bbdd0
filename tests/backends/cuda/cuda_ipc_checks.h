// Checks the fake IPC tests (Catch2 programs; not the consumer process) make
// of the fake runtime's counts (cuda_ipc_driver.h).
#pragma once

#include <catch2/catch.hpp>
#include <vector>

#include "cuda_ipc_driver.h"

namespace cuda_ipc_test {

// The counts after a test against those before it: no VMM memory left
// alive, no call the fake refused.
inline void check_nothing_left(const std::vector<int> &before, const std::vector<int> &after) {
  CHECK(after[kVmmLive] == before[kVmmLive]);
  CHECK(after[kBad] == before[kBad]);
}

}  // namespace cuda_ipc_test
