// The name and description of a CUDA or HIP error as the messages show
// them. Part of the GPU stream driver; the plugins' api files and their unit
// tests use it (pure logic, no runtime needed).
#pragma once

#include <cstddef>
#include <iterator>

#include "error_codes.h"
#include "kit/errors.h"

namespace hurray::gpu_stream {

// name and description as the message shows them; buf holds a fallback name.
struct ErrorText {
  const char *name;
  const char *description;  // may be nullptr
  char buf[32];
};

// Fill *out for `code`: the runtime's own name and description where it
// gave them (runtime_name / runtime_description, NULL when it could not;
// an empty text or a description that only repeats the name counts as
// none), else the plugin's tables (names, descriptions), else the name
// "<vendor> error <code>" and no description.
void fill_error_text(const char *runtime_name, const char *runtime_description, int code,
                     const char *vendor, const hurray::kit::CodeText *names, size_t n_names,
                     const hurray::kit::CodeText *descriptions, size_t n_descriptions,
                     ErrorText *out) noexcept;

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

// Defines the tables kNames and kDescriptions (hurray::kit::CodeText) of
// VENDOR (CUDA or HIP): its column of error_codes.h; and error_name and
// error_description from them.
#define HURRAY_GPU_ERROR_TEXT_(s) (sizeof(s) > 1 ? (s) : nullptr)  // "": none
#define HURRAY_GPU_ERROR_CUDA_NAME_(code, cuda, hip, cuda_d, hip_d) \
  {code, HURRAY_GPU_ERROR_TEXT_(cuda)},
#define HURRAY_GPU_ERROR_HIP_NAME_(code, cuda, hip, cuda_d, hip_d) \
  {code, HURRAY_GPU_ERROR_TEXT_(hip)},
#define HURRAY_GPU_ERROR_CUDA_DESCRIPTION_(code, cuda, hip, cuda_d, hip_d) \
  {code, HURRAY_GPU_ERROR_TEXT_(cuda_d)},
#define HURRAY_GPU_ERROR_HIP_DESCRIPTION_(code, cuda, hip, cuda_d, hip_d) \
  {code, HURRAY_GPU_ERROR_TEXT_(hip_d)},
#define HURRAY_GPU_DEFINE_ERROR_TABLES(VENDOR)                                   \
  constexpr ::hurray::kit::CodeText kNames[] = {                                 \
      HURRAY_GPU_ERROR_CODES(HURRAY_GPU_ERROR_##VENDOR##_NAME_)};                \
  constexpr ::hurray::kit::CodeText kDescriptions[] = {                          \
      HURRAY_GPU_ERROR_CODES(HURRAY_GPU_ERROR_##VENDOR##_DESCRIPTION_)};         \
  const char *error_name(int code) noexcept {                                    \
    return ::hurray::kit::lookup(kNames, std::size(kNames), code);               \
  }                                                                              \
  const char *error_description(int code) noexcept {                             \
    return ::hurray::kit::lookup(kDescriptions, std::size(kDescriptions), code); \
  }
