// Tests of libhurray-cuda.so through its function table only: the plugin is
// dlopened as libhurray's loader does it (this program links neither libcuda
// nor libhurray), plus unit tests of the plugin's pure logic (error names,
// statuses, messages), compiled in from src/backends/cuda/cu_api.cpp.
//
// Without a CUDA driver and device (CI), the table, probe's answer on this
// machine, the stand-in run against the CUDA stub library and the logic are
// tested; each test that needs a device prints the reason and exits with 77,
// which CTest reports as skipped.
#include <cuda.h>
#include <dlfcn.h>
#include <hurray_backend.h>
#include <sys/stat.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kit/errors.h"
#include "api.h"
#include "plugin_test_util.h"

using gpu_test::AllocGuard;
using gpu_test::ScopedEnv;
using gpu_test::starts_with;

namespace {

constexpr uint32_t kAlignments[] = {64, 256, 4096, 65536};

const hurray_backend_v1 *plugin() {
  static const hurray_backend_v1 *t = gpu_test::load_plugin(HURRAY_CUDA_PLUGIN);
  return t;
}

struct Probed : gpu_test::Probed {
  Probed() : gpu_test::Probed(HURRAY_CUDA_PLUGIN, "no CUDA device") {}
};

hurray_status probe_once(std::string *message) { return gpu_test::probe_once(plugin(), message); }

}  // namespace

// ---- the table ----------------------------------------------------------------

TEST_CASE("cuda: entry table: version size device tag and functions") {
  gpu_test::check_full_table(plugin(), HURRAY_DEVICE_CUDA, "cuda");
}

// ---- probe on this machine ------------------------------------------------------

TEST_CASE("cuda: probe on this machine: OK, or DEVICE_UNAVAILABLE naming the cause") {
  ScopedEnv env("HURRAY_CUDA_LIBRARY", nullptr);
  std::string message;
  const hurray_status st = probe_once(&message);
  std::printf("cuda probe on this machine: status %d: %s\n", static_cast<int>(st),
              message.empty() ? "(no message)" : message.c_str());
  // What the plugin must have met, found out independently.
  dlerror();
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const std::string why = dlerror();
    CHECK(st == HURRAY_E_DEVICE_UNAVAILABLE);
    CHECK(message == why);  // the dlerror() text, as it is
    CHECK(message.find("libcuda.so.1") != std::string::npos);
    return;
  }
  auto cu_init = reinterpret_cast<CUresult (*)(unsigned)>(dlsym(lib, "cuInit"));
  REQUIRE(cu_init != nullptr);
  const CUresult r = cu_init(0);
  if (r != CUDA_SUCCESS) {
    CHECK(st == HURRAY_E_DEVICE_UNAVAILABLE);
    const char *name = hurray::cuda::error_name(static_cast<int>(r));
    INFO("cuInit returned " << static_cast<int>(r));
    CHECK(starts_with(message, std::string("[cuInit] ") + (name ? name : "CUDA error")));
    return;
  }
  int n = 0;
  auto count = reinterpret_cast<CUresult (*)(int *)>(dlsym(lib, "cuDeviceGetCount"));
  REQUIRE(count != nullptr);
  if (count(&n) != CUDA_SUCCESS || n == 0) {
    CHECK(st == HURRAY_E_DEVICE_UNAVAILABLE);
    CHECK(starts_with(message, "[cuDeviceGetCount]"));
    return;
  }
  INFO(message);
  CHECK(st == HURRAY_OK);
}

TEST_CASE("cuda (stand-in: CUDA stub library): probe reports CUDA_ERROR_STUB_LIBRARY by name") {
  struct stat st_buf;
  if (stat(HURRAY_CUDA_STUB, &st_buf) != 0)
    gpu_test::skip("no CUDA stub library", HURRAY_CUDA_STUB " does not exist");
  ScopedEnv env("HURRAY_CUDA_LIBRARY", HURRAY_CUDA_STUB);
  // Twice: a failed probe leaves nothing behind that breaks the next one.
  for (int i = 0; i < 2; ++i) {
    std::string message;
    const hurray_status st = probe_once(&message);
    std::printf("cuda probe with HURRAY_CUDA_LIBRARY=%s: %s\n", HURRAY_CUDA_STUB, message.c_str());
    CHECK(st == HURRAY_E_DEVICE_UNAVAILABLE);
    // The stub's own cuGetErrorName fails: the name comes from the plugin.
    CHECK(starts_with(message, "[cuInit] CUDA_ERROR_STUB_LIBRARY: "));
    CHECK(message.find(HURRAY_CUDA_STUB) != std::string::npos);
  }
}

