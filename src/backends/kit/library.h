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
// Where probe finds a plugin's vendor library: the environment variable
// naming a file (NULL: none), the sonames tried in order (NULL-terminated),
// and what the message says is needed when a function is missing.
struct Library {
  const char *env_var;
  const char *const *sonames;
  const char *needed;
};

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

// A plugin's load_api, written once: `const char *load_api(void *lib, Api *api)`
// resolves every function of the plugin's X-macro list `functions` into
// *api (zeroed first) and returns the symbol of the first required one
// `lib` lacks, NULL when none is missing (kit::probe_state reports it).
// `entry(...)` is the plugin's own macro for one element of its list: it
// expands to HURRAY_KIT_RESOLVE(api->member, "symbol", required).
#define HURRAY_KIT_RESOLVE(slot, symbol, required) \
  if (!::hurray::kit::resolve(lib, symbol, &(slot)) && (required)) return symbol;
#define HURRAY_KIT_DEFINE_LOAD_API(functions, entry)   \
  const char *load_api(void *lib, Api *api) noexcept { \
    *api = Api{};                                      \
    functions(entry) return nullptr;                   \
  }
