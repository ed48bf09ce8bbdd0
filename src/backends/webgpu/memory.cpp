// The WebGPU plugin: allocation (a WGPUBuffer per allocation), free and
// classify.
#include "class_name.h"
#include "state.h"

namespace hurray::webgpu {

void release_buffer(State *s, WGPUBuffer b) noexcept {
  s->wgpu.wgpuBufferDestroy(b);
  s->wgpu.wgpuBufferRelease(b);
}

hurray_status alloc(void *state, int32_t device, uint8_t memory_class, uint64_t byte_size,
                    uint32_t alignment, uint32_t flags, hurray_backend_allocation *out,
                    hurray_error *err) {
  auto [refused, s, d] = kit::enter_out<State>(state, device, out, err, "alloc: out");
  if (refused != HURRAY_OK) return refused;
  if (memory_class != HURRAY_MEMORY_STANDARD)
    return refuse(err, HURRAY_E_DEVICE_UNAVAILABLE,
                  "memory class %s (0x%02x) is not available on device %d '%s': a "
                  "WebGPU buffer is device memory behind an opaque handle, STANDARD only",
                  hurray::plugin::class_name(memory_class), memory_class, static_cast<int>(device),
                  d->name.c_str());
  if ((flags & HURRAY_ALLOC_SHAREABLE) != 0)
    return refuse(err, HURRAY_E_UNSUPPORTED,
                  "HURRAY_ALLOC_SHAREABLE: WebGPU defines no way to export a buffer to "
                  "another process");
  // The data is a handle: any alignment holds for the buffer's own offsets.
  if (const hurray_status st = hurray::kit::begin_alloc(
          {device, memory_class, byte_size, alignment, flags}, HURRAY_MIN_ALIGNMENT,
          HURRAY_HANDOFF_OPAQUE_DATA, UINT64_MAX - HWGPU_COPY_ALIGNMENT, out, err))
    return st;
  if (byte_size == 0) return HURRAY_OK;  // an empty buffer has no memory
  // Copies move whole 4-byte words: the buffer is rounded up to one.
  WGPUBufferDescriptor desc{};
  desc.label = {"hurray", SIZE_MAX};
  desc.usage = kBufferUsage;
  desc.size = (byte_size + HWGPU_COPY_ALIGNMENT - 1) & ~uint64_t{HWGPU_COPY_ALIGNMENT - 1};
  std::lock_guard<std::mutex> lock(s->mu);
  s->live.reserve(s->live.size() + 1);  // may throw: before the buffer exists
  WGPUBuffer b = nullptr;
  const hurray_status st = on_worker(s, [&, s = s, d = d] {
    push_errors(s, *d);
    b = s->wgpu.wgpuDeviceCreateBuffer(d->device, &desc);
    const hurray_status popped =
        pop_errors(s, *d, "wgpuDeviceCreateBuffer", err, HURRAY_E_OUT_OF_MEMORY);
    if (popped != HURRAY_OK && b != nullptr) release_buffer(s, b);
    return popped;
  });
  if (st != HURRAY_OK) return st;
  if (b == nullptr)
    return fail(err, HURRAY_E_OUT_OF_MEMORY, "[wgpuDeviceCreateBuffer] NULL: %llu bytes on '%s'",
                static_cast<unsigned long long>(byte_size), d->name.c_str());
  s->live.insert(b);
  out->data = b;
  out->plugin_data = b;
  return HURRAY_OK;
}

void free_(void *state, hurray_backend_allocation *allocation) {
  auto *s = static_cast<State *>(state);
  if (s == nullptr || allocation == nullptr) return;
  if (auto *b = static_cast<WGPUBuffer>(allocation->plugin_data)) {
    std::lock_guard<std::mutex> lock(s->mu);
    if (s->live.erase(b) != 0) on_worker(s, [&] { release_buffer(s, b); });
  }
  allocation->plugin_data = nullptr;
  allocation->data = nullptr;
}

hurray_status classify(void *state, const void *ptr, int32_t *device, uint8_t *memory_class,
                       hurray_error *err) {
  auto *s = static_cast<State *>(state);
  if (s == nullptr)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT, "the plugin state is NULL (probe first)");
  {
    std::lock_guard<std::mutex> lock(s->mu);
    auto *b = static_cast<WGPUBuffer>(const_cast<void *>(ptr));
    if (ptr != nullptr && s->live.count(b) != 0)
      return kit::give_class(device, memory_class, 0, HURRAY_MEMORY_STANDARD);
  }
  return refuse(err, HURRAY_E_INVALID_ARGUMENT,
                "%p is not a WGPUBuffer this plugin allocated (a WebGPU handoff's data is "
                "the buffer handle itself)",
                ptr);
}

}  // namespace hurray::webgpu