TEST_CASE("cuda: HURRAY_CUDA_LIBRARY naming no file gives the dlerror text") {
  ScopedEnv env("HURRAY_CUDA_LIBRARY", "/nonexistent/libcuda.so.1");
  std::string message;
  CHECK(probe_once(&message) == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(message ==
        "/nonexistent/libcuda.so.1: cannot open shared object file: No such file or directory");
}

TEST_CASE("cuda: a library without the driver API is refused, naming the missing symbol") {
  ScopedEnv env("HURRAY_CUDA_LIBRARY", "libm.so.6");
  std::string message;
  CHECK(probe_once(&message) == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(message == "[dlsym] libm.so.6 has no cuInit (a driver for CUDA 11.0 or later is needed)");
}

// ---- pure logic -------------------------------------------------------------------

TEST_CASE("cuda: CUresult names and descriptions, known and unknown") {
  using hurray::cuda::error_description;
  using hurray::cuda::error_name;
  CHECK(std::string(error_name(0)) == "CUDA_SUCCESS");
  CHECK(std::string(error_name(2)) == "CUDA_ERROR_OUT_OF_MEMORY");
  CHECK(std::string(error_name(34)) == "CUDA_ERROR_STUB_LIBRARY");
  CHECK(std::string(error_name(100)) == "CUDA_ERROR_NO_DEVICE");
  CHECK(std::string(error_name(400)) == "CUDA_ERROR_INVALID_HANDLE");
  CHECK(std::string(error_name(999)) == "CUDA_ERROR_UNKNOWN");
  CHECK(error_name(12345) == nullptr);
  CHECK(error_name(-1) == nullptr);
  // Every name the table has is the header's own spelling of that number.
  CHECK(std::string(error_name(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)) ==
        "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED");
  CHECK(std::string(error_name(CUDA_ERROR_INVALID_CONTEXT)) == "CUDA_ERROR_INVALID_CONTEXT");
  CHECK(std::string(error_description(2)) == "out of memory");
  CHECK(std::string(error_description(34)).find("stub") != std::string::npos);
  CHECK(error_description(12345) == nullptr);
}

TEST_CASE("cuda: CUresult statuses") {
  using hurray::cuda::status_of;
  CHECK(status_of(CUDA_SUCCESS) == HURRAY_OK);
  CHECK(status_of(CUDA_ERROR_OUT_OF_MEMORY) == HURRAY_E_OUT_OF_MEMORY);
  CHECK(status_of(34) == HURRAY_E_DEVICE_UNAVAILABLE);  // stub library
  CHECK(status_of(CUDA_ERROR_NO_DEVICE) == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(status_of(CUDA_ERROR_NOT_INITIALIZED) == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(status_of(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH) == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(status_of(CUDA_ERROR_INVALID_VALUE) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(status_of(CUDA_ERROR_INVALID_HANDLE) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(status_of(CUDA_ERROR_NOT_SUPPORTED) == HURRAY_E_UNSUPPORTED);
  CHECK(status_of(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED) == HURRAY_E_UNSUPPORTED);
  CHECK(status_of(CUDA_ERROR_LAUNCH_FAILED) == HURRAY_E_BACKEND);
  CHECK(status_of(12345) == HURRAY_E_BACKEND);
}

namespace {
CUresult fake_name_ok(CUresult code, const char **s) {
  *s = code == CUDA_ERROR_OUT_OF_MEMORY ? "CUDA_ERROR_OUT_OF_MEMORY(driver)" : nullptr;
  return *s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult fake_string_ok(CUresult, const char **s) {
  *s = "the driver's own words";
  return CUDA_SUCCESS;
}
// What the stub library does: it cannot name anything.
CUresult fake_stub(CUresult, const char **) { return static_cast<CUresult>(34); }
}  // namespace

TEST_CASE("cuda: the error text is the driver's when it can say it, else the plugin's") {
  hurray::cuda::ErrorText t;
  hurray::cuda::error_text(nullptr, CUDA_ERROR_OUT_OF_MEMORY, &t);
  CHECK(std::string(t.name) == "CUDA_ERROR_OUT_OF_MEMORY");
  CHECK(std::string(t.description) == "out of memory");

  hurray::cuda::Api api;
  api.cuGetErrorName = fake_name_ok;
  api.cuGetErrorString = fake_string_ok;
  hurray::cuda::error_text(&api, CUDA_ERROR_OUT_OF_MEMORY, &t);
  CHECK(std::string(t.name) == "CUDA_ERROR_OUT_OF_MEMORY(driver)");
  CHECK(std::string(t.description) == "the driver's own words");
  hurray::cuda::error_text(&api, CUDA_ERROR_NO_DEVICE, &t);  // the driver cannot name it
  CHECK(std::string(t.name) == "CUDA_ERROR_NO_DEVICE");

  api.cuGetErrorName = fake_stub;
  api.cuGetErrorString = fake_stub;
  hurray::cuda::error_text(&api, 34, &t);
  CHECK(std::string(t.name) == "CUDA_ERROR_STUB_LIBRARY");
  REQUIRE(t.description != nullptr);
  hurray::cuda::error_text(&api, 12345, &t);
  CHECK(std::string(t.name) == "CUDA error 12345");
  CHECK(t.description == nullptr);

  // The whole message, as a failing cuMemAlloc reports it.
  hurray::cuda::error_text(nullptr, CUDA_ERROR_OUT_OF_MEMORY, &t);
  hurray_error err;
  hurray::kit::vendor_fail(&err, hurray::cuda::status_of(CUDA_ERROR_OUT_OF_MEMORY), "cuMemAlloc",
                           t.name, t.description, nullptr);
  CHECK(std::string(err.message) == "[cuMemAlloc] CUDA_ERROR_OUT_OF_MEMORY: out of memory");
  CHECK(err.status == HURRAY_E_OUT_OF_MEMORY);
}

TEST_CASE("cuda: the versioned driver symbols are resolved by their versioned names") {
  // load_api reports the first missing required symbol: from an empty
  // library (libm) that is cuInit; every name is the _v2 one cuda.h maps to.
  void *libm = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
  REQUIRE(libm != nullptr);
  hurray::cuda::Api api;
  CHECK(std::string(hurray::cuda::load_api(libm, &api)) == "cuInit");
  dlclose(libm);
  const char *versioned[] = {
#define HURRAY_CUDA_XX_(name, symbol, required) symbol,
      HURRAY_CUDA_FUNCTIONS(HURRAY_CUDA_XX_)
#undef HURRAY_CUDA_XX_
  };
  std::vector<std::string> names(std::begin(versioned), std::end(versioned));
  for (const char *s :
       {"cuMemAlloc_v2", "cuMemFree_v2", "cuCtxPushCurrent_v2", "cuCtxPopCurrent_v2",
        "cuDevicePrimaryCtxRelease_v2", "cuIpcOpenMemHandle_v2", "cuMemHostGetDevicePointer_v2",
        "cuStreamDestroy_v2", "cuEventDestroy_v2", "cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2"})
    CHECK(std::find(names.begin(), names.end(), s) != names.end());
  // (That the stub library, which has every symbol, resolves all of them is
  // shown by the stand-in test: probe gets as far as cuInit.)
}

// ---- with a device (skipped here: exit 77) --------------------------------------

TEST_CASE("cuda: probe: every device is described with its native handles") {
  Probed p;
  const int32_t n = p.count();
  REQUIRE(n >= 1);
  for (int32_t dev = 0; dev < n; ++dev) {
    const hurray_backend_device_info info = p.info(dev);
    std::printf(
        "cuda device %d: name \"%s\", memory_classes 0x%x, ipc 0x%x, min_alignment %u\n"
        "  detail: \"%s\"\n",
        dev, info.name, info.memory_classes, info.ipc, info.min_alignment, info.detail);
    CHECK(std::strlen(info.name) > 0);
    CHECK((info.memory_classes & (1u << HURRAY_MEMORY_STANDARD)) != 0);
    CHECK((info.memory_classes & ~0xFu) == 0);
    CHECK((info.ipc & HURRAY_BACKEND_IPC_MEMORY) != 0);
    CHECK((info.ipc & HURRAY_BACKEND_IPC_STREAMS) == 0);
    CHECK(info.min_alignment == 256);
    CHECK(std::string(info.detail).find("cuMemAlloc") != std::string::npos);
    const hurray_backend_native nat = p.native(dev);
    for (int i = 1; i < 5; ++i) CHECK(nat.handles[i] != nullptr);
    for (int i = 5; i < 8; ++i) CHECK(nat.handles[i] == nullptr);
    CHECK(nat.handles[2] == nat.handles[3]);
    // [4] is libcuda: it resolves driver functions.
    CHECK(dlsym(nat.handles[4], "cuCtxGetDevice") != nullptr);
  }
  hurray_backend_device_info info{};
  hurray_error err{};
  CHECK(p.b->device_info(p.state, n, &info, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(p.b->device_info(p.state, -1, &info, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
}

TEST_CASE("cuda: alloc: every class at alignments 64 256 4096 65536, classified and copied") {
  Probed p;
  for (int32_t dev = 0; dev < p.count(); ++dev) {
    const uint32_t classes = p.info(dev).memory_classes;
    for (uint8_t mc = 0; mc <= HURRAY_MEMORY_PEER; ++mc) {
      hurray_error err{};
      if (!(classes & (1u << mc))) {
        hurray_backend_allocation a{};
        CHECK(p.b->alloc(p.state, dev, mc, 4096, 4096, 0, &a, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
        std::printf("cuda device %d: %s refused: %s\n", dev, gpu_test::class_name(mc), err.message);
        continue;
      }
      for (uint32_t align : kAlignments) {
        for (uint64_t size : {uint64_t{1}, uint64_t{4099}, uint64_t{1} << 20}) {
          INFO("device " << dev << ", " << gpu_test::class_name(mc) << ", " << size
                         << " bytes, alignment " << align);
          AllocGuard g{p, p.alloc(dev, mc, size, align)};
          const hurray_backend_allocation &a = g.a;
          CHECK(a.byte_size == size);
          CHECK(a.device == dev);
          CHECK(a.memory_class == mc);
          CHECK(a.flags == 0);  // always an address
          CHECK(a.alignment == std::max<uint32_t>(align, 256));
          REQUIRE(a.data != nullptr);
          CHECK(reinterpret_cast<uintptr_t>(a.data) % a.alignment == 0);
          const bool host_visible = mc == HURRAY_MEMORY_HOST_PINNED || mc == HURRAY_MEMORY_UNIFIED;
          CHECK((a.host != nullptr) == host_visible);
          int32_t cdev = -1;
          uint8_t cmc = 0xFF;
          REQUIRE(p.b->classify(p.state, a.data, &cdev, &cmc, &err) == HURRAY_OK);
          CHECK(cdev == dev);
          CHECK(cmc == mc);
          const auto *last = static_cast<const char *>(a.data) + size - 1;
          REQUIRE(p.b->classify(p.state, last, &cdev, &cmc, &err) == HURRAY_OK);
          CHECK(cmc == mc);
          const auto in = gpu_test::pattern(static_cast<size_t>(size), mc + align);
          std::vector<unsigned char> out(in.size());
          REQUIRE(p.b->copy_from_host(p.state, &g.a, 0, in.data(), size, &err) == HURRAY_OK);
          REQUIRE(p.b->copy_to_host(p.state, &a, 0, out.data(), size, &err) == HURRAY_OK);
          CHECK(out == in);
          CHECK(p.b->copy_to_host(p.state, &a, size, out.data(), 1, &err) ==
                HURRAY_E_INVALID_ARGUMENT);
        }
      }
      AllocGuard g{p, p.alloc(dev, mc, 0, 64)};  // an empty buffer has no memory
      CHECK(g.a.data == nullptr);
    }
  }
  int on_stack = 0;
  hurray_error err{};
  CHECK(p.b->classify(p.state, &on_stack, nullptr, nullptr, &err) == HURRAY_E_INVALID_ARGUMENT);
  hurray_backend_allocation a{};
  CHECK(p.b->alloc(p.state, 0, 0x04, 64, 64, 0, &a, &err) == HURRAY_E_MEMORY_CLASS);
  CHECK(p.b->alloc(p.state, 0, 0, 64, 96, 0, &a, &err) == HURRAY_E_INVALID_ARGUMENT);
}

TEST_CASE("cuda: events: recorded on the plugin's stream, waited on by the host and a stream") {
  Probed p;
  for (int32_t dev = 0; dev < p.count(); ++dev) {
    const hurray_backend_native nat = p.native(dev);
    hurray_error err{};
    void *ev = nullptr;
    uint64_t value = 1;
    REQUIRE(p.b->event_record(p.state, dev, nullptr, &ev, &value, &err) == HURRAY_OK);
    CHECK(value == 0);
    REQUIRE(p.b->event_wait(p.state, dev, ev, 0, nullptr, &err) == HURRAY_OK);
    REQUIRE(p.b->event_wait(p.state, dev, ev, 0, nat.handles[2], &err) == HURRAY_OK);
    CHECK(p.b->event_wait(p.state, dev, ev, 1, nullptr, &err) == HURRAY_E_INVALID_ARGUMENT);
    if (p.info(dev).ipc & HURRAY_BACKEND_IPC_EVENTS) {
      hurray_backend_ipc_handle h{};
      REQUIRE(p.b->ipc_export_event(p.state, dev, ev, &h, &err) == HURRAY_OK);
      CHECK(h.kind != 0);
      CHECK(h.fd == -1);
    }
    p.b->event_release(p.state, dev, ev);
  }
}

TEST_CASE("cuda: the caller's current context is left as it was: none, the primary, another") {
  Probed p;
  const hurray_backend_native nat = p.native(0);
  void *lib = nat.handles[4];
  const auto primary = static_cast<CUcontext>(nat.handles[1]);
  using GetCurrent = CUresult (*)(CUcontext *);
  using Push = CUresult (*)(CUcontext);
  using Pop = CUresult (*)(CUcontext *);
  using Create = CUresult (*)(CUcontext *, unsigned, CUdevice);
  using Destroy = CUresult (*)(CUcontext);
  auto get_current = reinterpret_cast<GetCurrent>(dlsym(lib, "cuCtxGetCurrent"));
  auto push = reinterpret_cast<Push>(dlsym(lib, "cuCtxPushCurrent_v2"));
  auto pop = reinterpret_cast<Pop>(dlsym(lib, "cuCtxPopCurrent_v2"));
  auto create = reinterpret_cast<Create>(dlsym(lib, "cuCtxCreate_v2"));
  auto destroy = reinterpret_cast<Destroy>(dlsym(lib, "cuCtxDestroy_v2"));
  REQUIRE(get_current != nullptr);
  REQUIRE(push != nullptr);
  REQUIRE(pop != nullptr);
  // Every entry point that makes the primary context current: alloc, copy,
  // event record / wait / release, free.
  auto use_plugin = [&] {
    hurray_error err{};
    hurray_backend_allocation a{};
    REQUIRE(p.b->alloc(p.state, 0, HURRAY_MEMORY_STANDARD, 4096, 256, 0, &a, &err) == HURRAY_OK);
    unsigned char buf[64] = {1, 2, 3};
    CHECK(p.b->copy_from_host(p.state, &a, 0, buf, sizeof buf, &err) == HURRAY_OK);
    void *ev = nullptr;
    uint64_t value = 0;
    REQUIRE(p.b->event_record(p.state, 0, nullptr, &ev, &value, &err) == HURRAY_OK);
    CHECK(p.b->event_wait(p.state, 0, ev, 0, nullptr, &err) == HURRAY_OK);
    p.b->event_release(p.state, 0, ev);
    p.b->free(p.state, &a);
  };
  CUcontext now = nullptr;
  SECTION("no current context: the primary one is pushed and popped") {
    REQUIRE(get_current(&now) == CUDA_SUCCESS);
    REQUIRE(now == nullptr);
    use_plugin();
    CHECK(get_current(&now) == CUDA_SUCCESS);
    CHECK(now == nullptr);
  }
  SECTION("the primary context current (nothing pushed): still current, the stack as it was") {
    REQUIRE(push(primary) == CUDA_SUCCESS);
    use_plugin();
    CHECK(get_current(&now) == CUDA_SUCCESS);
    CHECK(now == primary);
    CUcontext popped = nullptr;
    CHECK(pop(&popped) == CUDA_SUCCESS);
    CHECK(popped == primary);
    CHECK(get_current(&now) == CUDA_SUCCESS);
    CHECK(now == nullptr);
  }
  SECTION("another context current: the primary one is pushed over it and popped") {
    if (create == nullptr || destroy == nullptr) {
      WARN("cuCtxCreate_v2 / cuCtxDestroy_v2 missing from this driver: section not run");
      return;
    }
    CUcontext other = nullptr;
    REQUIRE(create(&other, 0, static_cast<CUdevice>(reinterpret_cast<uintptr_t>(nat.handles[0]))) ==
            CUDA_SUCCESS);  // cuCtxCreate makes it current
    use_plugin();
    CHECK(get_current(&now) == CUDA_SUCCESS);
    CHECK(now == other);
    CHECK(destroy(other) == CUDA_SUCCESS);
  }
}

TEST_CASE("cuda: IPC in one process: exports, refusals, and wrong handles") {
  Probed p;
  hurray_error err{};
  // Without SHAREABLE: cuMemAlloc memory and its cuIpcGetMemHandle (SHAREABLE
  // memory is VMM memory where the device has it: a descriptor, tested over
  // libhurray's channel in cuda_device_ipc_test.cpp).
  AllocGuard g{p, p.alloc(0, HURRAY_MEMORY_STANDARD, 100000, 65536, 0)};
  hurray_backend_ipc_handle h{};
  REQUIRE(p.b->ipc_export_memory(p.state, &g.a, &h, &err) == HURRAY_OK);
  CHECK(h.byte_size == 100000);
  CHECK(h.fd == -1);
  CHECK(h.offset < 65536);
  // CUDA opens a handle in another process only.
  hurray_backend_allocation imported{};
  CHECK(p.b->ipc_import_memory(p.state, 0, &h, HURRAY_MEMORY_STANDARD, &imported, &err) !=
        HURRAY_OK);
  std::printf("cuda: importing in the exporting process: %s\n", err.message);
  // An event handle is no memory handle.
  hurray_backend_ipc_handle wrong = h;
  wrong.kind ^= 0xFF;
  CHECK(p.b->ipc_import_memory(p.state, 0, &wrong, HURRAY_MEMORY_STANDARD, &imported, &err) ==
        HURRAY_E_INVALID_ARGUMENT);
  const uint32_t classes = p.info(0).memory_classes;
  for (uint8_t mc : {HURRAY_MEMORY_HOST_PINNED, HURRAY_MEMORY_UNIFIED}) {
    if (!(classes & (1u << mc))) continue;
    hurray_backend_allocation a{};
    CHECK(p.b->alloc(p.state, 0, mc, 4096, 4096, HURRAY_ALLOC_SHAREABLE, &a, &err) ==
          HURRAY_E_UNSUPPORTED);
    AllocGuard pinned{p, p.alloc(0, mc, 4096, 4096)};
    CHECK(p.b->ipc_export_memory(p.state, &pinned.a, &h, &err) == HURRAY_E_UNSUPPORTED);
  }
}
