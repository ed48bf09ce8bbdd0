// What the kit's test plugin (throwing_plugin.cpp) and its test
// (barrier_test.cpp) agree on.
#pragma once

#include <cstdint>

namespace hurray::kit_test {

// The plugin state is a pointer to one of these.
enum class Mode : int { kNormal, kBadAlloc, kRuntimeError, kInt };

constexpr uint8_t kDeviceTag = 0xF1;  // private tag; the loader never sees the plugin

}  // namespace hurray::kit_test
