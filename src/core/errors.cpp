// Filling hurray_error: the one place in libhurray that writes the struct,
// in the format of docs/errors.md ("[RULE-ID: ]who: text", core/message.h).
#include <cstdio>
#include <cstring>

#include "internal.h"
#include "message.h"

namespace hurray::detail {
namespace {

// The one writer of the struct: nothing when err is NULL.
void vfill(hurray_error *err, hurray_status status, hurray_rule rule, hurray_severity severity,
           int64_t index, int64_t offset, const char *who, const char *fmt, va_list ap) noexcept {
  if (!err) return;
  std::memset(err, 0, sizeof *err);
  err->status = status;
  err->rule = static_cast<uint32_t>(rule);
  err->severity = severity;
  err->buffer_index = index;
  err->byte_offset = offset;
  std::snprintf(err->rule_id, sizeof err->rule_id, "%s", hurray_rule_id(rule));
  write_message(err->message, err->rule_id, who, fmt, ap);
}

}  // namespace

// Each function below is vfill() behind its own varargs; C++ has no way to
// pass `...` on, so each starts and ends its va_list itself.

void fill(hurray_error *err, hurray_status status, hurray_rule rule, hurray_severity severity,
          int64_t index, int64_t offset, const char *fmt, ...) noexcept {
  va_list ap;
  va_start(ap, fmt);
  vfill(err, status, rule, severity, index, offset, nullptr, fmt, ap);
  va_end(ap);
}

void fill(hurray_error *err, hurray_status status, const Finding &f, const char *fmt,
          ...) noexcept {
  va_list ap;
  va_start(ap, fmt);
  vfill(err, status, f.rule, f.severity, f.index, f.offset, nullptr, fmt, ap);
  va_end(ap);
}

hurray_status fail(hurray_error *err, hurray_status status, hurray_rule rule,
                   const char *fmt, ...) noexcept {
  va_list ap;
  va_start(ap, fmt);
  vfill(err, status, rule, HURRAY_SEVERITY_ERROR, -1, -1, nullptr, fmt, ap);
  va_end(ap);
  return status;
}

hurray_status refuse(hurray_error *err, hurray_status status, hurray_rule rule, const char *who,
                     const char *fmt, ...) noexcept {
  va_list ap;
  va_start(ap, fmt);
  vfill(err, status, rule, HURRAY_SEVERITY_ERROR, -1, -1, who, fmt, ap);
  va_end(ap);
  return status;
}

hurray_status null_argument(hurray_error *err, const char *fn, const char *what) noexcept {
  return refuse(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE, fn, "%s is NULL", what);
}

hurray_status out_of_memory(hurray_error *err, const char *who) noexcept {
  return refuse(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, who, "out of memory");
}

}  // namespace hurray::detail
