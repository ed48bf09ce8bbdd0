// Opening a vendor library at run time and resolving its entry points: a
// plugin links no vendor runtime (tests/backends/check_plugin_elf.sh), it
// dlopens it in probe() and resolves the functions it calls from one table
// (below). Part of the plugin kit.
#pragma once

#include <dlfcn.h>

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "member_name.h"

namespace hurray::kit {

// Where probe finds a plugin's vendor library: the environment variable
// naming a file (NULL: none), the sonames tried in order (NULL-terminated),
// and what the message says is needed when a function is missing.
struct Library {
  const char *env_var;
  const char *const *sonames;
  const char *needed;
};

// How open_library words a name it could not load.
enum class Reasons {
  kFull,   // dlerror()'s text for each name
  kShort,  // at most 255 characters each, and "NAME: not found" for an absent
           // file when several names are tried
};

// dlopen (RTLD_NOW | RTLD_LOCAL) the file named by the environment variable
// `env_var` when it is set and not empty, else the first of `sonames` (a
// NULL-terminated list) that loads. On failure returns NULL and sets *why to
// the dlerror() text (of each name tried, joined with "; "). *opened receives
// the name that was loaded. `reasons` says how each reason is worded.
void *open_library(const char *env_var, const char *const *sonames, std::string *opened,
                   std::string *why, Reasons reasons = Reasons::kFull);

// ------------------------------------------------------------ symbols ----
//
// A plugin declares the vendor functions it calls as members of a struct,
// named as the vendor names them, lists them in a constexpr table, one Symbol
// per function, and resolves them all with one call. The plugins shipped
// here write neither by hand: each names its functions once, in its
// symbols.txt, and CMake writes the struct and the table below from it
// (cmake/HurraySymbols.cmake); WebGPU's struct is its ABI header, with a
// table beside it.
//
//   struct Api {
//     decltype(&::clGetPlatformIDs) clGetPlatformIDs = nullptr;
//     decltype(&::clSVMAlloc) clSVMAlloc = nullptr;
//   };
//   constexpr kit::Symbol<Api> kSymbols[] = {
//       kit::required<&Api::clGetPlatformIDs>,
//       kit::optional<&Api::clSVMAlloc>,
//   };
//   static_assert(kit::names_every_member(kSymbols));
//   const char *missing = kit::load_symbols<Api>(lib, kSymbols, &api);
//
// The symbol looked up is the member's own name (kit/member_name.h), so the
// table cannot spell it differently. A header that renames a function with a
// macro (cuda.h: #define cuMemAlloc cuMemAlloc_v2) renames the member too, and
// the table looks up the versioned symbol whose prototype the member has.
// The lookup is dlsym on a library, or any function that finds a symbol by
// name (Vulkan's vkGetInstanceProcAddr / vkGetDeviceProcAddr).

// Any function pointer: what a lookup answers, cast to the slot's type when
// it is stored (a cast between function pointer types is always valid).
using AnyFunction = void (*)();

// Stores `address` in the member Member of *api.
template <class T>
struct MemberOf;
template <class Api, class Fn>
struct MemberOf<Fn Api::*> {
  using Table = Api;
  using Function = Fn;
};
template <auto Member>
void store(typename MemberOf<decltype(Member)>::Table *api, AnyFunction address) noexcept {
  api->*Member = reinterpret_cast<typename MemberOf<decltype(Member)>::Function>(address);
}

// The slot of a Symbol: where its address goes (kit::slot<&Api::member>).
template <auto Member>
inline constexpr auto slot = &store<Member>;

// One vendor function of a plugin's table: the symbol looked up, the member
// of Api it goes to, and whether the plugin cannot work without it (a
// missing optional one leaves its member nullptr).
template <class Api>
struct Symbol {
  const char *name;
  void (*store)(Api *api, AnyFunction address) noexcept;
  bool required;
};

// The Symbol of member Member, looked up by the member's name; a missing
// required one fails load_symbols, a missing optional one stays nullptr.
template <auto Member>
inline constexpr Symbol<typename MemberOf<decltype(Member)>::Table> required = {
    member_name<Member>, &store<Member>, true};
template <auto Member>
inline constexpr Symbol<typename MemberOf<decltype(Member)>::Table> optional = {
    member_name<Member>, &store<Member>, false};

// True when `table` names every member of Api exactly once: as many
// symbols as Api holds function pointers, and no name twice. A plugin
// static_asserts it beside its table, so that a member added to Api and left
// out of the table (a null pointer called later) does not compile.
template <class Api, std::size_t N>
consteval bool names_every_member(const Symbol<Api> (&table)[N]) {
  if (sizeof(Api) != N * sizeof(AnyFunction)) return false;
  for (std::size_t i = 0; i < N; ++i)
    for (std::size_t j = i + 1; j < N; ++j)
      if (std::string_view(table[i].name) == std::string_view(table[j].name)) return false;
  return true;
}

// Finds one symbol by name: lookup(context, name), nullptr when missing.
struct Lookup {
  AnyFunction (*lookup)(void *context, const char *name) noexcept;
  void *context;
};

// dlsym in `lib` (a dlopen handle).
Lookup from_library(void *lib) noexcept;

// Resolve every symbol of `table` into *api through `lookup`, in order, and
// return the name of the first required one missing (nullptr when none is).
// When `missing` is not NULL it receives every required one missing, joined
// with ", " (empty when none; std::bad_alloc may come from there only).
// *api keeps what it held before for members the table does not name.
template <class Api>
const char *resolve_symbols(Lookup lookup, std::span<const Symbol<Api>> table, Api *api,
                            std::string *missing = nullptr) {
  const char *first = nullptr;
  if (missing != nullptr) missing->clear();
  for (const Symbol<Api> &symbol : table) {
    const AnyFunction address = lookup.lookup(lookup.context, symbol.name);
    symbol.store(api, address);
    if (address != nullptr || !symbol.required) continue;
    if (first == nullptr) first = symbol.name;
    if (missing == nullptr) continue;
    if (!missing->empty()) *missing += ", ";
    *missing += symbol.name;
  }
  return first;
}

// resolve_symbols through dlsym in `lib` (a dlopen handle), *api zeroed
// first: a plugin's load_api.
template <class Api>
const char *load_symbols(void *lib, std::span<const Symbol<Api>> table, Api *api) noexcept {
  *api = Api{};
  return resolve_symbols<Api>(from_library(lib), table, api);
}

}  // namespace hurray::kit
