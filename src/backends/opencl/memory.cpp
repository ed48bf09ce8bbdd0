// The OpenCL plugin: allocation, copies and classify.
#include "state.h"

namespace hurray::opencl {

// ---- memory ---------------------------------------------------------------

hurray_status map_buffer(const Api &cl, const Device &d, cl_mem m, uint64_t size, void **out,
                         hurray_error *err) noexcept {
  cl_int e = CL_SUCCESS;
  void *p = cl.clEnqueueMapBuffer(d.queue, m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                  static_cast<size_t>(size), 0, nullptr, nullptr, &e);
  if (p == nullptr || e != CL_SUCCESS)
    return code_fail(err, HURRAY_OK, "clEnqueueMapBuffer",
                     cl_code(e != CL_SUCCESS ? e : CL_MAP_FAILURE), "%llu bytes on '%s'",
                     static_cast<unsigned long long>(size), d.name.c_str());
  *out = p;
  return HURRAY_OK;
}

void unmap_buffer(const Api &cl, const Device &d, cl_mem m, void *p) noexcept {
  cl.clEnqueueUnmapMemObject(d.queue, m, p, 0, nullptr, nullptr);
  cl.clFinish(d.queue);
}

hurray_status create_buffer(const Api &cl, const Device &d, cl_mem_flags flags, uint64_t size,
                            cl_mem *out, hurray_error *err) noexcept {
  cl_int e = CL_SUCCESS;
  *out = cl.clCreateBuffer(d.context, flags, static_cast<size_t>(size), nullptr, &e);
  if (*out == nullptr)
    return code_fail(err, HURRAY_OK, "clCreateBuffer", cl_code(e),
                     "%llu bytes on '%s' (CL_DEVICE_MAX_MEM_ALLOC_SIZE %llu)",
                     static_cast<unsigned long long>(size), d.name.c_str(),
                     static_cast<unsigned long long>(d.max_alloc));
  return HURRAY_OK;
}

hurray_status alloc_pinned(const Api &cl, const Device &d, uint64_t size, uint32_t align,
                           Allocation *a, hurray_error *err) noexcept {
  const cl_mem_flags flags = CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR;
  // First try: the buffer itself, if its mapping is aligned enough.
  cl_mem m = nullptr;
  void *p = nullptr;
  if (const hurray_status st = create_buffer(cl, d, flags, size, &m, err)) return st;
  if (const hurray_status st = map_buffer(cl, d, m, size, &p, err)) {
    cl.clReleaseMemObject(m);
    return st;
  }
  if (is_aligned(p, align)) {
    a->mem = m;
    a->ptr = p;
    return HURRAY_OK;
  }
  unmap_buffer(cl, d, m, p);
  cl.clReleaseMemObject(m);

  // Second try: a larger buffer and a sub-buffer whose mapping starts at an
  // aligned host address. Sub-buffer origins must be multiples of
  // CL_DEVICE_MEM_BASE_ADDR_ALIGN, which divides `align`.
  if (d.max_alloc < align || size > d.max_alloc - align)
    return refuse(err, HURRAY_E_OUT_OF_MEMORY,
                  "HOST_PINNED on '%s': the mapping is not %u-byte aligned and %llu + %u "
                  "bytes exceed CL_DEVICE_MAX_MEM_ALLOC_SIZE (%llu) to place it",
                  d.name.c_str(), align, static_cast<unsigned long long>(size), align,
                  static_cast<unsigned long long>(d.max_alloc));
  cl_mem parent = nullptr;
  if (const hurray_status st = create_buffer(cl, d, flags, size + align, &parent, err)) return st;
  void *base = nullptr;
  if (const hurray_status st = map_buffer(cl, d, parent, size + align, &base, err)) {
    cl.clReleaseMemObject(parent);
    return st;
  }
  unmap_buffer(cl, d, parent, base);
  const uint64_t offset = (align - reinterpret_cast<uintptr_t>(base) % align) % align;
  if (offset % d.base_align != 0) {
    cl.clReleaseMemObject(parent);
    return refuse(err, HURRAY_E_ALIGNMENT,
                  "HOST_PINNED on '%s': clEnqueueMapBuffer returned %p, aligned to %llu "
                  "bytes only, less than CL_DEVICE_MEM_BASE_ADDR_ALIGN (%u bytes): no sub-buffer "
                  "can start at a %u-byte aligned address",
                  d.name.c_str(), base, static_cast<unsigned long long>(alignment_of(base)),
                  d.base_align, align);
  }
  const cl_buffer_region region{static_cast<size_t>(offset), static_cast<size_t>(size)};
  cl_int e = CL_SUCCESS;
  cl_mem sub = cl.clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION,
                                    &region, &e);
  if (sub == nullptr) {
    cl.clReleaseMemObject(parent);
    return code_fail(err, HURRAY_OK, "clCreateSubBuffer", cl_code(e),
                     "%llu bytes at offset %llu on '%s'", static_cast<unsigned long long>(size),
                     static_cast<unsigned long long>(offset), d.name.c_str());
  }
  if (const hurray_status st = map_buffer(cl, d, sub, size, &p, err)) {
    cl.clReleaseMemObject(sub);
    cl.clReleaseMemObject(parent);
    return st;
  }
  if (!is_aligned(p, align)) {
    unmap_buffer(cl, d, sub, p);
    cl.clReleaseMemObject(sub);
    cl.clReleaseMemObject(parent);
    return refuse(err, HURRAY_E_ALIGNMENT,
                  "HOST_PINNED on '%s': clEnqueueMapBuffer returned %p, aligned to %llu "
                  "bytes, not the %u asked (the driver does not keep mappings at a fixed address)",
                  d.name.c_str(), p, static_cast<unsigned long long>(alignment_of(p)), align);
  }
  a->mem = sub;
  a->parent = parent;
  a->ptr = p;
  return HURRAY_OK;
}

