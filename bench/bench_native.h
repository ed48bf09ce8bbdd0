// The OpenCL plugin's device 0 as its native handles give it, for the
// benchmarks' raw OpenCL calls: functions come from dlsym on the ICD loader
// the plugin opened (native slot 4), so nothing links it. (Vulkan's is
// VkNative of tests/common/vulkan_gate.h.)
#pragma once

#include <hurray.h>
#include <hurray_backend.h>

#include <dlfcn.h>

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>

namespace hurray_bench {

struct ClNative {
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  void *lib = nullptr;

  bool load() {
    hurray_backend_native n;
    if (hurray_device_native(nullptr, HURRAY_DEVICE_OPENCL, 0, &n, nullptr) != HURRAY_OK)
      return false;
    context = static_cast<cl_context>(n.handles[2]);
    queue = static_cast<cl_command_queue>(n.handles[3]);
    lib = n.handles[4];
    return lib != nullptr;
  }
  // *out = the ICD loader's `name`; false when it has none.
  template <class Fn>
  bool fn(Fn *out, const char *name) const {
    *out = reinterpret_cast<Fn>(dlsym(lib, name));
    return *out != nullptr;
  }
};

}  // namespace hurray_bench
