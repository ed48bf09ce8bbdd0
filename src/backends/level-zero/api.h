// What src/backends/level-zero offers the rest of the plugin: the table of
// Level Zero entry points resolved with dlsym (the plugin links no
// libze_loader) and the names of ze_result_t codes. Not installed.
#pragma once

#include <level_zero/ze_api.h>

#include "level_zero_symbols.h"  // struct Api and kSymbols, from symbols.txt

namespace hurray::level_zero {

// Api (level_zero_symbols.h, written from symbols.txt) holds every ze*
// function the plugin calls, resolved at run time. All are Level Zero 1.0
// functions that every loader exports; a loader that lacks one is
// HURRAY_E_DEVICE_UNAVAILABLE.

// Resolve every function of Api from `lib` (a dlopen handle). Returns
// nullptr on success, else the name of the first one that is missing.
const char *load_api(void *lib, Api *api) noexcept;

// "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY" for 0x70000003; nullptr for a code
// this plugin does not know (format it with its number then).
const char *result_name(ze_result_t result) noexcept;

}  // namespace hurray::level_zero
