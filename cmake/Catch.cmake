# libhurray's `include(Catch)`: Catch2's own module (found beside
# Catch2Config.cmake), with catch_discover_tests wrapped so that every test
# it registers runs with `-w NoTests`. Catch2 2.13 exits 0 when a test name
# filter matches nothing; with `-w NoTests` it exits 2, so an entry whose
# filter has lost its test case (a renamed case, a name CTest split at a
# ';') fails instead of passing without running anything.
#
# tests/CMakeLists.txt puts this directory first on CMAKE_MODULE_PATH, so
# every `include(Catch)` below it (tests/net has its own) lands here; the
# include guard keeps the wrapper from being defined twice (a second
# definition would make _catch_discover_tests the wrapper itself).
# tests/check_catch_registration.py checks, at test time, that every entry
# of a Catch2 program matches at least one test case and that every test
# case has an entry.
include_guard(GLOBAL)

if(NOT Catch2_DIR OR NOT EXISTS "${Catch2_DIR}/Catch.cmake")
  message(FATAL_ERROR "hurray: include(Catch) needs find_package(Catch2) first "
                      "(Catch2_DIR is '${Catch2_DIR}')")
endif()
include("${Catch2_DIR}/Catch.cmake")

# Every Catch2 program that registers tests, for the registration check.
define_property(GLOBAL PROPERTY HURRAY_CATCH_PROGRAMS
  BRIEF_DOCS "Catch2 programs registered with catch_discover_tests"
  FULL_DOCS "Targets passed to catch_discover_tests (tests/check_catch_registration.py).")

function(catch_discover_tests TARGET)
  set(args ${ARGN})
  list(FIND args EXTRA_ARGS at)
  if(at EQUAL -1)
    list(APPEND args EXTRA_ARGS -w NoTests)
  else()
    math(EXPR at "${at} + 1")
    list(INSERT args ${at} -w NoTests)
  endif()
  set_property(GLOBAL APPEND PROPERTY HURRAY_CATCH_PROGRAMS ${TARGET})
  _catch_discover_tests(${TARGET} ${args})
endfunction()
