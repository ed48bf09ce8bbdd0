// What only the CUDA plugin has, through its function table (dlopened; this
// program links neither libcuda nor libhurray) and in its pure logic
// (src/backends/cuda/cu_api.cpp): probe's answer on this machine, the
// stand-in run against the CUDA stub library, the error text, the versioned
// driver symbols, the caller's current context. What every plugin on
// src/backends/gpu-stream has is tested in
// tests/backends/gpu-stream/gpu_stream_plugin_test.cpp, built into the same
// program.
//
// Each test that needs a device prints the reason and exits with 77 where
// there is none, which CTest reports as skipped.
#include <cuda.h>
#include <dlfcn.h>
#include <hurray_backend.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "kit/errors.h"
#include "kit/member_name.h"
#include "plugin_under_test.h"

using gpu_test::ScopedEnv;
using gpu_test::starts_with;
using plugin_under_test::probe_once;
using plugin_under_test::Probed;

// ---- probe on this machine ------------------------------------------------------

// What probe must have answered on this machine (the test is in
// gpu_stream_plugin_test.cpp), found out independently.
void plugin_under_test::check_probe_on_this_machine(hurray_status st,
                                                     const std::string &message) {
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

// ---- pure logic -------------------------------------------------------------------

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
  // library (libm) that is cuInit; every name is the _v2 one cuda.h maps to
  // (load_api looks each function up by the name of its member of Api).
  CHECK(plugin_under_test::first_missing_in_libm() == "cuInit");
  using hurray::cuda::Api;
  using hurray::kit::member_name;
  CHECK(std::string(member_name<&Api::cuMemAlloc>) == "cuMemAlloc_v2");
  CHECK(std::string(member_name<&Api::cuMemFree>) == "cuMemFree_v2");
  CHECK(std::string(member_name<&Api::cuCtxPushCurrent>) == "cuCtxPushCurrent_v2");
  CHECK(std::string(member_name<&Api::cuCtxPopCurrent>) == "cuCtxPopCurrent_v2");
  CHECK(std::string(member_name<&Api::cuDevicePrimaryCtxRelease>) ==
        "cuDevicePrimaryCtxRelease_v2");
  CHECK(std::string(member_name<&Api::cuIpcOpenMemHandle>) == "cuIpcOpenMemHandle_v2");
  CHECK(std::string(member_name<&Api::cuMemHostGetDevicePointer>) ==
        "cuMemHostGetDevicePointer_v2");
  CHECK(std::string(member_name<&Api::cuStreamDestroy>) == "cuStreamDestroy_v2");
  CHECK(std::string(member_name<&Api::cuEventDestroy>) == "cuEventDestroy_v2");
  CHECK(std::string(member_name<&Api::cuMemcpyHtoDAsync>) == "cuMemcpyHtoDAsync_v2");
  CHECK(std::string(member_name<&Api::cuMemcpyDtoHAsync>) == "cuMemcpyDtoHAsync_v2");
  // (That the stub library, which has every symbol, resolves all of them is
  // shown by the stand-in test: probe gets as far as cuInit.)
}

// ---- with a device (skipped here: exit 77) --------------------------------------

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
