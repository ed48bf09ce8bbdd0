// A probed backend: its table and the plugin's state. What the registry
// (backends.h) hands out and the dispatch layer (dispatch.h) calls through.
#pragma once

#include <hurray_backend.h>

namespace hurray::detail {

// A probed backend, ready to use.
struct Backend {
  const hurray_backend_v1 *table;
  void *state;
};

}  // namespace hurray::detail