hurray_status alloc_svm(const Api &cl, const Device &d, uint64_t size, uint32_t align,
                        Allocation *a, hurray_error *err) noexcept {
  const cl_svm_mem_flags flags = CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER;
  // OpenCL caps clSVMAlloc's alignment at the size of the largest data type
  // (CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE); a larger one is an error (and leaks
  // in PoCL 3.1). Above the cap, or when the pointer comes back misaligned,
  // ask for room and align inside it.
  void *p = nullptr;
  if (align <= d.svm_align_cap) {
    p = cl.clSVMAlloc(d.context, flags, static_cast<size_t>(size), align);
    if (p != nullptr && !is_aligned(p, align)) {
      cl.clSVMFree(d.context, p);
      p = nullptr;
    }
  }
  void *base = p;
  if (p == nullptr) {
    if (d.max_alloc < align || size > d.max_alloc - align)
      return fail(err, HURRAY_E_OUT_OF_MEMORY,
                  "[clSVMAlloc] NULL: %llu bytes of fine-grained SVM aligned to %u on '%s' "
                  "(CL_DEVICE_MAX_MEM_ALLOC_SIZE %llu)",
                  static_cast<unsigned long long>(size), align, d.name.c_str(),
                  static_cast<unsigned long long>(d.max_alloc));
    base = cl.clSVMAlloc(d.context, flags, static_cast<size_t>(size + align), 0);
    if (base == nullptr)
      return fail(err, HURRAY_E_OUT_OF_MEMORY,
                  "[clSVMAlloc] NULL: %llu bytes of fine-grained SVM on '%s' (OpenCL gives no "
                  "reason; CL_DEVICE_MAX_MEM_ALLOC_SIZE %llu)",
                  static_cast<unsigned long long>(size + align), d.name.c_str(),
                  static_cast<unsigned long long>(d.max_alloc));
    const uintptr_t b = reinterpret_cast<uintptr_t>(base);
    p = reinterpret_cast<void *>((b + align - 1) & ~(static_cast<uintptr_t>(align) - 1));
  }
  a->svm_base = base;
  a->ptr = p;
  return HURRAY_OK;
}

