include_guard(GLOBAL)
include(${CMAKE_CURRENT_LIST_DIR}/HurraySymbols.cmake)

# hurray_add_backend_plugin(<name>
#     SOURCES <file>...                  the plugin's own sources
#     [INCLUDE_DIRS <dir>...]            more include folders
#     [SYSTEM_INCLUDE_DIRS <dir>...]     vendor headers (their warnings are not ours)
#     [DEFINITIONS <def>...]             compile definitions
#     [OUTPUT_DIRECTORY <dir>]           a test plugin's folder (not installed)
#     [GPU_STREAM])                      built on the CUDA/HIP driver (src/backends/gpu-stream)
#
# Adds the device plugin libhurray-<name>.so, target hurray-<name>: a MODULE
# built with the plugin kit (src/backends/kit, compiled into every plugin:
# errors, the exception barrier, checks, alignment, library loading, the
# allocation registry, IPC helpers) and libhurray's public headers, without
# linking libhurray. It links dl only and refuses undefined symbols, so an
# accidental call into a vendor runtime or libhurray fails the link
# (tests/backends/check_plugin_elf.sh checks the result); it exports
# hurray_backend_entry alone (src/backends/kit/exports.map). Built into
# HURRAY_PLUGIN_DIR (where libhurray looks, next to itself) and installed to
# HURRAY_PLUGIN_INSTALL_DIR, unless OUTPUT_DIRECTORY names another folder (a
# test plugin, which libhurray must not find by itself: it is not installed).
# HURRAY_KIT_PLUGIN is defined as "<name>". GPU_STREAM adds the sources of
# the one CUDA/HIP driver, which includes the plugin's own runtime.h: the
# plugin's folder comes first on the include path.
function(hurray_add_backend_plugin name)
  cmake_parse_arguments(PARSE_ARGV 1 P "GPU_STREAM" "OUTPUT_DIRECTORY" "SOURCES;INCLUDE_DIRS;SYSTEM_INCLUDE_DIRS;DEFINITIONS")
  set(backends ${PROJECT_SOURCE_DIR}/src/backends)
  set(kit ${backends}/kit)
  set(target hurray-${name})
  set(out ${HURRAY_PLUGIN_DIR})
  if(P_OUTPUT_DIRECTORY)
    set(out ${P_OUTPUT_DIRECTORY})
  endif()
  set(includes ${PROJECT_SOURCE_DIR}/include ${backends} ${HURRAY_GENERATED_DIR})
  if(P_GPU_STREAM)
    set(includes ${CMAKE_CURRENT_SOURCE_DIR} ${includes})
    foreach(f copy device error_text ipc ipc_parse ipc_wrapped memory plugin record release
        rt_fail runtime_vmm sync vmm)
      list(APPEND P_SOURCES ${backends}/gpu-stream/${f}.cpp)
    endforeach()
  endif()
  add_library(${target} MODULE ${P_SOURCES}
    ${kit}/align.cpp ${kit}/entry.cpp ${kit}/errors.cpp ${kit}/ipc.cpp ${kit}/library.cpp
    ${kit}/registry.cpp)
  target_include_directories(${target} PRIVATE ${includes} ${P_INCLUDE_DIRS})
  if(P_SYSTEM_INCLUDE_DIRS)
    target_include_directories(${target} SYSTEM PRIVATE ${P_SYSTEM_INCLUDE_DIRS})
  endif()
  target_compile_definitions(${target} PRIVATE "HURRAY_KIT_PLUGIN=\"${name}\"" ${P_DEFINITIONS})
  target_compile_options(${target} PRIVATE ${HURRAY_WARNINGS})
  target_link_libraries(${target} PRIVATE ${CMAKE_DL_LIBS})
  target_link_options(${target} PRIVATE
    -Wl,--version-script=${kit}/exports.map
    -Wl,--no-undefined -Wl,--as-needed)
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    OUTPUT_NAME ${target}
    LIBRARY_OUTPUT_DIRECTORY ${out}
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    LINK_DEPENDS ${kit}/exports.map)
  if(NOT P_OUTPUT_DIRECTORY)
    install(TARGETS ${target} LIBRARY DESTINATION ${HURRAY_PLUGIN_INSTALL_DIR})
  endif()
endfunction()

# hurray_find_vendor_header(<var> <header> <plugin> <hint> [find_path options...])
# Finds the folder that holds a vendor's <header> (types and prototypes only:
# a plugin links no vendor library) into the cache variable <var>; where it
# is absent, says that the <plugin> plugin is skipped and how to get it
# (<hint>). The caller returns when <var> is not set.
function(hurray_find_vendor_header var header plugin hint)
  find_path(${var} ${header} ${ARGN} DOC "Folder holding ${header} (${hint})")
  if(NOT ${var})
    message(STATUS "hurray: ${header} not found: the ${plugin} backend plugin is skipped (${hint})")
  endif()
endfunction()
