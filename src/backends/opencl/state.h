// libhurray-opencl.so, the OpenCL device plugin (device tag 0x08), plugin
// ABI hurray_backend_v1: this header holds its state (platforms, devices,
// allocations) and the helpers every file of src/backends/opencl uses; one
// file a concern: device (probe), memory (allocation, copies, classify),
// sync (events), plugin (native handles and the table). It links no OpenCL
// library: probe() dlopens libOpenCL.so.1. STANDARD is a cl_mem (opaque
// data), HOST_PINNED a mapped buffer, UNIFIED fine-grain SVM; events are
// cl_events; no IPC. The user reference is docs/backends/opencl.md.
#pragma once

#include <dlfcn.h>
#include <hurray_backend.h>

#include <algorithm>
#include <bit>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "../../core/pool.h"  // header-only; links nothing of libhurray
#include "api.h"
#include "class_name.h"
#include "kit/align.h"
#include "kit/enter.h"
#include "kit/entry.h"
#include "kit/errors.h"
#include "kit/ipc.h"
#include "kit/library.h"
#include "kit/table.h"

namespace hurray::opencl {

// ---- errors ---------------------------------------------------------------

using hurray::kit::fail;
using hurray::kit::refuse;

inline hurray_status status_of(cl_int code) noexcept {
  switch (code) {
    case CL_OUT_OF_HOST_MEMORY:
    case CL_OUT_OF_RESOURCES:
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_INVALID_BUFFER_SIZE:
      return HURRAY_E_OUT_OF_MEMORY;
    case CL_DEVICE_NOT_FOUND:
    case CL_DEVICE_NOT_AVAILABLE:
    case CL_PLATFORM_NOT_FOUND_KHR:
      return HURRAY_E_DEVICE_UNAVAILABLE;
    case CL_INVALID_COMMAND_QUEUE:
    case CL_INVALID_CONTEXT:
    case CL_INVALID_EVENT:
    case CL_INVALID_EVENT_WAIT_LIST:
    case CL_INVALID_MEM_OBJECT:
      return HURRAY_E_INVALID_ARGUMENT;
    default:
      return HURRAY_E_BACKEND;
  }
}

// An OpenCL error code for kit::code_fail: "[clCreateBuffer]
// CL_MEM_OBJECT_ALLOCATION_FAILURE: <details>" (an unknown code is "OpenCL
// error -9999"); the status follows the code unless the call gives one.
inline hurray::kit::VendorCode cl_code(cl_int code) noexcept {
  hurray::kit::VendorCode c{status_of(code), hurray::opencl::error_name(code), {}};
  if (c.name == nullptr)
    std::snprintf(c.number, sizeof c.number, "OpenCL error %d", static_cast<int>(code));
  return c;
}
using hurray::kit::code_fail;

using hurray::plugin::class_name;

// ---- state ----------------------------------------------------------------

struct Device {
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  std::string name;
  std::string version;   // "OpenCL 3.0": the first two words of CL_DEVICE_VERSION
  std::string platform_name;
  uint32_t base_align = 1;  // bytes: CL_DEVICE_MEM_BASE_ADDR_ALIGN is in bits
  uint64_t max_alloc = 0;   // CL_DEVICE_MAX_MEM_ALLOC_SIZE
  bool fine_svm = false;    // CL_DEVICE_SVM_FINE_GRAIN_BUFFER and clSVMAlloc
  uint32_t svm_align_cap = 0;  // CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE: clSVMAlloc's limit
  uint32_t min_alignment() const noexcept {
    return std::max<uint32_t>(HURRAY_MIN_ALIGNMENT, base_align);
  }
};

// The plugin's record of one allocation: hurray_backend_allocation.plugin_data.
// Records come from State::records and go back there when freed; `live` says
// which ones shutdown() still has to free.
struct Allocation {
  std::atomic<uint32_t> pool_next{0};  // for hurray::detail::Pool
  uint32_t pool_index = 0;
  std::atomic<bool> live{false};
  int32_t device = 0;
  uint8_t memory_class = 0;
  uint64_t byte_size = 0;
  cl_mem mem = nullptr;      // STANDARD, HOST_PINNED (a sub-buffer when placed)
  cl_mem parent = nullptr;   // HOST_PINNED placed inside a larger buffer
  void *ptr = nullptr;       // HOST_PINNED: the mapped pointer; UNIFIED: the SVM pointer
  void *svm_base = nullptr;  // UNIFIED: what clSVMFree takes
};

struct SvmRange {
  uint64_t size;
  int32_t device;
};

struct State {
  void *lib = nullptr;
  Api cl;
  std::vector<Device> devices;  // fixed after probe

  // Allocation records, reused without a lock (the alloc/free cycle then
  // never takes the heap; bench/backend_bench.cpp measures it against the
  // raw calls). Never shrinks until shutdown.
  hurray::detail::Pool<Allocation> records;

  std::mutex mu;                          // guards what follows
  std::map<uintptr_t, SvmRange> svm;      // UNIFIED pointers handed out
};

using hurray::kit::find_device;

using hurray::kit::alignment_of;
using hurray::kit::is_aligned;

// ---- defined in the other files of the plugin ------------------------------

void free_allocation(State *s, Allocation *a) noexcept;

// The entry points and the table (src/backends/kit/entries.h).
#include "kit/entries.h"

}  // namespace hurray::opencl
