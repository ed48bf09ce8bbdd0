// What each runtime's api file defines (cuda/cu_api.cpp, hip/hip_api.cpp),
// declared once. Included by cuda/api.h and hip/api.h inside the runtime's
// namespace, after its `struct Api` and gpu-stream/error_text.h; hence no
// #pragma once (the same pattern as kit/entries.h).

// Resolve every function of the runtime's list from `lib` (a dlopen
// handle). Returns nullptr on success, else the name of the first required
// function that is missing.
const char *load_api(void *lib, Api *api) noexcept;

// The names, descriptions and statuses of its codes (gpu-stream/error_text.h):
// the names and descriptions of its own are its column of
// gpu-stream/error_codes.h.
extern const ::hurray::gpu_stream::Runtime kErrorColumn;
inline const char *error_name(int code) noexcept {
  return ::hurray::gpu_stream::table_name(kErrorColumn, code);
}
inline const char *error_description(int code) noexcept {
  return ::hurray::gpu_stream::table_description(kErrorColumn, code);
}
hurray_status status_of(int code) noexcept;
using ErrorText = ::hurray::gpu_stream::ErrorText;
void error_text(const Api *api, int code, ErrorText *out) noexcept;
