// The probe() skeleton every kit plugin shares: a new state, the vendor
// library opened and its functions resolved, the devices opened, and on any
// failure what was opened given back. Part of the plugin kit.
#pragma once

#include <dlfcn.h>
#include <hurray_backend.h>

#include <memory>
#include <string>

#include "entry.h"
#include "errors.h"
#include "library.h"

namespace hurray::kit {

// probe() with state not NULL: a new State whose `lib` is the library
// open_library(env_var, sonames) loads (its dlerror() text when none does:
// HURRAY_E_DEVICE_UNAVAILABLE), whose table s->*api load_api resolves (it
// returns the name of a missing required function: "[dlsym] <library> has
// no <name> (<needed>)"), whose lib_name (where it has one) is the library
// loaded, and whose devices open(s, err) opens. When open fails, or
// throws (the exception goes on to the kit's barrier), close(s) gives back
// what open took and the state is deleted; the library stays loaded from
// then on (the runtime may hold process-wide state, threads).
template <class State, class Api, class Open, class Close>
hurray_status probe_state(void **state, hurray_error *err, const char *env_var,
                          const char *const *sonames, const char *needed, Api State::*api,
                          const char *(*load_api)(void *, Api *) noexcept, Open &&open,
                          Close &&close) {
  if (state == nullptr)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT, "probe: state must not be NULL");
  *state = nullptr;
  auto s = std::make_unique<State>();
  std::string name, why;
  s->lib = open_library(env_var, sonames, &name, &why);
  if (s->lib == nullptr) return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "%s", why.c_str());
  if (const char *missing = load_api(s->lib, &(s.get()->*api))) {
    dlclose(s->lib);
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "[dlsym] %s has no %s (%s)", name.c_str(),
                missing, needed);
  }
  if constexpr (requires { s->lib_name = name; }) s->lib_name = name;
  hurray_status st;
  try {
    st = open(s.get(), err);
  } catch (...) {
    close(s.get());
    throw;
  }
  if (st != HURRAY_OK) {
    close(s.get());
    return st;
  }
  *state = s.release();
  return HURRAY_OK;
}

// The same with the library described by one Library.
template <class State, class Api, class Open, class Close>
hurray_status probe_state(void **state, hurray_error *err, const Library &library, Api State::*api,
                          const char *(*load_api)(void *, Api *) noexcept, Open &&open,
                          Close &&close) {
  return probe_state<State>(state, err, library.env_var, library.sonames, library.needed, api,
                            load_api, static_cast<Open &&>(open), static_cast<Close &&>(close));
}

// shutdown(), probe_state's counterpart: with state not NULL, free_left(s)
// frees the allocations still alive, close(s) gives back what open took,
// and the state is deleted.
template <class State, class FreeLeft, class Close>
void shutdown_state(void *state, FreeLeft &&free_left, Close &&close) {
  auto *s = static_cast<State *>(state);
  if (s == nullptr) return;
  free_left(s);
  close(s);
  delete s;
}

}  // namespace hurray::kit
