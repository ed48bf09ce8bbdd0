// Filling hurray_error: the one place that writes the struct.
#include <cstdio>
#include <cstring>

#include "internal.h"

namespace hurray::detail {
namespace {

void vfill(hurray_error *err, hurray_status status, hurray_rule rule,
           hurray_severity severity, int64_t index, int64_t offset,
           const char *fmt, va_list ap) noexcept {
  std::memset(err, 0, sizeof *err);
  err->status = status;
  err->rule = static_cast<uint32_t>(rule);
  err->severity = severity;
  err->buffer_index = index;
  err->byte_offset = offset;
  std::snprintf(err->rule_id, sizeof err->rule_id, "%s", hurray_rule_id(rule));
  std::vsnprintf(err->message, sizeof err->message, fmt, ap);
}

}  // namespace

void fill(hurray_error *err, hurray_status status, hurray_rule rule,
          hurray_severity severity, int64_t index, int64_t offset,
          const char *fmt, ...) noexcept {
  if (!err) return;
  va_list ap;
  va_start(ap, fmt);
  vfill(err, status, rule, severity, index, offset, fmt, ap);
  va_end(ap);
}

hurray_status fail(hurray_error *err, hurray_status status, hurray_rule rule,
                   const char *fmt, ...) noexcept {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vfill(err, status, rule, HURRAY_SEVERITY_ERROR, -1, -1, fmt, ap);
    va_end(ap);
  }
  return status;
}

hurray_status null_argument(hurray_error *err, const char *fn, const char *what) noexcept {
  return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE, "%s: %s is NULL", fn, what);
}

}  // namespace hurray::detail
