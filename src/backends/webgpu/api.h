// What src/backends/webgpu/api.cpp offers the rest of the plugin: resolving
// the table of Dawn functions (wgpu_abi.h) with dlsym. Not installed.
#pragma once

#include "wgpu_abi.h"

namespace hurray::webgpu {

// Resolve every function of HWGPU_FUNCTIONS from `lib` (a dlopen handle).
// Returns nullptr on success, else the name of the first one missing.
const char *load_api(void *lib, hwgpu_api *api) noexcept;

}  // namespace hurray::webgpu
