// The WebGPU plugin: copies between host memory and a WGPUBuffer. Reads go
// through a MapRead staging buffer (copyBufferToBuffer, then MapAsync);
// writes through wgpuQueueWriteBuffer. WebGPU moves whole 4-byte words
// (offsets and sizes multiples of 4): a read stages the rounded range and
// keeps the bytes asked; a write whose ends are not on a word boundary reads
// the edge word, patches it and writes it back (under the device's lock, so
// two writes of this plugin never lose each other's bytes).
#include <algorithm>

#include "kit/entry.h"
#include "state.h"

namespace hurray::webgpu {

namespace {

constexpr uint64_t kWord = HWGPU_COPY_ALIGNMENT;

struct MapResult {
  uint32_t status = 0;
  std::string message;
};

void on_map(uint32_t status, WGPUStringView message, void *userdata1, void *) {
  auto *r = static_cast<MapResult *>(userdata1);
  r->status = status;
  try {
    r->message = to_string(message);
  } catch (...) {
  }
}

// One staged read of [offset, offset + n), both multiples of 4, n <= the chunk.
hurray_status read_words(State *s, const Device &d, WGPUBuffer b, uint64_t offset, uint64_t n,
                         unsigned char *dst, uint64_t skip, uint64_t keep, hurray_error *err) {
  const hwgpu_api &w = s->wgpu;
  WGPUBufferDescriptor desc{};
  desc.label = {"hurray staging", SIZE_MAX};
  desc.usage = HWGPU_BUFFER_USAGE_MAP_READ | HWGPU_BUFFER_USAGE_COPY_DST;
  desc.size = n;
  push_errors(s, d);
  WGPUBuffer staging = w.wgpuDeviceCreateBuffer(d.device, &desc);
  WGPUCommandEncoder enc = w.wgpuDeviceCreateCommandEncoder(d.device, nullptr);
  w.wgpuCommandEncoderCopyBufferToBuffer(enc, b, offset, staging, 0, n);
  WGPUCommandBuffer cmd = w.wgpuCommandEncoderFinish(enc, nullptr);
  w.wgpuQueueSubmit(d.queue, 1, &cmd);
  w.wgpuCommandBufferRelease(cmd);
  w.wgpuCommandEncoderRelease(enc);
  hurray_status st = pop_errors(s, d, "wgpuQueueSubmit (copyBufferToBuffer)", err);
  if (st == HURRAY_OK) {
    MapResult r;
    const WGPUBufferMapCallbackInfo info{nullptr, HWGPU_CALLBACK_MODE_WAIT_ANY_ONLY, on_map, &r,
                                         nullptr};
    st = wait_future(s, w.wgpuBufferMapAsync(staging, HWGPU_MAP_MODE_READ, 0, n, info),
                     "wgpuBufferMapAsync", err);
    if (st == HURRAY_OK && r.status != HWGPU_STATUS_SUCCESS)
      st = hurray::kit::vendor_fail(err, HURRAY_E_BACKEND, "wgpuBufferMapAsync", "WGPUMapAsyncStatus",
                                    r.message.c_str(), "status %u, %llu bytes on '%s'", r.status,
                                    static_cast<unsigned long long>(n), d.name.c_str());
  }
  if (st == HURRAY_OK) {
    const auto *p = static_cast<const unsigned char *>(w.wgpuBufferGetConstMappedRange(staging, 0, n));
    if (p == nullptr) {
      st = fail(err, HURRAY_E_BACKEND, "[wgpuBufferGetConstMappedRange] NULL: %llu bytes on '%s'",
                static_cast<unsigned long long>(n), d.name.c_str());
    } else {
      std::memcpy(dst, p + skip, keep);
    }
    w.wgpuBufferUnmap(staging);
  }
  release_buffer(s, staging);
  return st;
}

// Checks common to both directions; *b is null for an empty range.
hurray_status copy_check(State *s, const hurray_backend_allocation *alloc, uint64_t offset,
                         const void *host, uint64_t n, const char *what, WGPUBuffer *b,
                         const Device **d, hurray_error *err) noexcept {
  *b = nullptr;
  if (s == nullptr)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT, "%s: the plugin state is NULL (probe first)",
                  what);
  if (const hurray_status st = hurray::kit::check_copy(alloc, offset, host, n, what, err))
    return st;
  if (n == 0) return HURRAY_OK;
  if (const hurray_status st = hurray::kit::find_device(s, alloc->device, d, err)) return st;
  *b = static_cast<WGPUBuffer>(alloc->plugin_data);
  return HURRAY_OK;
}

// Write `n` bytes at `at` inside the word at `word` (read, patch, write).
hurray_status patch_word(State *s, const Device &d, WGPUBuffer b, uint64_t word, uint64_t at,
                         const unsigned char *src, uint64_t n, hurray_error *err) {
  unsigned char w[kWord];
  if (const hurray_status st = read_words(s, d, b, word, kWord, w, 0, kWord, err)) return st;
  std::memcpy(w + at, src, n);
  s->wgpu.wgpuQueueWriteBuffer(d.queue, b, word, w, kWord);
  return HURRAY_OK;
}

}  // namespace

