// See error_text.h.
#include "error_text.h"

#include <cstdio>
#include <cstring>

namespace hurray::gpu_stream {

void fill_error_text(const char *runtime_name, const char *runtime_description, int code,
                     const char *vendor, const hurray::kit::CodeText *names, size_t n_names,
                     const hurray::kit::CodeText *descriptions, size_t n_descriptions,
                     ErrorText *out) noexcept {
  out->buf[0] = '\0';
  out->name = runtime_name != nullptr && runtime_name[0] != '\0' ? runtime_name : nullptr;
  if (out->name == nullptr) out->name = hurray::kit::lookup(names, n_names, code);
  if (out->name == nullptr) {
    std::snprintf(out->buf, sizeof out->buf, "%s error %d", vendor, code);
    out->name = out->buf;
  }
  out->description = runtime_description != nullptr && runtime_description[0] != '\0' &&
                             std::strcmp(runtime_description, out->name) != 0
                         ? runtime_description
                         : nullptr;
  if (out->description == nullptr)
    out->description = hurray::kit::lookup(descriptions, n_descriptions, code);
}

}  // namespace hurray::gpu_stream
