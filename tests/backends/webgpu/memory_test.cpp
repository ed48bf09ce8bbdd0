// libhurray-webgpu.so: probe, device_info, native, allocation, copies and
// classify, through the plugin's table on a real Dawn device.
#include <stdlib.h>

#include <string>

#include "webgpu_test_util.h"

using webgpu_test::pattern;
using webgpu_test::Probed;

TEST_CASE("webgpu: one device, STANDARD only, no IPC, described", "[webgpu]") {
  Probed p;
  hurray_backend_device_info info{};
  hurray_error err{};
  REQUIRE(p.b->device_info(p.state, 0, &info, &err) == HURRAY_OK);
  CHECK(p.b->device_tag == HURRAY_DEVICE_WEBGPU);
  CHECK(std::string(p.b->name) == "webgpu");
  CHECK(info.memory_classes == 1u << HURRAY_MEMORY_STANDARD);
  CHECK(info.ipc == 0);
  CHECK(info.min_alignment == HURRAY_MIN_ALIGNMENT);
  CHECK(std::strlen(info.name) > 0);
  const std::string detail = info.detail;
  INFO(detail);
  CHECK(detail.find("no IPC") != std::string::npos);
  CHECK(detail.find("WGPUBuffer") != std::string::npos);
  // No IPC: the loader answers UNSUPPORTED for NULL entries.
  CHECK(p.b->ipc_export_memory == nullptr);
  CHECK(p.b->ipc_import_memory == nullptr);
  CHECK(p.b->ipc_export_event == nullptr);
  CHECK(p.b->ipc_import_event == nullptr);
  CHECK(p.b->device_info(p.state, 1, &info, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(p.b->device_info(nullptr, 0, &info, &err) == HURRAY_E_INVALID_ARGUMENT);
}

TEST_CASE("webgpu: native slots are Dawn's instance, adapter, device, queue", "[webgpu]") {
  Probed p;
  for (int i = 0; i < 5; ++i) CHECK(p.native.handles[i] != nullptr);
  for (int i = 5; i < 8; ++i) CHECK(p.native.handles[i] == nullptr);
  // The device's queue is the one in slot 3 (a new reference to it).
  WGPUQueue q = p.w.wgpuDeviceGetQueue(p.device());
  CHECK(q == p.queue());
  p.w.wgpuQueueRelease(q);
}

TEST_CASE("webgpu: STANDARD allocates a WGPUBuffer at every alignment", "[webgpu]") {
  Probed p;
  for (uint32_t align : {64u, 256u, 4096u, 65536u, 1u << 20}) {
    for (uint64_t size : {uint64_t{1}, uint64_t{4}, uint64_t{65536 + 123}}) {
      INFO("alignment " << align << " size " << size);
      hurray_backend_allocation a = p.alloc(size, align);
      CHECK(a.flags == HURRAY_HANDOFF_OPAQUE_DATA);
      CHECK(a.alignment == align);
      CHECK(a.byte_size == size);
      CHECK(a.memory_class == HURRAY_MEMORY_STANDARD);
      CHECK(a.host == nullptr);
      REQUIRE(a.data != nullptr);
      auto *buf = static_cast<WGPUBuffer>(a.data);
      // Rounded up to WebGPU's 4-byte copy unit; copyable and a storage buffer.
      CHECK(p.w.wgpuBufferGetSize(buf) == ((size + 3) & ~uint64_t{3}));
      CHECK(p.w.wgpuBufferGetUsage(buf) == (HWGPU_BUFFER_USAGE_COPY_SRC |
                                            HWGPU_BUFFER_USAGE_COPY_DST |
                                            HWGPU_BUFFER_USAGE_STORAGE));
      int32_t dev = -1;
      uint8_t mc = 0xff;
      hurray_error err{};
      CHECK(p.b->classify(p.state, a.data, &dev, &mc, &err) == HURRAY_OK);
      CHECK(dev == 0);
      CHECK(mc == HURRAY_MEMORY_STANDARD);
      p.b->free(p.state, &a);
      CHECK(a.data == nullptr);
      CHECK(p.b->classify(p.state, buf, &dev, &mc, &err) == HURRAY_E_INVALID_ARGUMENT);
    }
  }
  hurray_backend_allocation empty = p.alloc(0);
  CHECK(empty.data == nullptr);
  p.b->free(p.state, &empty);
}

TEST_CASE("webgpu: other classes, SHAREABLE and bad arguments are refused", "[webgpu]") {
  Probed p;
  hurray_backend_allocation a{};
  hurray_error err{};
  for (uint8_t mc : {uint8_t{HURRAY_MEMORY_HOST_PINNED}, uint8_t{HURRAY_MEMORY_UNIFIED},
                     uint8_t{HURRAY_MEMORY_PEER}}) {
    CHECK(p.b->alloc(p.state, 0, mc, 4096, 64, 0, &a, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
    CHECK(std::string(err.message).find("STANDARD only") != std::string::npos);
  }
  CHECK(p.b->alloc(p.state, 0, HURRAY_MEMORY_STANDARD, 4096, 64, HURRAY_ALLOC_SHAREABLE, &a,
                   &err) == HURRAY_E_UNSUPPORTED);
  CHECK(std::string(err.message).find("WebGPU defines no way to export") != std::string::npos);
  CHECK(p.b->alloc(p.state, 0, HURRAY_MEMORY_STANDARD, 4096, 96, 0, &a, &err) ==
        HURRAY_E_INVALID_ARGUMENT);
  CHECK(p.b->alloc(p.state, 1, HURRAY_MEMORY_STANDARD, 4096, 64, 0, &a, &err) ==
        HURRAY_E_DEVICE_UNAVAILABLE);
  // Beyond Dawn's maxBufferSize: Dawn's validation error, reported as such.
  CHECK(p.b->alloc(p.state, 0, HURRAY_MEMORY_STANDARD, uint64_t{1} << 40, 64, 0, &a, &err) ==
        HURRAY_E_OUT_OF_MEMORY);
  INFO(err.message);
  CHECK(std::string(err.message).find("[wgpuDeviceCreateBuffer] WGPUErrorType_Validation") == 0);
  CHECK(a.data == nullptr);
  int dummy = 0;
  CHECK(p.b->classify(p.state, &dummy, nullptr, nullptr, &err) == HURRAY_E_INVALID_ARGUMENT);
}

TEST_CASE("webgpu: bytes round trip, whole and at every odd offset and size", "[webgpu]") {
  Probed p;
  const size_t n = 4099;  // not a whole number of words
  hurray_backend_allocation a = p.alloc(n);
  std::vector<unsigned char> mirror = pattern(n, 1);
  p.write(a, 0, mirror.data(), n);
  std::vector<unsigned char> out(n);
  p.read(a, 0, out.data(), n);
  REQUIRE(out == mirror);
  // Writes and reads that start and end anywhere inside a word: the bytes
  // around them stay as they were.
  unsigned seed = 2;
  for (uint64_t off : {0u, 1u, 2u, 3u, 5u, 6u, 7u, 4090u}) {
    for (uint64_t len : {1u, 2u, 3u, 4u, 5u, 6u, 7u, 9u}) {
      if (off + len > n) continue;
      INFO("offset " << off << " length " << len);
      const std::vector<unsigned char> in = pattern(len, seed++ * 17);
      p.write(a, off, in.data(), len);
      std::memcpy(mirror.data() + off, in.data(), len);
      std::vector<unsigned char> part(len + 2, 0xee);
      p.read(a, off, part.data() + 1, len);
      CHECK(std::memcmp(part.data() + 1, in.data(), len) == 0);
      CHECK(part[0] == 0xee);  // nothing written outside the host range
      CHECK(part[len + 1] == 0xee);
    }
  }
  p.read(a, 0, out.data(), n);
  CHECK(out == mirror);
  // The last byte, and empty copies.
  unsigned char last = 0;
  p.read(a, n - 1, &last, 1);
  CHECK(last == mirror[n - 1]);
  p.write(a, 5, nullptr, 0);
  p.read(a, 5, nullptr, 0);
  hurray_error err{};
  CHECK(p.b->copy_to_host(p.state, &a, n - 1, out.data(), 2, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(p.b->copy_from_host(p.state, &a, n, out.data(), 1, &err) == HURRAY_E_INVALID_ARGUMENT);
  p.b->free(p.state, &a);
}

TEST_CASE("webgpu: a copy longer than one staging buffer round trips", "[webgpu]") {
  Probed p;
  const size_t n = (size_t{8} << 20) * 2 + 13;  // three staging pieces
  const std::vector<unsigned char> in = pattern(n, 9);
  hurray_backend_allocation a = p.alloc_with(in);
  std::vector<unsigned char> out(n);
  p.read(a, 0, out.data(), n);
  CHECK(out == in);
  // Across the pieces' boundaries from an odd offset.
  std::vector<unsigned char> part(n - 3);
  p.read(a, 3, part.data(), part.size());
  CHECK(std::memcmp(part.data(), in.data() + 3, part.size()) == 0);
  p.b->free(p.state, &a);
}

TEST_CASE("webgpu: shutdown frees what is still allocated", "[webgpu]") {
  // (ASan's leak check and Dawn's own asserts see a buffer left behind.)
  Probed p;
  for (int i = 0; i < 4; ++i) (void)p.alloc(4096);
}

TEST_CASE("webgpu: without a library, probe says why", "[webgpu]") {
  const hurray_backend_v1 *b = webgpu_test::plugin();
  void *state = reinterpret_cast<void *>(1);
  hurray_error err{};
  setenv("HURRAY_WEBGPU_LIBRARY", "/nonexistent/libwebgpu_dawn.so", 1);
  CHECK(b->probe(&state, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(state == nullptr);
  INFO(err.message);
  CHECK(std::string(err.message).find("/nonexistent/libwebgpu_dawn.so") != std::string::npos);
  CHECK(std::string(err.message).find("No such file") != std::string::npos);
  // A library that is not WebGPU: the first missing function is named.
  setenv("HURRAY_WEBGPU_LIBRARY", "libm.so.6", 1);
  CHECK(b->probe(&state, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(std::string(err.message).find("has no wgpuCreateInstance") != std::string::npos);
  unsetenv("HURRAY_WEBGPU_LIBRARY");
  CHECK(b->probe(nullptr, &err) == HURRAY_E_INVALID_ARGUMENT);
  // Without the variable: the search list, each name with dlopen's reason,
  // the npm package's file last, below HURRAY_WEBGPU_CACHE.
  setenv("HURRAY_WEBGPU_CACHE", "/nonexistent/cache", 1);
  CHECK(b->probe(&state, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
  const std::string why = err.message;
  INFO(why);
  const size_t dawn = why.find("libwebgpu_dawn.so: not found");
  const size_t wgpu = why.find("libwgpu_native.so: not found");
  const size_t npm = why.find(
      "/nonexistent/cache/0.1.7/node_modules/bun-webgpu-linux-x64/libwebgpu_wrapper.so: not found");
  CHECK(dawn != std::string::npos);
  CHECK(wgpu != std::string::npos);
  CHECK(npm != std::string::npos);
  CHECK((dawn < wgpu && wgpu < npm));
  unsetenv("HURRAY_WEBGPU_CACHE");
}

TEST_CASE("webgpu: HURRAY_WEBGPU_BACKEND picks the backend", "[webgpu]") {
  const hurray_backend_v1 *b = webgpu_test::plugin();
  void *state = nullptr;
  hurray_error err{};
  setenv("HURRAY_WEBGPU_BACKEND", "bogus", 1);
  CHECK(b->probe(&state, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(std::string(err.message).find("HURRAY_WEBGPU_BACKEND='bogus'") != std::string::npos);
  setenv("HURRAY_WEBGPU_BACKEND", "opengles", 1);
  REQUIRE(b->probe(&state, &err) == HURRAY_OK);
  hurray_backend_device_info info{};
  REQUIRE(b->device_info(state, 0, &info, &err) == HURRAY_OK);
  CHECK(std::string(info.detail).find("Dawn OpenGLES") == 0);
  b->shutdown(state);
  unsetenv("HURRAY_WEBGPU_BACKEND");
}
