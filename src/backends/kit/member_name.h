// The name of a struct member, known at compile time from a pointer to it:
// kit::member_name<&Api::clFinish> is "clFinish". A plugin's symbol table
// (kit/library.h) looks each vendor function up by the name of the member
// that holds it, so no name is written twice. Part of the plugin kit.
//
// C++20 has no reflection; the name is read from __PRETTY_FUNCTION__ of a
// function templated on the pointer, which GCC and clang both spell
// "... Member = &ns::Api::name ...". tests/backends/kit/symbol_test.cpp
// checks the reading with both compilers' spellings in mind.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace hurray::kit {

namespace detail {

// The signature of this function names Member.
template <auto Member>
constexpr std::string_view signature() noexcept {
  return __PRETTY_FUNCTION__;
}

// The identifier after the last "::" of the "Member = &..." part of a
// signature; empty when the signature is not spelled that way.
constexpr std::string_view member_in(std::string_view text) noexcept {
  constexpr std::string_view kKey = "Member = &";
  const std::size_t key = text.find(kKey);
  if (key == std::string_view::npos) return {};
  text.remove_prefix(key + kKey.size());
  text = text.substr(0, text.find_first_of(";]"));
  const std::size_t scope = text.rfind("::");
  return scope == std::string_view::npos ? std::string_view{} : text.substr(scope + 2);
}

template <auto Member>
inline constexpr std::string_view kView = member_in(signature<Member>());

// kView as a NUL-terminated array with static storage, for dlsym.
template <auto Member>
inline constexpr auto kChars = [] {
  std::array<char, kView<Member>.size() + 1> chars{};
  for (std::size_t i = 0; i < kView<Member>.size(); ++i) chars[i] = kView<Member>[i];
  return chars;
}();

}  // namespace detail

// The member's identifier as a NUL-terminated string. It fails to compile
// when the compiler spells its signatures another way.
template <auto Member>
requires(!detail::kView<Member>.empty()) inline constexpr const
    char *member_name = detail::kChars<Member>.data();

}  // namespace hurray::kit
