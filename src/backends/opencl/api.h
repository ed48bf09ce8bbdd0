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

namespace hurray::opencl {

// XX(name, required): every cl* function the plugin calls. A loader that
// lacks a required one is HURRAY_E_DEVICE_UNAVAILABLE; the optional ones are
// OpenCL 2.0 functions, absent from 1.x loaders (then no UNIFIED memory and
// clCreateCommandQueue for the queues).
#define HURRAY_OPENCL_FUNCTIONS(XX)        \
  XX(clGetPlatformIDs, true)               \
  XX(clGetPlatformInfo, true)              \
  XX(clGetDeviceIDs, true)                 \
  XX(clGetDeviceInfo, true)                \
  XX(clCreateContext, true)                \
  XX(clReleaseContext, true)               \
  XX(clCreateCommandQueue, true)           \
  XX(clCreateCommandQueueWithProperties, false) \
  XX(clReleaseCommandQueue, true)          \
  XX(clCreateBuffer, true)                 \
  XX(clCreateSubBuffer, true)              \
  XX(clReleaseMemObject, true)             \
  XX(clEnqueueMapBuffer, true)             \
  XX(clEnqueueUnmapMemObject, true)        \
  XX(clEnqueueReadBuffer, true)            \
  XX(clEnqueueWriteBuffer, true)           \
  XX(clEnqueueMarkerWithWaitList, true)    \
  XX(clEnqueueBarrierWithWaitList, true)   \
  XX(clWaitForEvents, true)                \
  XX(clReleaseEvent, true)                 \
  XX(clFlush, true)                        \
  XX(clSetEventCallback, false)            \
  XX(clFinish, true)                       \
  XX(clSVMAlloc, false)                    \
  XX(clSVMFree, false)

// The resolved entry points; a missing optional one is nullptr.
struct Api {
#define HURRAY_OPENCL_XX_(name, required) decltype(&::name) name = nullptr;
  HURRAY_OPENCL_FUNCTIONS(HURRAY_OPENCL_XX_)
#undef HURRAY_OPENCL_XX_
};

// Resolve every function of HURRAY_OPENCL_FUNCTIONS from `lib` (a dlopen
// handle). Returns nullptr on success, else the name of the first required
// function that is missing.
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
