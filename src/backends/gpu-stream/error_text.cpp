// See error_text.h.
#include "error_text.h"

#include <cstdio>
#include <cstring>

#include "error_codes.h"

namespace hurray::gpu_stream {

namespace {

// The runtime's text of `code` in the column (CUDA's or HIP's) that `pick`
// chooses from a row; nullptr where the table has no row or the row "".
template <class Pick>
const char *column(int code, Pick pick) noexcept {
  for (const ErrorCode &row : kErrorCodes)
    if (row.code == code) {
      const char *text = pick(row);
      return text[0] != '\0' ? text : nullptr;
    }
  return nullptr;
}

}  // namespace

const char *table_name(Runtime runtime, int code) noexcept {
  return column(code, [runtime](const ErrorCode &row) {
    return runtime == Runtime::kCuda ? row.cuda_name : row.hip_name;
  });
}

const char *table_description(Runtime runtime, int code) noexcept {
  return column(code, [runtime](const ErrorCode &row) {
    return runtime == Runtime::kCuda ? row.cuda_description : row.hip_description;
  });
}

void fill_error_text(const char *runtime_name, const char *runtime_description, int code,
                     Runtime runtime, ErrorText *out) noexcept {
  out->buf[0] = '\0';
  out->name = runtime_name != nullptr && runtime_name[0] != '\0' ? runtime_name : nullptr;
  if (out->name == nullptr) out->name = table_name(runtime, code);
  if (out->name == nullptr) {
    std::snprintf(out->buf, sizeof out->buf, "%s error %d",
                  runtime == Runtime::kCuda ? "CUDA" : "HIP", code);
    out->name = out->buf;
  }
  out->description = runtime_description != nullptr && runtime_description[0] != '\0' &&
                             std::strcmp(runtime_description, out->name) != 0
                         ? runtime_description
                         : nullptr;
  if (out->description == nullptr) out->description = table_description(runtime, code);
}

}  // namespace hurray::gpu_stream