// Give back what alloc_* made for `a` (not the record itself).
void release_resources(const Api &cl, const Device &d, Allocation *a) noexcept {
  switch (a->memory_class) {
    case HURRAY_MEMORY_STANDARD:
      cl.clReleaseMemObject(a->mem);
      break;
    case HURRAY_MEMORY_HOST_PINNED:
      unmap_buffer(cl, d, a->mem, a->ptr);
      cl.clReleaseMemObject(a->mem);
      if (a->parent != nullptr) cl.clReleaseMemObject(a->parent);
      break;
    default:
      // clSVMFree does not wait for the commands that use the memory.
      cl.clFinish(d.queue);
      cl.clSVMFree(d.context, a->svm_base);
      break;
  }
  a->mem = a->parent = nullptr;
  a->ptr = a->svm_base = nullptr;
}

hurray_status alloc(void *state, int32_t device, uint8_t memory_class, uint64_t byte_size,
                    uint32_t alignment, uint32_t flags, hurray_backend_allocation *out,
                    hurray_error *err) {
  auto [refused, s, d] = kit::enter_out<State>(state, device, out, err, "alloc: out");
  if (refused != HURRAY_OK) return refused;

  if (memory_class != HURRAY_MEMORY_STANDARD && memory_class != HURRAY_MEMORY_HOST_PINNED &&
      memory_class != HURRAY_MEMORY_UNIFIED)
    return refuse(err, HURRAY_E_DEVICE_UNAVAILABLE,
                  "memory class %s (0x%02x) is not available on device %d '%s': %s",
                  class_name(memory_class), memory_class, static_cast<int>(device), d->name.c_str(),
                  memory_class == HURRAY_MEMORY_PEER
                      ? "OpenCL has no memory mapped for peer devices"
                      : "OpenCL serves STANDARD, HOST_PINNED and UNIFIED only");
  if (memory_class == HURRAY_MEMORY_UNIFIED && !d->fine_svm)
    return refuse(err, HURRAY_E_DEVICE_UNAVAILABLE,
                  "memory class UNIFIED (0x02) is not available on device %d '%s': it "
                  "needs fine-grained buffer SVM (CL_DEVICE_SVM_FINE_GRAIN_BUFFER), which the "
                  "device does not report",
                  static_cast<int>(device), d->name.c_str());
  if ((flags & HURRAY_ALLOC_SHAREABLE) != 0)
    return refuse(err, HURRAY_E_UNSUPPORTED,
                  "HURRAY_ALLOC_SHAREABLE: OpenCL has no portable way to export memory to "
                  "another process");
  const uint32_t opaque =
      memory_class == HURRAY_MEMORY_STANDARD ? HURRAY_HANDOFF_OPAQUE_DATA : 0u;
  if (const hurray_status st = hurray::kit::begin_alloc(
          {device, memory_class, byte_size, alignment, flags}, d->min_alignment(), opaque,
          SIZE_MAX / 2, out, err))
    return st;
  const uint32_t align = out->alignment;
  if (byte_size == 0) return HURRAY_OK;  // an empty buffer has no memory

  Allocation *a = s->records.pop();
  if (a == nullptr) return refuse(err, HURRAY_E_OUT_OF_MEMORY, "alloc: out of host memory");
  a->device = device;
  a->memory_class = memory_class;
  a->byte_size = byte_size;
  a->mem = a->parent = nullptr;
  a->ptr = a->svm_base = nullptr;
  const Api &cl = s->cl;
  hurray_status st = HURRAY_OK;
  switch (memory_class) {
    case HURRAY_MEMORY_STANDARD:
      st = create_buffer(cl, *d, CL_MEM_READ_WRITE, byte_size, &a->mem, err);
      break;
    case HURRAY_MEMORY_HOST_PINNED:
      st = alloc_pinned(cl, *d, byte_size, align, a, err);
      break;
    default:
      st = alloc_svm(cl, *d, byte_size, align, a, err);
      if (st == HURRAY_OK) {
        try {
          std::lock_guard<std::mutex> lock(s->mu);
          s->svm.emplace(reinterpret_cast<uintptr_t>(a->ptr), SvmRange{byte_size, device});
        } catch (...) {
          release_resources(cl, *d, a);
          st = refuse(err, HURRAY_E_OUT_OF_MEMORY, "alloc: out of host memory");
        }
      }
      break;
  }
  if (st != HURRAY_OK) {
    s->records.push(a);
    return st;
  }
  a->live.store(true, std::memory_order_release);
  if (memory_class == HURRAY_MEMORY_STANDARD) {
    out->data = a->mem;
  } else {
    out->data = out->host = a->ptr;
  }
  out->plugin_data = a;
  return HURRAY_OK;
}

