// The exception barrier of libhurray-net: the one place where an exception
// thrown inside the network layer stops. A public entry point whose body can
// throw (the containers of the server, client and transfers growing) runs it
// through guarded(), and the code below it may let exceptions fly. Every
// exception thrown here is a shortage (std::bad_alloc, std::length_error),
// so each becomes OUT_OF_MEMORY "hurray-net: out of memory", as before.
#pragma once

#include <hurray.h>

#include "../core/barrier.h"
#include "ucx.h"

namespace hurray::net {

// The general form (core/barrier.h): body(), or on_throw() when it throws,
// for a body that returns something else than a status, or a UCX callback.
using hurray::detail::barrier;

// body() returns a status; on an exception, undo() (what the body built and
// owns nowhere else yet) and OUT_OF_MEMORY.
template <class Body, class Undo>
hurray_status guarded(hurray_error *err, Body &&body, Undo &&undo) noexcept {
  return barrier(body, [&] {
    undo();
    return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "hurray-net: out of memory");
  });
}
template <class Body>
hurray_status guarded(hurray_error *err, Body &&body) noexcept {
  return guarded(err, body, [] {});
}

}  // namespace hurray::net
