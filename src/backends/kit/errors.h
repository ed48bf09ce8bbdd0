// Filling a hurray_error, in the two shapes every in-tree plugin uses:
//  - a vendor error: "[function] NAME: description (details)", e.g.
//    "[cuMemAlloc] CUDA_ERROR_OUT_OF_MEMORY: out of memory (4096 bytes)";
//  - the plugin's own refusal: "<plugin>: what is wrong", e.g.
//    "opencl: there is no device 3 (1 found)".
// Part of the plugin kit (src/backends/kit): compiled into each plugin, never
// a library of its own; it calls nothing of libhurray.
#pragma once

#include <hurray_backend.h>

#include <cstdarg>
#include <string>

namespace hurray::kit {

// Fill *err (when not NULL) with status and the printf-style message; returns
// status. The message is cut to fit hurray_error.message.
__attribute__((format(printf, 3, 4))) hurray_status fail(hurray_error *err, hurray_status status,
                                                         const char *fmt, ...) noexcept;
__attribute__((format(printf, 3, 0))) hurray_status vfail(hurray_error *err, hurray_status status,
                                                          const char *fmt, va_list ap) noexcept;

// "[function] name: description (details)": the message of a vendor error.
// description may be NULL or empty (then "[function] name (details)"), and
// so may details_fmt.
__attribute__((format(printf, 6, 7))) hurray_status vendor_fail(
    hurray_error *err, hurray_status status, const char *function, const char *name,
    const char *description, const char *details_fmt, ...) noexcept;
__attribute__((format(printf, 6, 0))) hurray_status vendor_vfail(
    hurray_error *err, hurray_status status, const char *function, const char *name,
    const char *description, const char *details_fmt, va_list ap) noexcept;

// "[function] name: details" (or "[function] name" when details_fmt gives
// nothing): the shape of the vendors whose codes have no description.
__attribute__((format(printf, 5, 0))) hurray_status vendor_vfail_details(
    hurray_error *err, hurray_status status, const char *function, const char *name,
    const char *details_fmt, va_list ap) noexcept;

// Append "; <text>" (or "<text>" when *why is empty) to *why: the reasons
// probe gathers for each device it leaves out.
__attribute__((format(printf, 2, 3))) void note(std::string *why, const char *fmt, ...);

// A vendor's table of codes: lookup() gives the name (or description) of
// `code`, nullptr for a code the table does not hold.
struct CodeText {
  int code;
  const char *text;
};
const char *lookup(const CodeText *table, unsigned long n, int code) noexcept;

}  // namespace hurray::kit

// One case of a switch that names a vendor's codes: `case X: return "X";`.
#define HURRAY_KIT_CASE_NAME(code) \
  case code:                       \
    return #code;

// Defines `hurray_status fn(hurray_error *err, hurray_status status, const char
// *function, Code code, const char *fmt, ...)`: the vendor error
// "[function] NAME: details" (kit::vendor_vfail_details) whose NAME is
// name_of(code, buf) (`const char *name_of(Code, char (&)[48])`, which may
// print a fallback into buf), with status_of(code) as the status unless
// `status` is given (not HURRAY_OK).
#define HURRAY_KIT_DEFINE_CODE_FAIL(fn, Code, name_of, status_of)                                \
  inline __attribute__((format(printf, 5, 6))) hurray_status fn(                                 \
      hurray_error *err, hurray_status status, const char *function, Code code, const char *fmt, \
      ...) noexcept {                                                                            \
    char buf[48];                                                                                \
    va_list ap;                                                                                  \
    va_start(ap, fmt);                                                                           \
    status =                                                                                     \
        ::hurray::kit::vendor_vfail_details(err, status != HURRAY_OK ? status : status_of(code), \
                                            function, name_of(code, buf), fmt, ap);              \
    va_end(ap);                                                                                  \
    return status;                                                                               \
  }