void free_allocation(State *s, Allocation *a) noexcept {
  a->live.store(false, std::memory_order_relaxed);
  if (a->memory_class == HURRAY_MEMORY_UNIFIED) {
    std::lock_guard<std::mutex> lock(s->mu);
    s->svm.erase(reinterpret_cast<uintptr_t>(a->ptr));
  }
  release_resources(s->cl, s->devices[static_cast<size_t>(a->device)], a);
  s->records.push(a);
}

void free_(void *state, hurray_backend_allocation *allocation) {
  hurray::kit::free_record<State, Allocation>(state, allocation, free_allocation);
}

namespace {

// Copy n bytes between host memory and the allocation, to_host or not:
// STANDARD through the device's queue (a blocking read or write, after the
// work queued before it); host-visible memory with memcpy once the queued
// work is done (no queued command may still use it).
hurray_status copy(const State *s, const Allocation *a, const Device *d, uint64_t offset,
                   void *host, uint64_t n, bool to_host, hurray_error *err) noexcept {
  const Api &cl = s->cl;
  const auto at = static_cast<size_t>(offset);
  const auto len = static_cast<size_t>(n);
  if (a->memory_class == HURRAY_MEMORY_STANDARD) {
    const cl_int e = to_host ? cl.clEnqueueReadBuffer(d->queue, a->mem, CL_TRUE, at, len, host, 0,
                                                      nullptr, nullptr)
                             : cl.clEnqueueWriteBuffer(d->queue, a->mem, CL_TRUE, at, len, host, 0,
                                                       nullptr, nullptr);
    if (e != CL_SUCCESS)
      return code_fail(err, HURRAY_OK, to_host ? "clEnqueueReadBuffer" : "clEnqueueWriteBuffer",
                       cl_code(e), "%llu bytes %s '%s'", static_cast<unsigned long long>(n),
                       to_host ? "from" : "to", d->name.c_str());
    return HURRAY_OK;
  }
  const cl_int e = cl.clFinish(d->queue);
  if (e != CL_SUCCESS)
    return code_fail(err, HURRAY_OK, "clFinish", cl_code(e), "'%s'", d->name.c_str());
  char *mem = static_cast<char *>(a->ptr) + offset;
  if (to_host)
    std::memcpy(host, mem, len);
  else
    std::memcpy(mem, host, len);
  return HURRAY_OK;
}

}  // namespace

hurray_status copy_from_host(void *state, hurray_backend_allocation *dst, uint64_t offset,
                             const void *src, uint64_t n, hurray_error *err) {
  return kit::copy_entry<const State, Allocation>(state, dst, offset, const_cast<void *>(src), n,
                                                  false, err, copy);
}

hurray_status copy_to_host(void *state, const hurray_backend_allocation *src, uint64_t offset,
                           void *dst, uint64_t n, hurray_error *err) {
  return kit::copy_entry<const State, Allocation>(state, src, offset, dst, n, true, err, copy);
}

hurray_status classify(void *state, const void *ptr, int32_t *device, uint8_t *memory_class,
                       hurray_error *err) {
  auto *s = static_cast<State *>(state);
  if (s == nullptr)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT, "the plugin state is NULL (probe first)");
  const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  {
    std::lock_guard<std::mutex> lock(s->mu);
    auto it = s->svm.upper_bound(p);
    if (ptr != nullptr && it != s->svm.begin()) {
      --it;
      if (p - it->first < it->second.size)
        return kit::give_class(device, memory_class, it->second.device, HURRAY_MEMORY_UNIFIED);
    }
  }
  return refuse(err, HURRAY_E_UNSUPPORTED,
                "%p is not fine-grained SVM allocated by this plugin; OpenCL cannot say "
                "what other pointers are",
                ptr);
}

}  // namespace hurray::opencl
