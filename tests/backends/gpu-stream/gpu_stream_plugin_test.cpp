// Tests of a plugin built on src/backends/gpu-stream (libhurray-cuda.so, or
// with HURRAY_GPU_STREAM_TEST_HIP libhurray-hip.so) through its function
// table only, dlopened as libhurray's loader does it (this program links
// neither the vendor runtime nor libhurray), and of the pure logic every
// such plugin has (error names, statuses). Built once per plugin, by
// tests/backends/cuda and tests/backends/hip; plugin_under_test.h holds what
// differs. What only one plugin has is in cuda_backend_test.cpp and
// hip_backend_test.cpp.
//
// Each test that needs a device prints the reason and exits with 77 where
// there is none, which CTest reports as skipped.
#include <dlfcn.h>
#include <hurray_backend.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "plugin_under_test.h"

namespace put = plugin_under_test;
using gpu_test::AllocGuard;
using gpu_test::ScopedEnv;

using put::plugin;
using put::probe_once;
using put::Probed;

// ---- the table ----------------------------------------------------------------

TEST_CASE(PLUGIN_TEST("entry table: version size device tag and functions")) {
  gpu_test::check_full_table(plugin(), put::kTag, put::kName);
}

// ---- probe ---------------------------------------------------------------------

TEST_CASE(PLUGIN_TEST("probe on this machine: OK, or DEVICE_UNAVAILABLE naming the cause")) {
  ScopedEnv env(put::kLibraryEnv, nullptr);
  std::string message;
  const hurray_status st = probe_once(&message);
  std::printf("%s probe on this machine: status %d: %s\n", put::kName, static_cast<int>(st),
              message.empty() ? "(no message)" : message.c_str());
  put::check_probe_on_this_machine(st, message);
}

// ---- probe with a wrong runtime library ------------------------------------------

TEST_CASE(PLUGIN_TEST(GPU_STREAM_PICK("HURRAY_CUDA_LIBRARY", "HURRAY_HIP_LIBRARY")
                      " naming no file gives the dlerror text")) {
  ScopedEnv env(put::kLibraryEnv, put::kNoSuchLibrary);
  std::string message;
  CHECK(probe_once(&message) == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(message == std::string(put::kNoSuchLibrary) +
                       ": cannot open shared object file: No such file or directory");
}

TEST_CASE(PLUGIN_TEST("a library without " GPU_STREAM_PICK("the driver API", "the HIP runtime")
                      " is refused, naming the missing symbol")) {
  ScopedEnv env(put::kLibraryEnv, "libm.so.6");
  std::string message;
  CHECK(probe_once(&message) == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(message == put::kNoApiMessage);
}

// ---- pure logic -------------------------------------------------------------------

TEST_CASE(PLUGIN_TEST(GPU_STREAM_PICK("CUresult", "hipError_t")
                      " names and descriptions, known and unknown")) {
  for (const put::Named &n : put::kNames) {
    INFO("error code " << n.code);
    if (n.name == nullptr)
      CHECK(put::vendor::error_name(n.code) == nullptr);
    else
      CHECK(std::string(put::vendor::error_name(n.code)) == n.name);
  }
  put::check_descriptions();
}

TEST_CASE(PLUGIN_TEST(GPU_STREAM_PICK("CUresult", "hipError_t") " statuses")) {
  for (const put::StatusOf &s : put::kStatuses) {
    INFO("error code " << s.code);
    CHECK(put::vendor::status_of(s.code) == s.status);
  }
}

// ---- with a device (skipped here: exit 77) --------------------------------------

TEST_CASE(PLUGIN_TEST("probe: every device is described with its native handles")) {
  Probed p;
  const int32_t n = p.count();
  REQUIRE(n >= 1);
  for (int32_t dev = 0; dev < n; ++dev) {
    const hurray_backend_device_info info = p.info(dev);
    std::printf(
        "%s device %d: name \"%s\", memory_classes 0x%x, ipc 0x%x, min_alignment %u\n"
        "  detail: \"%s\"\n",
        put::kName, dev, info.name, info.memory_classes, info.ipc, info.min_alignment,
        info.detail);
    CHECK(std::strlen(info.name) > 0);
    CHECK((info.memory_classes & (1u << HURRAY_MEMORY_STANDARD)) != 0);
    CHECK((info.memory_classes & ~0xFu) == 0);
    CHECK((info.ipc & HURRAY_BACKEND_IPC_MEMORY) != 0);
    CHECK((info.ipc & HURRAY_BACKEND_IPC_STREAMS) == 0);
    CHECK(info.min_alignment == 256);
    CHECK(std::string(info.detail).find(put::kStandardAlloc) != std::string::npos);
    put::check_native(p.native(dev), dev);
  }
  hurray_backend_device_info info{};
  hurray_error err{};
  CHECK(p.b->device_info(p.state, n, &info, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(p.b->device_info(p.state, -1, &info, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
}

TEST_CASE(PLUGIN_TEST("alloc: every class at alignments 64 256 4096 65536, classified and copied")) {
  Probed p;
  for (int32_t dev = 0; dev < p.count(); ++dev) {
    const uint32_t classes = p.info(dev).memory_classes;
    for (uint8_t mc = 0; mc <= HURRAY_MEMORY_PEER; ++mc) {
      hurray_error err{};
      if (!(classes & (1u << mc))) {
        hurray_backend_allocation a{};
        CHECK(p.b->alloc(p.state, dev, mc, 4096, 4096, 0, &a, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
        std::printf("%s device %d: %s refused: %s\n", put::kName, dev, gpu_test::class_name(mc),
                    err.message);
        continue;
      }
      for (uint32_t align : {64u, 256u, 4096u, 65536u}) {
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

TEST_CASE(PLUGIN_TEST("events: recorded on the plugin's stream, waited on by the host and a stream")) {
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

// CUDA: cuMemAlloc memory and its cuIpcGetMemHandle, without SHAREABLE
// (SHAREABLE memory is VMM memory where the device has it: a descriptor,
// tested over libhurray's channel in cuda_fake_ipc_process_test.cpp). HIP:
// SHAREABLE hipMalloc memory and its hipIpcGetMemHandle (VMM only with
// HURRAY_HIP_SHAREABLE=vmm).
TEST_CASE(PLUGIN_TEST("IPC in one process: exports" GPU_STREAM_PICK(", refusals, and wrong handles",
                                                                    " and refusals"))) {
  Probed p;
  hurray_error err{};
  AllocGuard g{p, p.alloc(0, HURRAY_MEMORY_STANDARD, 100000, 65536,
                          GPU_STREAM_PICK(0, HURRAY_ALLOC_SHAREABLE))};
  hurray_backend_ipc_handle h{};
  REQUIRE(p.b->ipc_export_memory(p.state, &g.a, &h, &err) == HURRAY_OK);
  CHECK(h.byte_size == 100000);
  CHECK(h.fd == -1);
  hurray_backend_allocation imported{};
#if !defined(HURRAY_GPU_STREAM_TEST_HIP)
  CHECK(h.offset < 65536);
  // CUDA opens a handle in another process only.
  CHECK(p.b->ipc_import_memory(p.state, 0, &h, HURRAY_MEMORY_STANDARD, &imported, &err) !=
        HURRAY_OK);
  std::printf("cuda: importing in the exporting process: %s\n", err.message);
#endif
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
