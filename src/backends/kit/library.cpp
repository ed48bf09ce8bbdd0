// See library.h.
#include "library.h"

#include <cstdlib>

namespace hurray::kit {

namespace {

// The longest reason Reasons::kShort gives for one name.
constexpr std::size_t kShortReason = 255;

}  // namespace

void *open_library(const char *env_var, const char *const *sonames, std::string *opened,
                   std::string *why, Reasons reasons) {
  why->clear();
  const char *env = env_var != nullptr ? std::getenv(env_var) : nullptr;
  const char *const one[] = {env, nullptr};
  const char *const *names = env != nullptr && env[0] != '\0' ? one : sonames;
  const bool several = names[0] != nullptr && names[1] != nullptr;
  for (; *names != nullptr; ++names) {
    dlerror();
    if (void *lib = dlopen(*names, RTLD_NOW | RTLD_LOCAL)) {
      *opened = *names;
      why->clear();
      return lib;
    }
    const char *e = dlerror();
    std::string text = e != nullptr ? e : std::string(*names) + ": cannot be loaded";
    if (reasons == Reasons::kShort && several &&
        text == std::string(*names) +
                    ": cannot open shared object file: No such file or directory")
      text = std::string(*names) + ": not found";
    if (reasons == Reasons::kShort && text.size() > kShortReason) text.resize(kShortReason);
    if (!why->empty()) *why += "; ";
    *why += text;
  }
  return nullptr;
}

namespace {

AnyFunction dlsym_lookup(void *lib, const char *name) noexcept {
  // dlsym returns void*; the cast to a function pointer type is what POSIX
  // specifies for it.
  return reinterpret_cast<AnyFunction>(dlsym(lib, name));
}

}  // namespace

Lookup from_library(void *lib) noexcept { return Lookup{dlsym_lookup, lib}; }

}  // namespace hurray::kit
