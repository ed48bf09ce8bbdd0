// The kit's symbol tables (src/backends/kit/library.h, member_name.h): each
// vendor function is looked up by the name of the member that holds it.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <string_view>

#include "kit/library.h"

// As cuda.h does for its versioned entry points.
#define renamedFunction renamedFunction_v2

namespace {

int first(int x) { return x + 1; }
int second(int x) { return x + 2; }

struct Api {
  int (*firstFunction)(int) = nullptr;
  int (*renamedFunction)(int) = nullptr;
  int (*optionalFunction)(int) = nullptr;
};

namespace hurray_test::inner {
struct Nested {
  void (*deep_name_2)() = nullptr;
};
}  // namespace hurray_test::inner

// A lookup that knows two symbols, and counts the names it was asked for.
struct Known {
  std::string asked;
};
hurray::kit::AnyFunction find(void *context, const char *name) noexcept {
  auto *known = static_cast<Known *>(context);
  known->asked += std::string(name) + " ";
  if (std::strcmp(name, "firstFunction") == 0)
    return reinterpret_cast<hurray::kit::AnyFunction>(&first);
  if (std::strcmp(name, "renamedFunction_v2") == 0)
    return reinterpret_cast<hurray::kit::AnyFunction>(&second);
  return nullptr;
}

}  // namespace

using hurray::kit::member_name;

TEST_CASE("kit: a symbol's name is its member's name, as the compiler sees it") {
  CHECK(std::string_view(member_name<&Api::firstFunction>) == "firstFunction");
  CHECK(std::string_view(member_name<&Api::renamedFunction>) == "renamedFunction_v2");
  CHECK(std::string_view(member_name<&hurray_test::inner::Nested::deep_name_2>) == "deep_name_2");
  constexpr std::string_view kAtCompileTime = member_name<&Api::optionalFunction>;
  CHECK(kAtCompileTime == "optionalFunction");
}

TEST_CASE("kit: member names are read from GCC's and clang's spellings alike") {
  using hurray::kit::detail::member_in;
  // GCC 12
  CHECK(member_in("constexpr std::string_view hurray::kit::detail::signature() [with auto Member "
                  "= &{anonymous}::Api::clFinish; std::string_view = "
                  "std::basic_string_view<char>]") == "clFinish");
  // clang 14
  CHECK(member_in("std::string_view hurray::kit::detail::signature() [Member = "
                  "&(anonymous namespace)::Api::clFinish]") == "clFinish");
  // Anything else is no name at all (member_name then does not compile).
  CHECK(member_in("signature<&Api::clFinish>()").empty());
  CHECK(member_in("[Member = &clFinish]").empty());
}

TEST_CASE("kit: a missing required symbol is named, a missing optional one left null") {
  using hurray::kit::optional;
  using hurray::kit::required;
  constexpr hurray::kit::Symbol<Api> kSymbols[] = {
      required<&Api::firstFunction>,
      required<&Api::renamedFunction>,
      optional<&Api::optionalFunction>,
  };
  constexpr bool kAll = hurray::kit::names_every_member(kSymbols);
  CHECK(kAll);
  Known known;
  Api api;
  CHECK(hurray::kit::resolve_symbols<Api>({&find, &known}, kSymbols, &api) == nullptr);
  CHECK(known.asked == "firstFunction renamedFunction_v2 optionalFunction ");
  REQUIRE(api.firstFunction != nullptr);
  REQUIRE(api.renamedFunction != nullptr);
  CHECK(api.firstFunction(1) == 2);
  CHECK(api.renamedFunction(1) == 3);
  CHECK(api.optionalFunction == nullptr);

  constexpr hurray::kit::Symbol<Api> kNeedsAll[] = {
      required<&Api::firstFunction>,
      required<&Api::optionalFunction>,
  };
  constexpr bool kOneLeftOut = hurray::kit::names_every_member(kNeedsAll);
  CHECK_FALSE(kOneLeftOut);
  constexpr hurray::kit::Symbol<Api> kTwice[] = {
      required<&Api::firstFunction>,
      required<&Api::renamedFunction>,
      required<&Api::firstFunction>,
  };
  constexpr bool kOneTwice = hurray::kit::names_every_member(kTwice);
  CHECK_FALSE(kOneTwice);
  std::string missing;
  CHECK(std::string(hurray::kit::resolve_symbols<Api>({&find, &known}, kNeedsAll, &api,
                                                      &missing)) == "optionalFunction");
  CHECK(missing == "optionalFunction");
}
