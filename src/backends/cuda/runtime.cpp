// The CUDA side of the GPU stream driver: starting the driver, opening a
// device (unified addressing required, primary context retained, one
// non-blocking stream), allocation calls and pointer classification.
#include <cstdio>

#include "gpu-stream/driver.h"

namespace hurray::gpu_stream::rt {

namespace {

// CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED (CUDA 12.0); older drivers do not
// know the attribute, and support IPC events on Linux.
constexpr int kAttrIpcEventSupported = 125;

const char *cu_name(const Api &cu, CUresult code, ErrorText *text) noexcept {
  error_text(cu, code, text);
  return text->name;
}

int attribute(const Api &cu, CUdevice dev, int attr, int fallback) noexcept {
  int v = 0;
  return cu.cuDeviceGetAttribute(&v, static_cast<CUdevice_attribute>(attr), dev) == CUDA_SUCCESS
             ? v
             : fallback;
}

// Can this device make an interprocess event and export it? (Not under
// every MPS or virtualised setup.)
bool check_ipc_events(const Api &cu, const Device &d) noexcept {
  if (attribute(cu, d.ref.dev, kAttrIpcEventSupported, 1) == 0) return false;
  CUevent ev = nullptr;
  if (cu.cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS) != CUDA_SUCCESS)
    return false;
  CUipcEventHandle h;
  const bool ok = cu.cuIpcGetEventHandle(&h, ev) == CUDA_SUCCESS;
  cu.cuEventDestroy(ev);
  return ok;
}

}  // namespace

hurray_status start(State *s, int *count, hurray_error *err) {
  const Api &cu = s->api;
  CUresult r = cu.cuInit(0);
  if (r != CUDA_SUCCESS)
    return rt_fail(err, cu, HURRAY_E_DEVICE_UNAVAILABLE, "cuInit", r, "driver library %s",
                   s->lib_name.c_str());
  cu.cuDriverGetVersion(&s->version);
  r = cu.cuDeviceGetCount(count);
  if (r != CUDA_SUCCESS)
    return rt_fail(err, cu, HURRAY_E_DEVICE_UNAVAILABLE, "cuDeviceGetCount", r, nullptr);
  if (*count <= 0)
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                "[cuDeviceGetCount] no CUDA device (the driver %s sees none)", s->lib_name.c_str());
  return HURRAY_OK;
}

void close_device(const Api &cu, Device &d) noexcept {
  if (d.ref.ctx == nullptr) return;
  if (d.stream != nullptr) {
    Current cur(cu, d.ref);
    if (cur.result() == CUDA_SUCCESS) {
      cu.cuStreamSynchronize(d.stream);
      cu.cuStreamDestroy(d.stream);
    }
  }
  cu.cuDevicePrimaryCtxRelease(d.ref.dev);
  d.stream = nullptr;
  d.ref.ctx = nullptr;
}

bool open_device(const Api &cu, int ordinal, Device *d, std::string *why) {
  ErrorText text;
  CUresult r = cu.cuDeviceGet(&d->ref.dev, ordinal);
  if (r != CUDA_SUCCESS) {
    note(why, "[cuDeviceGet] %s: device %d", cu_name(cu, r, &text), ordinal);
    return false;
  }
  char name[128] = "";
  if (cu.cuDeviceGetName(name, sizeof name - 1, d->ref.dev) != CUDA_SUCCESS || name[0] == '\0')
    std::snprintf(name, sizeof name, "CUDA device %d", ordinal);
  d->name = name;
  if (attribute(cu, d->ref.dev, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 0) != 1) {
    note(why, "device %d '%s': no unified addressing (the plugin hands out addresses)", ordinal,
         name);
    return false;
  }
  d->map_host = attribute(cu, d->ref.dev, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, 0) == 1;
  d->managed = attribute(cu, d->ref.dev, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 0) == 1;
  size_t total = 0;
  if (cu.cuDeviceTotalMem(&total, d->ref.dev) == CUDA_SUCCESS) d->total_mem = total;

  r = cu.cuDevicePrimaryCtxRetain(&d->ref.ctx, d->ref.dev);
  if (r != CUDA_SUCCESS) {
    d->ref.ctx = nullptr;
    note(why, "[cuDevicePrimaryCtxRetain] %s: device %d '%s'", cu_name(cu, r, &text), ordinal,
         name);
    return false;
  }
  {
    Current cur(cu, d->ref);
    r = cur.result();
    if (r == CUDA_SUCCESS) {
      r = stream_create(cu, &d->stream);
      if (r != CUDA_SUCCESS)
        d->stream = nullptr;
      else
        d->ipc_events = check_ipc_events(cu, *d);
    }
  }
  if (r != CUDA_SUCCESS) {
    note(why, "[cuStreamCreate] %s: device %d '%s'", cu_name(cu, r, &text), ordinal, name);
    close_device(cu, *d);
    return false;
  }
  return true;
}

