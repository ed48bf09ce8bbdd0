// Filling a hurray_error in a plugin, in the format of docs/errors.md (the
// one of the whole library), in its two plugin shapes:
//  - the plugin's own refusal, refuse(): "<plugin>: what is wrong", e.g.
//    "opencl: there is no device 3 (1 found)"; the plugin's name is the one
//    its CMake line gives (hurray_add_backend_plugin(<name>), which defines
//    HURRAY_KIT_PLUGIN) and is never typed in a message;
//  - a vendor error, vendor_fail(): "[function] NAME: description (details)",
//    e.g. "[cuMemAlloc] CUDA_ERROR_OUT_OF_MEMORY: out of memory (4096 bytes)".
// Part of the plugin kit (src/backends/kit): compiled into each plugin, never
// a library of its own; it calls nothing of libhurray.
#pragma once

#include <hurray_backend.h>

#include <cstdarg>
#include <string>

#ifndef HURRAY_KIT_PLUGIN
#error "HURRAY_KIT_PLUGIN (the plugin's short name) must be defined: see cmake/HurrayBackend.cmake"
#endif

namespace hurray::kit {

// The plugin's short name ("opencl"), from its CMake line
// (hurray_add_backend_plugin, cmake/HurrayBackend.cmake): the table's name
// and the prefix of its messages.
inline constexpr const char *kPlugin = HURRAY_KIT_PLUGIN;

// "<plugin>: <text>": the plugin's own refusal. Fills *err (when not NULL)
// with status and the message; returns status.
__attribute__((format(printf, 3, 4))) hurray_status refuse(hurray_error *err, hurray_status status,
                                                           const char *fmt, ...) noexcept;

// "<rule_id>: <plugin>: <text>": a refusal under a rule of the protocol
// (e.g. "BP-IPC-DEVMEM"), its ID first.
__attribute__((format(printf, 4, 5))) hurray_status refuse_rule(hurray_error *err,
                                                                hurray_status status,
                                                                const char *rule_id,
                                                                const char *fmt, ...) noexcept;

// Fill *err (when not NULL) with status and the message as given, cut to
// fit hurray_error.message; returns status. For a text that already has its
// prefix (a vendor message, one passed on); a refusal goes through refuse().
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

// A vendor's result code as code_fail tells it: the status it means, and
// its name ("CL_INVALID_VALUE"), or nullptr when the plugin does not know
// it; `number` says it then ("OpenCL error -9999"). A plugin reads its codes
// into one (opencl's cl_code, level-zero's ze_code).
struct VendorCode {
  hurray_status status;
  const char *name;
  char number[48];
};

// "[function] name: details" (or "[function] name" when details_fmt gives
// nothing): the shape of the vendors whose codes have no description. The
// status is code's unless `status` is given (not HURRAY_OK).
__attribute__((format(printf, 5, 6))) hurray_status code_fail(
    hurray_error *err, hurray_status status, const char *function, const VendorCode &code,
    const char *details_fmt, ...) noexcept;

// Append "; <text>" (or "<text>" when *why is empty) to *why: the reasons
// probe gathers for each device it leaves out.
__attribute__((format(printf, 2, 3))) void note(std::string *why, const char *fmt, ...);

// A vendor's table of codes: lookup() gives the name (or description) of
// `code`, nullptr for a code the table does not hold. A plugin writes its
// table as `constexpr CodeText kNames[] = {{X, "X"}, ...};`.
struct CodeText {
  int code;
  const char *text;
};
const char *lookup(const CodeText *table, unsigned long n, int code) noexcept;
template <unsigned long N>
const char *lookup(const CodeText (&table)[N], int code) noexcept {
  return lookup(table, N, code);
}

}  // namespace hurray::kit
