// The exception barrier, written once for every layer: body(), or
// on_throw() when body throws. Each layer maps an exception to its status
// with it (guarded() in core/internal.h for libhurray, in net/barrier.h for
// libhurray-net), at its public entry points, so that nothing below them
// needs a try and no exception crosses the C ABI. Not installed.
#pragma once

namespace hurray::detail {

template <class Body, class OnThrow>
auto barrier(Body &&body, OnThrow &&on_throw) noexcept -> decltype(body()) {
  try {
    return body();
  } catch (...) {
    return on_throw();
  }
}

}  // namespace hurray::detail
