// See library.h.
#include "library.h"

#include <cstdlib>

namespace hurray::kit {

void *open_library(const char *env_var, const char *const *sonames, std::string *opened,
                   std::string *why) {
  why->clear();
  const char *env = env_var != nullptr ? std::getenv(env_var) : nullptr;
  const char *const one[] = {env, nullptr};
  const char *const *names = env != nullptr && env[0] != '\0' ? one : sonames;
  for (; *names != nullptr; ++names) {
    dlerror();
    if (void *lib = dlopen(*names, RTLD_NOW | RTLD_LOCAL)) {
      *opened = *names;
      why->clear();
      return lib;
    }
    const char *e = dlerror();
    if (!why->empty()) *why += "; ";
    *why += e != nullptr ? e : std::string(*names) + ": cannot be loaded";
  }
  return nullptr;
}

}  // namespace hurray::kit
