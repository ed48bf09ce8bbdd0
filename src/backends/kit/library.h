// Opening a vendor library at run time and resolving its entry points: a
// plugin links no vendor runtime (tests/backends/check_plugin_elf.sh), it
// dlopens it in probe(). Part of the plugin kit.
#pragma once

#include <dlfcn.h>

#include <string>

namespace hurray::kit {

// dlopen (RTLD_NOW | RTLD_LOCAL) the file named by the environment variable
// `env_var` when it is set and not empty, else the first of `sonames` (a
// NULL-terminated list) that loads. On failure returns NULL and sets *why to
// the dlerror() text (of each name tried, joined with "; "). *opened receives
// the name that was loaded.
void *open_library(const char *env_var, const char *const *sonames, std::string *opened,
                   std::string *why);

// Resolve `symbol` from `lib` into *fn; false when it is missing. (dlsym
// returns void*; the cast to a function pointer type is what POSIX specifies
// for it.)
template <class Fn>
bool resolve(void *lib, const char *symbol, Fn *fn) noexcept {
  *fn = reinterpret_cast<Fn>(dlsym(lib, symbol));
  return *fn != nullptr;
}

}  // namespace hurray::kit
