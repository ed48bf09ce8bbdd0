// The name and description of a CUDA or HIP error as the messages show
// them. Part of the GPU stream driver; the plugins' api files and their unit
// tests use it (pure logic, no runtime needed).
#pragma once

namespace hurray::gpu_stream {

// name and description as the message shows them; buf holds a fallback name.
struct ErrorText {
  const char *name;
  const char *description;  // may be nullptr
  char buf[32];
};

// Whose column of error_codes.h is read (a plugin names its own).
enum class Runtime { kCuda, kHip };

// The code's name, or its short English description, in the runtime's
// column of error_codes.h; nullptr for a code it does not hold there.
const char *table_name(Runtime runtime, int code) noexcept;
const char *table_description(Runtime runtime, int code) noexcept;

// Fill *out for `code`: the runtime's own name and description where it
// gave them (runtime_name / runtime_description, NULL when it could not;
// an empty text or a description that only repeats the name counts as
// none), else the runtime's column of error_codes.h, else the name
// "<CUDA or HIP> error <code>" and no description.
void fill_error_text(const char *runtime_name, const char *runtime_description, int code,
                     Runtime runtime, ErrorText *out) noexcept;

}  // namespace hurray::gpu_stream

// Declared by each runtime's api header (cuda/api.h, hip/api.h), in the
// runtime's namespace:
//  - error_name(code): the code's name from the plugin's own table (nullptr
//    for a code it does not know), so that a runtime that cannot name its
//    errors (CUDA's stub library) is still reported by name;
//  - error_description(code): a short English description of the commonest
//    codes, for when the runtime gives none; nullptr for the others;
//  - status_of(code): the hurray_status the code becomes: OUT_OF_MEMORY,
//    DEVICE_UNAVAILABLE (no device, no or stub or mismatched driver),
//    INVALID_ARGUMENT (bad value, handle or context), UNSUPPORTED, else
//    BACKEND;
//  - error_text(api, code, out): fill_error_text with the runtime's own
//    answers when `api` has the functions and they answer.
// runtime_api.h defines the first two from the api file's kErrorColumn.
