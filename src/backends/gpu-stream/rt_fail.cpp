// The GPU stream driver: a failed runtime call as the plugin's error, named
// by the runtime's own words for its code (rt_fail in driver.h).
#include <cstdarg>

#include "kit/errors.h"
#include "driver.h"

namespace hurray::gpu_stream {

hurray_status rt_fail(hurray_error *err, const Api &api, hurray_status status,
                      const char *function, Result code, const char *fmt, ...) noexcept {
  if (status == HURRAY_OK) status = rt::status_of(code);
  rt::ErrorText text;
  rt::error_text(api, code, &text);
  va_list ap;
  va_start(ap, fmt);
  hurray::kit::vendor_vfail(err, status, function, text.name, text.description, fmt, ap);
  va_end(ap);
  return status;
}

}  // namespace hurray::gpu_stream
