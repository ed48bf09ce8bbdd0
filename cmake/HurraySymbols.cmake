include_guard(GLOBAL)

# hurray_symbol_header(<list> <header> <namespace>)
#
# Writes ${HURRAY_GENERATED_DIR}/<header> (the top CMakeLists.txt sets the
# folder; hurray_add_backend_plugin puts it on every plugin's include path,
# and the tests that build a plugin's sources add it) from <list> (a plugin's
# symbols.txt): the vendor functions the plugin resolves at run time, each
# named once. The list holds, besides blank lines and # comments:
#
#   struct <Struct> <table> decltype|PFN    starts a struct and its table
#   required|optional <name> [<type>]       one function of that struct
#
# For each struct the header declares
#
#   struct <Struct> { <type> <name> = nullptr; ... };
#   inline constexpr kit::Symbol<<Struct>> <table>[] = {kit::required<&<Struct>::<name>>, ...};
#
# in <namespace>, where <type> is decltype(&::<name>) (the prototype of the
# vendor header), PFN_<name> (Vulkan's typedefs), or the type the line spells
# out (for a name the header overloads). kit/library.h says how a table is
# resolved. The header includes kit/library.h only: whoever includes it has
# included the vendor header first. The list is a configure dependency, and
# the header is rewritten only when its text changes.
function(hurray_symbol_header list header namespace)
  if(NOT HURRAY_GENERATED_DIR)
    message(FATAL_ERROR "hurray_symbol_header: HURRAY_GENERATED_DIR is not set")
  endif()
  set(path ${CMAKE_CURRENT_SOURCE_DIR}/${list})
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${path})
  file(RELATIVE_PATH shown ${PROJECT_SOURCE_DIR} ${path})
  file(STRINGS ${path} lines)
  set(text "// Written by CMake from ${shown} (cmake/HurraySymbols.cmake):\n")
  string(APPEND text "// edit that list, not this file.\n#pragma once\n\n")
  string(APPEND text "#include <type_traits>\n\n#include \"kit/library.h\"\n\n")
  string(APPEND text "namespace ${namespace} {\n")
  set(struct "")
  set(id "[A-Za-z_][A-Za-z0-9_]*")  # a C identifier
  foreach(line IN LISTS lines)
    if(line MATCHES "^[ \t]*(#.*)?$")
      continue()
    elseif(line MATCHES "^struct +(${id}) +(${id}) +(decltype|PFN)$")
      _hurray_symbol_struct_end()
      set(struct ${CMAKE_MATCH_1})
      set(table ${CMAKE_MATCH_2})
      set(rule ${CMAKE_MATCH_3})
      set(members "")
      set(entries "")
    elseif(line MATCHES "^(required|optional) +(${id})( +(.+))?$")
      if(struct STREQUAL "")
        message(FATAL_ERROR "${shown}: '${line}' comes before the first struct line")
      endif()
      set(need ${CMAKE_MATCH_1})
      set(name ${CMAKE_MATCH_2})
      set(spelled "${CMAKE_MATCH_4}")
      if(NOT spelled STREQUAL "")
        set(type "std::type_identity_t<${spelled}>")
      elseif(rule STREQUAL "PFN")
        set(type "PFN_${name}")
      else()
        set(type "decltype(&::${name})")
      endif()
      string(APPEND members "  ${type} ${name} = nullptr;\n")
      string(APPEND entries "    kit::${need}<&${struct}::${name}>,\n")
    else()
      message(FATAL_ERROR "${shown}: '${line}' is neither 'struct <Struct> <table> decltype|PFN' "
                          "nor 'required|optional <name> [<type>]'")
    endif()
  endforeach()
  _hurray_symbol_struct_end()
  string(APPEND text "\n}  // namespace ${namespace}\n")
  file(CONFIGURE OUTPUT ${HURRAY_GENERATED_DIR}/${header} CONTENT "${text}" @ONLY)
endfunction()

# Appends the struct being read, and its table, to `text` (a macro: it works
# in the caller's variables).
macro(_hurray_symbol_struct_end)
  if(NOT struct STREQUAL "")
    if(entries STREQUAL "")
      message(FATAL_ERROR "${shown}: struct ${struct} names no function")
    endif()
    string(APPEND text "\nstruct ${struct} {\n${members}};\n")
    string(APPEND text "inline constexpr kit::Symbol<${struct}> ${table}[] = {\n${entries}};\n")
    string(APPEND text "static_assert(kit::names_every_member(${table}));\n")
  endif()
endmacro()