bool can_access_peer(const Api &cu, const Device &from, const Device &to) noexcept {
  int can = 0;
  return cu.cuDeviceCanAccessPeer(&can, from.ref.dev, to.ref.dev) == CUDA_SUCCESS && can == 1;
}

Result enable_peer_access(const Api &cu, const Device &d) noexcept {
  const CUresult r = cu.cuCtxEnablePeerAccess(d.ref.ctx, 0);
  return r == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED ? CUDA_SUCCESS : r;
}

Result alloc_block(const Api &cu, uint8_t mc, uint64_t n, uintptr_t *base,
                   const char **function) noexcept {
  switch (mc) {
    case HURRAY_MEMORY_HOST_PINNED: {
      *function = "cuMemHostAlloc";
      void *p = nullptr;
      const CUresult r = cu.cuMemHostAlloc(&p, static_cast<size_t>(n),
                                           CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
      *base = reinterpret_cast<uintptr_t>(p);
      return r;
    }
    case HURRAY_MEMORY_UNIFIED: {
      *function = "cuMemAllocManaged";
      CUdeviceptr p = 0;
      const CUresult r = cu.cuMemAllocManaged(&p, static_cast<size_t>(n), CU_MEM_ATTACH_GLOBAL);
      *base = static_cast<uintptr_t>(p);
      return r;
    }
    default: {
      *function = "cuMemAlloc";
      CUdeviceptr p = 0;
      const CUresult r = cu.cuMemAlloc(&p, static_cast<size_t>(n));
      *base = static_cast<uintptr_t>(p);
      return r;
    }
  }
}

void free_block(const Api &cu, uint8_t mc, uintptr_t base) noexcept {
  if (mc == HURRAY_MEMORY_HOST_PINNED)
    cu.cuMemFreeHost(reinterpret_cast<void *>(base));
  else
    cu.cuMemFree(dptr(base));
}

Result host_device_pointer(const Api &cu, uintptr_t base, uintptr_t *view) noexcept {
  CUdeviceptr v = 0;
  const CUresult r = cu.cuMemHostGetDevicePointer(&v, reinterpret_cast<void *>(base), 0);
  *view = static_cast<uintptr_t>(v);
  return r;
}

hurray_status pointer_class(const State *s, const Device &d0, const void *ptr, uint8_t *mc,
                            int *runtime_device, hurray_error *err) {
  const Api &cu = s->api;
  // Each value lands in a zeroed 8-byte slot: the driver writes 4 bytes
  // (memory type, ordinal) or a boolean (is-managed) into the low end.
  uint64_t type = 0, managed = 0, ordinal = 0;
  CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                 CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  void *values[] = {&type, &managed, &ordinal};
  CUresult r;
  {
    const rt::Current current(s->api, d0.ref);
    if (const hurray_status st = check_current(current, s->api, d0, err)) return st;
    r = cu.cuPointerGetAttributes(3, attrs, values, dptr(reinterpret_cast<uintptr_t>(ptr)));
  }
  if (r != CUDA_SUCCESS) return rt_fail(err, cu, HURRAY_OK, "cuPointerGetAttributes", r, "%p", ptr);
  type &= 0xffffffffu;
  const bool is_managed = (managed & 0xffffffffu) != 0;
  if (is_managed) {
    *mc = HURRAY_MEMORY_UNIFIED;
  } else if (type == CU_MEMORYTYPE_HOST) {
    *mc = HURRAY_MEMORY_HOST_PINNED;
  } else if (type == CU_MEMORYTYPE_DEVICE) {
    *mc = HURRAY_MEMORY_STANDARD;
  } else if (type == CU_MEMORYTYPE_UNIFIED) {
    *mc = HURRAY_MEMORY_UNIFIED;
  } else {
    return refuse(err, HURRAY_E_INVALID_ARGUMENT,
                  "%p is not memory CUDA knows as a linear buffer (cuPointerGetAttributes: "
                  "memory type %u)",
                  ptr, static_cast<unsigned>(type));
  }
  *runtime_device = static_cast<int32_t>(static_cast<uint32_t>(ordinal));
  return HURRAY_OK;
}

}  // namespace hurray::gpu_stream::rt
