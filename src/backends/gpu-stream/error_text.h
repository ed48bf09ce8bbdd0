// The name and description of a CUDA or HIP error as the messages show
// them. Part of the GPU stream driver; the plugins' api files and their unit
// tests use it (pure logic, no runtime needed).
#pragma once

#include <cstddef>

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
