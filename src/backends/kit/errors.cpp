// See errors.h. The message itself is written by core/message.h, the one
// writer of docs/errors.md's format.
#include "errors.h"

#include <cstdio>
#include <cstring>

#include "../../core/message.h"

namespace hurray::kit {

namespace {

__attribute__((format(printf, 5, 0))) hurray_status vfill(hurray_error *err, hurray_status status,
                                                          const char *rule_id, const char *who,
                                                          const char *fmt, va_list ap) noexcept {
  if (err != nullptr) {
    std::memset(err, 0, sizeof *err);
    err->status = status;
    err->rule = HURRAY_RULE_NONE;
    err->severity = HURRAY_SEVERITY_ERROR;
    err->buffer_index = -1;
    err->byte_offset = -1;
    ::hurray::detail::write_message(err->message, rule_id, who, fmt, ap);
  }
  return status;
}

}  // namespace


hurray_status refuse(hurray_error *err, hurray_status status, const char *fmt, ...) noexcept {
  va_list ap;
  va_start(ap, fmt);
  vfill(err, status, nullptr, kPlugin, fmt, ap);
  va_end(ap);
  return status;
}

hurray_status refuse_rule(hurray_error *err, hurray_status status, const char *rule_id,
                          const char *fmt, ...) noexcept {
  va_list ap;
  va_start(ap, fmt);
  vfill(err, status, rule_id, kPlugin, fmt, ap);
  va_end(ap);
  return status;
}

hurray_status vfail(hurray_error *err, hurray_status status, const char *fmt, va_list ap) noexcept {
  return vfill(err, status, nullptr, nullptr, fmt, ap);
}

hurray_status fail(hurray_error *err, hurray_status status, const char *fmt, ...) noexcept {
  va_list ap;
  va_start(ap, fmt);
  vfill(err, status, nullptr, nullptr, fmt, ap);
  va_end(ap);
  return status;
}

hurray_status vendor_fail(hurray_error *err, hurray_status status, const char *function,
                          const char *name, const char *description, const char *details_fmt,
                          ...) noexcept {
  va_list ap;
  va_start(ap, details_fmt);
  vendor_vfail(err, status, function, name, description, details_fmt, ap);
  va_end(ap);
  return status;
}

hurray_status vendor_vfail(hurray_error *err, hurray_status status, const char *function,
                           const char *name, const char *description, const char *details_fmt,
                           va_list ap) noexcept {
  char details[192] = "";
  if (details_fmt != nullptr && details_fmt[0] != '\0')
    std::vsnprintf(details, sizeof details, details_fmt, ap);
  const bool has_description = description != nullptr && description[0] != '\0';
  return fail(err, status, "[%s] %s%s%s%s%s%s", function, name, has_description ? ": " : "",
              has_description ? description : "", details[0] ? " (" : "", details,
              details[0] ? ")" : "");
}

hurray_status code_fail(hurray_error *err, hurray_status status, const char *function,
                        const VendorCode &code, const char *details_fmt, ...) noexcept {
  char details[200] = "";
  if (details_fmt != nullptr && details_fmt[0] != '\0') {
    va_list ap;
    va_start(ap, details_fmt);
    std::vsnprintf(details, sizeof details, details_fmt, ap);
    va_end(ap);
  }
  return vendor_fail(err, status != HURRAY_OK ? status : code.status, function,
                     code.name != nullptr ? code.name : code.number, details, nullptr);
}

void note(std::string *why, const char *fmt, ...) {
  char line[256];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (!why->empty()) *why += "; ";
  *why += line;
}

const char *lookup(const CodeText *table, unsigned long n, int code) noexcept {
  for (unsigned long i = 0; i < n; ++i)
    if (table[i].code == code) return table[i].text;
  return nullptr;
}

}  // namespace hurray::kit
