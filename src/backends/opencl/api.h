// What src/backends/opencl offers the rest of the plugin: the table of OpenCL
// entry points resolved with dlsym (the plugin links no libOpenCL) and the
// names of OpenCL error codes. Not installed.
#pragma once

// Built with CL_TARGET_OPENCL_VERSION=300 and CL_USE_DEPRECATED_OPENCL_1_2_APIS
// (for clCreateCommandQueue, which OpenCL 1.x devices still need); see
// CMakeLists.txt.
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include "kit/library.h"
#include "opencl_symbols.h"  // struct Api and kSymbols, from symbols.txt

namespace hurray::opencl {

// Api (opencl_symbols.h, written from symbols.txt) holds every cl* function
// the plugin calls, resolved at run time: a loader that lacks a required one
// is HURRAY_E_DEVICE_UNAVAILABLE. The optional ones are OpenCL 2.0
// functions, absent from 1.x loaders (then no UNIFIED memory and
// clCreateCommandQueue for the queues); a missing one is nullptr.

// Resolve every function of Api from `lib` (a dlopen handle). Returns
// nullptr on success, else the name of the first required function that is
// missing.
const char *load_api(void *lib, Api *api) noexcept;

// "CL_MEM_OBJECT_ALLOCATION_FAILURE" for -4; nullptr for a code this plugin
// does not know (format it with its number then).
const char *error_name(cl_int code) noexcept;

// The ICD loader probe opens (kit::probe_state).
constexpr const char *kLibrary = "libOpenCL.so.1";
inline constexpr const char *kSonames[] = {kLibrary, nullptr};
inline constexpr hurray::kit::Library kLoader{nullptr, kSonames,
                                              "an OpenCL 1.2 or later ICD loader is needed"};

}  // namespace hurray::opencl
