# What the CMake of each device plugin's tests shares (tests/backends/<plugin>):
#
#  hurray_add_plugin_tests(<target> PLUGIN <plugin target> PATH_DEFINE <NAME>
#                          SOURCES ... [INCLUDE_DIRS ...] [DEFINES ...] [NO_CATCH_MAIN])
#    a Catch2 test program of the plugin through its function table: it links
#    neither libhurray nor the vendor runtime, finds the plugin at the path
#    <NAME> names, and sees include/, src/backends and tests/common
#    (plugin_test_util.h).
#  hurray_add_plugin_elf_tests(<prefix> <plugin target> [LABELS ...])
#    "<prefix>: plugin links no vendor runtime and no libhurray" and
#    "<prefix>: plugin exports only hurray_backend_entry" (check_plugin_elf.sh).
find_package(Catch2 2 REQUIRED)
include(Catch)
find_package(Threads REQUIRED)

function(hurray_add_plugin_tests target)
  cmake_parse_arguments(arg "NO_CATCH_MAIN" "PLUGIN;PATH_DEFINE" "SOURCES;INCLUDE_DIRS;DEFINES" ${ARGN})
  set(main $<TARGET_OBJECTS:hurray_catch_main>)
  if(arg_NO_CATCH_MAIN)
    set(main)
  endif()
  get_filename_component(root ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../.. ABSOLUTE)
  add_executable(${target} ${main} ${arg_SOURCES})
  target_include_directories(${target} PRIVATE
    ${root}/include ${root}/src/backends ${root}/tests/common ${arg_INCLUDE_DIRS})
  target_compile_definitions(${target} PRIVATE
    "${arg_PATH_DEFINE}=\"$<TARGET_FILE:${arg_PLUGIN}>\"" ${arg_DEFINES})
  target_link_libraries(${target} PRIVATE Catch2::Catch2 Threads::Threads ${CMAKE_DL_LIBS})
  target_compile_options(${target} PRIVATE ${HURRAY_WARNINGS} -Wno-conversion)
  add_dependencies(${target} ${arg_PLUGIN})
endfunction()

function(hurray_add_plugin_elf_tests prefix plugin)
  cmake_parse_arguments(arg "" "" "LABELS" ${ARGN})
  set(needed "${prefix}: plugin links no vendor runtime and no libhurray")
  set(exports "${prefix}: plugin exports only hurray_backend_entry")
  add_test(NAME "${needed}"
    COMMAND sh ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/check_plugin_elf.sh needed $<TARGET_FILE:${plugin}>)
  add_test(NAME "${exports}"
    COMMAND sh ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/check_plugin_elf.sh exports $<TARGET_FILE:${plugin}>)
  if(arg_LABELS)
    set_tests_properties("${needed}" "${exports}" PROPERTIES LABELS "${arg_LABELS}")
  endif()
endfunction()
