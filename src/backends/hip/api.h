// What src/backends/hip offers the rest of the plugin: the table of HIP
// runtime entry points resolved with dlsym (the plugin links no
// libamdhip64), the names and statuses of hipError_t codes, and the reading
// of hipPointerGetAttributes across HIP versions. Not installed.
#pragma once

// Built with -D__HIP_PLATFORM_AMD__ against Debian's libamdhip64-dev headers
// (HIP 5.2): types and prototypes only.
#include <hip/hip_runtime_api.h>
#include <hurray_backend.h>

#include <cstdint>
#include <span>

#include "gpu-stream/error_text.h"
#include "hip_symbols.h"  // struct Api and kSymbols, from symbols.txt
#include "kit/library.h"

namespace hurray::hip {

// Api (hip_symbols.h, written from symbols.txt) holds every HIP function the
// plugin calls, resolved at run time, required or not. Every one but
// hipLaunchHostFunc exists in HIP 4.2 and later (symbol version hip_4.2;
// Debian's HIP 5.2 runtime exports no hipLaunchHostFunc although its header
// declares it); a missing required one makes probe() report
// HURRAY_E_DEVICE_UNAVAILABLE, a missing optional one is nullptr.
// release_after's completion is hipLaunchHostFunc, else hipStreamAddCallback
// (gpu-stream/release.cpp); with neither it waits on the host. hipError_t
// is [[nodiscard]]: a result the plugin has no use for (cleanup) is cast to
// void.

// load_api and the error functions (gpu-stream/runtime_api.h).
#include "gpu-stream/runtime_api.h"

// load_api's table (kSymbols): each function and whether it is required.
std::span<const kit::Symbol<Api>> symbols() noexcept;

// The memory class of a hipPointerGetAttributes answer. HIP 6 renumbered
// hipMemoryType (5.x: Host 0, Device 1, Array 2, Unified 3; 6.x:
// Unregistered 0, Host 1, Device 2, Managed 3, Array 10, Unified 11), so
// the runtime's major version (hipRuntimeGetVersion / 10000000) selects the
// reading; is_managed wins over the type. False for memory that is no linear
// buffer HIP manages (unregistered host memory, arrays, unknown types).
bool class_of_pointer(int runtime_major, int memory_type, int is_managed,
                      uint8_t *memory_class) noexcept;

}  // namespace hurray::hip
