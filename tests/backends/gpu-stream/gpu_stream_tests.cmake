# The test programs of a plugin built on src/backends/gpu-stream (CUDA, HIP):
# written once, each plugin's CMakeLists.txt (tests/backends/cuda,
# tests/backends/hip) calls them with what is its own.

# hurray_<plugin>_tests: the plugin through its table (dlopened; links
# neither the vendor runtime nor libhurray): gpu_stream_plugin_test.cpp, the
# kit's logic (tests/backends/kit/kit_logic_test.cpp, its tests named
# "<plugin>: gpu-common: ..."), and SOURCES (the plugin's own tests and the
# plugin files they test); then the checks of the plugin's ELF file.
#
#   hurray_gpu_stream_plugin_tests(<plugin> VENDOR_INCLUDE_DIR <dir>
#     SOURCES <file>... [DEFINITIONS <def>...] [DEPENDS <target>...])
function(hurray_gpu_stream_plugin_tests plugin)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "VENDOR_INCLUDE_DIR" "SOURCES;DEFINITIONS;DEPENDS")
  set(src ${PROJECT_SOURCE_DIR}/src/backends)
  set(tests ${PROJECT_SOURCE_DIR}/tests)
  string(TOUPPER ${plugin} upper)
  set(t hurray_${plugin}_tests)
  add_executable(${t}
    $<TARGET_OBJECTS:hurray_catch_main>
    ${tests}/backends/gpu-stream/gpu_stream_plugin_test.cpp
    ${tests}/backends/kit/kit_logic_test.cpp
    ${ARG_SOURCES}
    ${src}/kit/align.cpp ${src}/kit/errors.cpp ${src}/kit/ipc.cpp ${src}/kit/library.cpp
    ${src}/kit/registry.cpp ${src}/gpu-stream/error_text.cpp)
  target_include_directories(${t} PRIVATE ${PROJECT_SOURCE_DIR}/include ${src}/${plugin} ${src}
    ${HURRAY_GENERATED_DIR}
    ${tests}/common ${tests}/backends/gpu-stream)
  target_include_directories(${t} SYSTEM PRIVATE ${ARG_VENDOR_INCLUDE_DIR})
  target_compile_definitions(${t} PRIVATE ${ARG_DEFINITIONS}
    "HURRAY_${upper}_PLUGIN=\"$<TARGET_FILE:hurray-${plugin}>\""
    "GPU_COMMON_TEST_PREFIX=\"${plugin}: \""
    "HURRAY_KIT_PLUGIN=\"${plugin}\"")
  target_link_libraries(${t} PRIVATE Catch2::Catch2 Threads::Threads ${CMAKE_DL_LIBS})
  target_compile_options(${t} PRIVATE ${HURRAY_WARNINGS} -Wno-conversion)
  add_dependencies(${t} hurray-${plugin} ${ARG_DEPENDS})
  catch_discover_tests(${t} PROPERTIES SKIP_RETURN_CODE 77 LABELS ${plugin})

  foreach(check "needed;links no vendor runtime and no libhurray"
                "exports;exports only hurray_backend_entry")
    list(GET check 0 mode)
    list(GET check 1 what)
    add_test(NAME "${plugin}: plugin ${what}"
      COMMAND sh ${tests}/backends/check_plugin_elf.sh ${mode} $<TARGET_FILE:hurray-${plugin}>)
    set_tests_properties("${plugin}: plugin ${what}" PROPERTIES LABELS ${plugin})
  endforeach()
endfunction()

# hurray_<plugin>_ipc_tests: the plugin's memory across processes over a
# fake runtime (tests/backends/cuda: cuda_fake_ipc_process_test.cpp,
# cuda_fake_ipc_hostile_test.cpp, cuda_fake_wire_test.cpp, and SOURCES),
# with a consumer process (hurray_<plugin>_ipc_peer) and a hostile producer
# speaking the wire format itself (hurray_<plugin>_wire_peer, bad VMM
# HANDOFFs). What differs per plugin is in cuda_ipc_driver.h (DEFINITIONS
# selects it) and in the arguments.
#
#   hurray_gpu_stream_ipc_tests(<plugin> FAKE <fake runtime target>
#     VENDOR_INCLUDE_DIR <dir> [SOURCES <file>...] [DEFINITIONS <def>...])
function(hurray_gpu_stream_ipc_tests plugin)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "FAKE;VENDOR_INCLUDE_DIR" "SOURCES;DEFINITIONS")
  set(dir ${PROJECT_SOURCE_DIR}/tests/backends/cuda)
  set(kit ${PROJECT_SOURCE_DIR}/src/backends/kit)
  set(peer hurray_${plugin}_ipc_peer)
  set(wire_peer hurray_${plugin}_wire_peer)
  set(t hurray_${plugin}_ipc_tests)
  add_executable(${peer} ${dir}/cuda_fake_ipc_peer.cpp)
  add_executable(${wire_peer} ${dir}/cuda_fake_wire_peer.cpp ${PROJECT_SOURCE_DIR}/src/ipc/wire.cpp)
  add_executable(${t}
    $<TARGET_OBJECTS:hurray_catch_main>
    ${dir}/cuda_fake_ipc_process_test.cpp ${dir}/cuda_fake_ipc_hostile_test.cpp
    ${dir}/cuda_fake_wire_test.cpp ${ARG_SOURCES}
    ${kit}/ipc.cpp ${kit}/errors.cpp)
  foreach(target ${peer} ${wire_peer} ${t})
    target_include_directories(${target} SYSTEM PRIVATE ${ARG_VENDOR_INCLUDE_DIR})
    target_compile_definitions(${target} PRIVATE ${ARG_DEFINITIONS})
    target_link_libraries(${target} PRIVATE hurray ${CMAKE_DL_LIBS})
    target_compile_options(${target} PRIVATE ${HURRAY_WARNINGS})
  endforeach()
  target_include_directories(${t} PRIVATE ${dir} ${PROJECT_SOURCE_DIR}/tests/common
    ${PROJECT_SOURCE_DIR}/tests/ipc ${PROJECT_SOURCE_DIR}/src/backends)
  target_compile_definitions(${t} PRIVATE
    "HURRAY_GPU_IPC_PLUGIN=\"$<TARGET_FILE:hurray-${plugin}>\""
    "HURRAY_GPU_IPC_PLUGIN_DIR=\"$<TARGET_FILE_DIR:hurray-${plugin}>\""
    "HURRAY_GPU_IPC_FAKE=\"$<TARGET_FILE:${ARG_FAKE}>\""
    "HURRAY_GPU_IPC_PEER=\"$<TARGET_FILE:${peer}>\""
    "HURRAY_GPU_IPC_WIRE_PEER=\"$<TARGET_FILE:${wire_peer}>\""
    "HURRAY_KIT_PLUGIN=\"${plugin}-test\"")
  target_link_libraries(${t} PRIVATE Catch2::Catch2 Threads::Threads)
  add_dependencies(${t} hurray-${plugin} ${ARG_FAKE} ${peer} ${wire_peer})
  catch_discover_tests(${t} PROPERTIES SKIP_RETURN_CODE 77 LABELS ${plugin})
endfunction()