hurray_status write_buffer(State *s, const Device *d, WGPUBuffer b, uint64_t offset,
                           const void *src, uint64_t n, hurray_error *err);

hurray_status read_buffer(State *s, const Device &d, WGPUBuffer b, uint64_t offset, void *dst,
                          uint64_t n, hurray_error *err) {
  auto *out = static_cast<unsigned char *>(dst);
  while (n > 0) {
    const uint64_t lo = offset & ~(kWord - 1);
    const uint64_t keep = std::min(n, kStagingChunk - (offset - lo));
    const uint64_t hi = (offset + keep + kWord - 1) & ~(kWord - 1);
    if (const hurray_status st = read_words(s, d, b, lo, hi - lo, out, offset - lo, keep, err))
      return st;
    out += keep;
    offset += keep;
    n -= keep;
  }
  return HURRAY_OK;
}

namespace {

// Both copy entries: the checks, then the read or the write on the worker.
hurray_status copy(void *state, const hurray_backend_allocation *alloc, uint64_t offset,
                   void *host, uint64_t n, bool to_host, hurray_error *err) {
  auto *s = static_cast<State *>(state);
  WGPUBuffer b = nullptr;
  const Device *d = nullptr;
  const char *what = to_host ? "copy_to_host" : "copy_from_host";
  if (const hurray_status st = copy_check(s, alloc, offset, host, n, what, &b, &d, err))
    return st;
  if (b == nullptr) return HURRAY_OK;
  std::lock_guard<std::mutex> lock(s->mu);
  return on_worker(s, [&] {
    return to_host ? read_buffer(s, *d, b, offset, host, n, err)
                   : write_buffer(s, d, b, offset, host, n, err);
  });
}

}  // namespace

hurray_status copy_to_host(void *state, const hurray_backend_allocation *src, uint64_t offset,
                           void *dst, uint64_t n, hurray_error *err) {
  return copy(state, src, offset, dst, n, true, err);
}

hurray_status copy_from_host(void *state, hurray_backend_allocation *dst, uint64_t offset,
                             const void *src, uint64_t n, hurray_error *err) {
  return copy(state, dst, offset, const_cast<void *>(src), n, false, err);
}

hurray_status write_buffer(State *s, const Device *d, WGPUBuffer b, uint64_t offset,
                           const void *src, uint64_t n, hurray_error *err) {
  const auto *in = static_cast<const unsigned char *>(src);
  push_errors(s, *d);
  hurray_status st = HURRAY_OK;
  if (offset % kWord != 0) {  // the head: part of one word
    const uint64_t word = offset & ~(kWord - 1);
    const uint64_t k = std::min(n, kWord - (offset - word));
    st = patch_word(s, *d, b, word, offset - word, in, k, err);
    in += k;
    offset += k;
    n -= k;
  }
  const uint64_t middle = n & ~(kWord - 1);
  if (st == HURRAY_OK && middle > 0) {
    // wgpuQueueWriteBuffer copies the bytes before it returns; the write is
    // ordered before any later work on the queue. (size_t: 64-bit only.)
    s->wgpu.wgpuQueueWriteBuffer(d->queue, b, offset, in, static_cast<size_t>(middle));
    in += middle;
    offset += middle;
    n -= middle;
  }
  if (st == HURRAY_OK && n > 0) st = patch_word(s, *d, b, offset, 0, in, n, err);  // the tail
  // (After a failure its message is kept: the scopes' is then dropped.)
  hurray_error dropped{};
  const hurray_status popped =
      pop_errors(s, *d, "wgpuQueueWriteBuffer", st != HURRAY_OK ? &dropped : err);
  return st != HURRAY_OK ? st : popped;
}

}  // namespace hurray::webgpu
