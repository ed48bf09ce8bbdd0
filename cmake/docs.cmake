# The `docs` target: the Doxygen reference of the public headers, written to
# ${CMAKE_BINARY_DIR}/docs/html (never into the current folder, as a bare
# `doxygen docs/Doxyfile` would). docs/Doxyfile sets WARN_AS_ERROR, so an
# undocumented declaration or a broken doc comment fails the build of the
# target (and the CTest test "docs: the docs target builds ...").
find_program(HURRAY_DOXYGEN doxygen)
if(HURRAY_DOXYGEN)
  add_custom_target(docs
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/docs
    COMMAND ${CMAKE_COMMAND} -E env HURRAY_DOXYGEN_OUT=${CMAKE_BINARY_DIR}/docs
            ${HURRAY_DOXYGEN} docs/Doxyfile
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    BYPRODUCTS ${CMAKE_BINARY_DIR}/docs/html/index.html
    COMMENT "Doxygen: the API reference in ${CMAKE_BINARY_DIR}/docs/html"
    VERBATIM)
else()
  message(STATUS "hurray: no doxygen, so no `docs` target")
endif()
