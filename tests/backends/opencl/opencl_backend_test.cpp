// Tests of libhurray-opencl.so through its function table only. The plugin is
// dlopened as libhurray's loader does it; OpenCL itself is reached through
// dlsym on native handle [4] (this program links neither libOpenCL nor
// libhurray). Without an OpenCL device, every test that needs one prints the
// reason and exits with 77, which CTest reports as skipped.
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <CL/cl.h>
#include <hurray_backend.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "plugin_test_util.h"

namespace {

using gpu_test::AllocGuard;
using gpu_test::class_name;
using gpu_test::is_aligned;
using gpu_test::is_pow2;
using gpu_test::kAlignments;

// The plugin's table; the plugin stays loaded for the whole process.
const hurray_backend_v1 *plugin() {
  static const hurray_backend_v1 *t = gpu_test::load_plugin(HURRAY_OPENCL_PLUGIN);
  return t;
}

// A probed plugin; without a device the test is skipped (exit code 77).
struct Probed : gpu_test::Probed {
  Probed() : gpu_test::Probed(HURRAY_OPENCL_PLUGIN, "no OpenCL device") {}
};

// OpenCL functions for the tests, from the plugin's dlopen handle (native [4]).
struct Cl {
  decltype(&::clGetDeviceInfo) clGetDeviceInfo = nullptr;
  decltype(&::clGetContextInfo) clGetContextInfo = nullptr;
  decltype(&::clGetCommandQueueInfo) clGetCommandQueueInfo = nullptr;
  decltype(&::clGetEventInfo) clGetEventInfo = nullptr;
  decltype(&::clCreateCommandQueueWithProperties) clCreateCommandQueueWithProperties = nullptr;
  decltype(&::clCreateCommandQueue) clCreateCommandQueue = nullptr;
  decltype(&::clReleaseCommandQueue) clReleaseCommandQueue = nullptr;
  decltype(&::clCreateProgramWithSource) clCreateProgramWithSource = nullptr;
  decltype(&::clBuildProgram) clBuildProgram = nullptr;
  decltype(&::clGetProgramBuildInfo) clGetProgramBuildInfo = nullptr;
  decltype(&::clReleaseProgram) clReleaseProgram = nullptr;
  decltype(&::clCreateKernel) clCreateKernel = nullptr;
  decltype(&::clReleaseKernel) clReleaseKernel = nullptr;
  decltype(&::clSetKernelArg) clSetKernelArg = nullptr;
  decltype(&::clSetKernelArgSVMPointer) clSetKernelArgSVMPointer = nullptr;
  decltype(&::clEnqueueNDRangeKernel) clEnqueueNDRangeKernel = nullptr;
  decltype(&::clCreateUserEvent) clCreateUserEvent = nullptr;
  decltype(&::clSetUserEventStatus) clSetUserEventStatus = nullptr;
  decltype(&::clReleaseEvent) clReleaseEvent = nullptr;
  decltype(&::clFinish) clFinish = nullptr;
  explicit Cl(void *lib);
};

constexpr hurray::kit::Symbol<Cl> kClSymbols[] = {
    hurray::kit::required<&Cl::clGetDeviceInfo>,
    hurray::kit::required<&Cl::clGetContextInfo>,
    hurray::kit::required<&Cl::clGetCommandQueueInfo>,
    hurray::kit::required<&Cl::clGetEventInfo>,
    hurray::kit::required<&Cl::clCreateCommandQueueWithProperties>,
    hurray::kit::required<&Cl::clCreateCommandQueue>,
    hurray::kit::required<&Cl::clReleaseCommandQueue>,
    hurray::kit::required<&Cl::clCreateProgramWithSource>,
    hurray::kit::required<&Cl::clBuildProgram>,
    hurray::kit::required<&Cl::clGetProgramBuildInfo>,
    hurray::kit::required<&Cl::clReleaseProgram>,
    hurray::kit::required<&Cl::clCreateKernel>,
    hurray::kit::required<&Cl::clReleaseKernel>,
    hurray::kit::required<&Cl::clSetKernelArg>,
    hurray::kit::required<&Cl::clSetKernelArgSVMPointer>,
    hurray::kit::required<&Cl::clEnqueueNDRangeKernel>,
    hurray::kit::required<&Cl::clCreateUserEvent>,
    hurray::kit::required<&Cl::clSetUserEventStatus>,
    hurray::kit::required<&Cl::clReleaseEvent>,
    hurray::kit::required<&Cl::clFinish>,
};
static_assert(hurray::kit::names_every_member(kClSymbols));

Cl::Cl(void *lib) { gpu_test::load_symbols(lib, kClSymbols, this); }

// Writes out[i] = i * 2654435761 + seed.
constexpr const char *kKernelSource = R"CL(
kernel void pattern(global uint *out, uint seed) {
  size_t i = get_global_id(0);
  out[i] = (uint)i * 2654435761u + seed;
}
)CL";

uint32_t pattern_at(size_t i, uint32_t seed) {
  return static_cast<uint32_t>(i) * 2654435761u + seed;
}

// The test's own program, kernel and command queue on a device: the queue is
// not the plugin's default queue. nat and cl: the device's native handles
// and OpenCL functions.
struct KernelRig {
  const hurray_backend_native nat;
  const Cl cl;
  cl_program program = nullptr;
  cl_kernel kernel = nullptr;
  cl_command_queue queue = nullptr;

  KernelRig(const Probed &p, int32_t ordinal) : nat(p.native(ordinal)), cl(nat.handles[4]) {
    const hurray_backend_native &n = nat;
    auto ctx = static_cast<cl_context>(n.handles[2]);
    auto dev = static_cast<cl_device_id>(n.handles[1]);
    cl_int e = CL_SUCCESS;
    queue = cl.clCreateCommandQueueWithProperties(ctx, dev, nullptr, &e);
    if (queue == nullptr) queue = cl.clCreateCommandQueue(ctx, dev, 0, &e);
    REQUIRE(queue != nullptr);
    REQUIRE(queue != static_cast<cl_command_queue>(n.handles[3]));
    const char *source = kKernelSource;
    program = cl.clCreateProgramWithSource(ctx, 1, &source, nullptr, &e);
    REQUIRE(program != nullptr);
    e = cl.clBuildProgram(program, 1, &dev, "", nullptr, nullptr);
    if (e != CL_SUCCESS) {
      char log[4096] = "";
      cl.clGetProgramBuildInfo(program, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, nullptr);
      FAIL("clBuildProgram " << e << ": " << log);
    }
    kernel = cl.clCreateKernel(program, "pattern", &e);
    REQUIRE(kernel != nullptr);
  }
  ~KernelRig() {
    if (queue != nullptr) {
      cl.clFinish(queue);
      cl.clReleaseCommandQueue(queue);
    }
    if (kernel != nullptr) cl.clReleaseKernel(kernel);
    if (program != nullptr) cl.clReleaseProgram(program);
  }
  KernelRig(const KernelRig &) = delete;
  KernelRig &operator=(const KernelRig &) = delete;

  // Enqueue the kernel over n elements, after `gate` (a user event) if given.
  void run(size_t n, uint32_t seed, cl_event gate) {
    REQUIRE(cl.clSetKernelArg(kernel, 1, sizeof seed, &seed) == CL_SUCCESS);
    REQUIRE(cl.clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &n, nullptr, gate ? 1u : 0u,
                                      gate ? &gate : nullptr, nullptr) == CL_SUCCESS);
  }
  cl_int status(cl_event ev) const {
    cl_int st = CL_COMPLETE;
    REQUIRE(cl.clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr) ==
            CL_SUCCESS);
    return st;
  }
};

constexpr auto kBlockedFor = std::chrono::milliseconds(200);

// A user event that opens on destruction too, so that no thread stays blocked
// when a check fails.
struct Gate {
  const Cl &cl;
  cl_event ev = nullptr;
  explicit Gate(const KernelRig &rig) : cl(rig.cl) {
    cl_int e = CL_SUCCESS;
    ev = cl.clCreateUserEvent(static_cast<cl_context>(rig.nat.handles[2]), &e);
    REQUIRE(ev != nullptr);
  }
  void open() {
    if (ev != nullptr) {
      cl.clSetUserEventStatus(ev, CL_COMPLETE);
      cl.clReleaseEvent(ev);
      ev = nullptr;
    }
  }
  ~Gate() { open(); }
  // Runs call on a thread of its own, which must still be blocked (behind
  // the gate) after kBlockedFor; then opens the gate and returns what call
  // returned.
  hurray_status blocks(const std::function<hurray_status()> &call) {
    std::atomic<bool> done{false};
    hurray_status st = HURRAY_E_INTERNAL;
    std::thread caller([&] {
      st = call();
      done = true;
    });
    std::this_thread::sleep_for(kBlockedFor);
    CHECK_FALSE(done.load());
    open();
    caller.join();
    return st;
  }
  Gate(const Gate &) = delete;
  Gate &operator=(const Gate &) = delete;
};

}  // namespace

TEST_CASE("opencl: entry table: version size device tag and functions") {
  gpu_test::check_table(plugin(), HURRAY_DEVICE_OPENCL, "opencl");
  gpu_test::check_ipc_entries(plugin(), false);  // OpenCL has no IPC of memory or events
}

TEST_CASE("opencl: probe: every device is described with its native handles") {
  Probed p;
  // Beyond describe_devices: what this plugin reports, and its native handles.
  auto more = [&p](int32_t dev, const hurray_backend_device_info &info) {
    CHECK((info.memory_classes & (1u << HURRAY_MEMORY_HOST_PINNED)) != 0);
    CHECK((info.memory_classes & ~0x7u) == 0);  // never PEER, nothing else
    CHECK(info.ipc == 0);
    CHECK(is_pow2(info.min_alignment));
    CHECK(info.min_alignment >= HURRAY_MIN_ALIGNMENT);
    CHECK(std::string(info.detail).find("no IPC") != std::string::npos);

    const hurray_backend_native nat = p.native(dev);
    for (int i = 0; i < 5; ++i) CHECK(nat.handles[i] != nullptr);
    for (int i = 5; i < 8; ++i) CHECK(nat.handles[i] == nullptr);
    const Cl cl(nat.handles[4]);
    auto platform = static_cast<cl_platform_id>(nat.handles[0]);
    auto device = static_cast<cl_device_id>(nat.handles[1]);
    auto context = static_cast<cl_context>(nat.handles[2]);
    auto queue = static_cast<cl_command_queue>(nat.handles[3]);
    cl_platform_id dev_platform = nullptr;
    REQUIRE(cl.clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof dev_platform, &dev_platform,
                               nullptr) == CL_SUCCESS);
    CHECK(dev_platform == platform);
    cl_device_id ctx_device = nullptr;
    REQUIRE(cl.clGetContextInfo(context, CL_CONTEXT_DEVICES, sizeof ctx_device, &ctx_device,
                                nullptr) == CL_SUCCESS);
    CHECK(ctx_device == device);
    cl_context q_context = nullptr;
    cl_device_id q_device = nullptr;
    cl_command_queue_properties q_props = 0;
    REQUIRE(cl.clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof q_context, &q_context,
                                     nullptr) == CL_SUCCESS);
    REQUIRE(cl.clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof q_device, &q_device,
                                     nullptr) == CL_SUCCESS);
    REQUIRE(cl.clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof q_props, &q_props,
                                     nullptr) == CL_SUCCESS);
    CHECK(q_context == context);
    CHECK(q_device == device);
    CHECK((q_props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) == 0);  // in order

    // The device's own figures agree with what the plugin reports.
    cl_uint base_bits = 0;
    REQUIRE(cl.clGetDeviceInfo(device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof base_bits,
                               &base_bits, nullptr) == CL_SUCCESS);
    CHECK(info.min_alignment >= base_bits / 8);
    cl_device_svm_capabilities svm = 0;
    cl.clGetDeviceInfo(device, CL_DEVICE_SVM_CAPABILITIES, sizeof svm, &svm, nullptr);
    CHECK(((info.memory_classes >> HURRAY_MEMORY_UNIFIED) & 1u) ==
          ((svm & CL_DEVICE_SVM_FINE_GRAIN_BUFFER) != 0 ? 1u : 0u));
  };
  gpu_test::describe_devices(p, "opencl", more);

  const int32_t n = p.count();
  hurray_backend_device_info info{};
  hurray_error err{};
  CHECK(p.b->device_info(p.state, n, &info, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(err.status == HURRAY_E_DEVICE_UNAVAILABLE);
  hurray_backend_native nat{};
  CHECK(p.b->native(p.state, n, &nat, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
}

TEST_CASE("opencl: alloc: every served class at alignments 64 256 4096 65536") {
  Probed p;
  for (int32_t dev = 0; dev < p.count(); ++dev) {
    const uint32_t min_alignment = p.info(dev).min_alignment;
    for (uint8_t mc : p.classes(dev)) {
      for (uint32_t align : kAlignments) {
        for (uint64_t size : {uint64_t{1}, uint64_t{4099}, uint64_t{1} << 20}) {
          INFO("device " << dev << ", " << class_name(mc) << ", " << size << " bytes, alignment "
                         << align);
          AllocGuard g{p, p.alloc(dev, mc, size, align)};
          const hurray_backend_allocation &a = g.a;
          CHECK(a.byte_size == size);
          CHECK(a.device == dev);
          CHECK(a.memory_class == mc);
          CHECK(is_pow2(a.alignment));
          CHECK(a.alignment >= align);
          CHECK(a.alignment >= min_alignment);
          REQUIRE(a.data != nullptr);
          CHECK(a.plugin_data != nullptr);
          int32_t cdev = -1;
          uint8_t cmc = 0xFF;
          hurray_error err{};
          if (mc == HURRAY_MEMORY_STANDARD) {
            CHECK(a.flags == HURRAY_HANDOFF_OPAQUE_DATA);  // a cl_mem
            CHECK(a.host == nullptr);
            CHECK(p.b->classify(p.state, a.data, &cdev, &cmc, &err) == HURRAY_E_UNSUPPORTED);
          } else {
            CHECK(a.flags == 0);
            CHECK(a.host == a.data);
            CHECK(is_aligned(a.data, align));
            CHECK(is_aligned(a.data, a.alignment));
            std::memset(a.host, 0xA5, static_cast<size_t>(size));  // host-visible: all of it
            if (mc == HURRAY_MEMORY_UNIFIED) {
              const auto *last = static_cast<const char *>(a.data) + size - 1;
              REQUIRE(p.b->classify(p.state, a.data, &cdev, &cmc, &err) == HURRAY_OK);
              CHECK(cdev == dev);
              CHECK(cmc == HURRAY_MEMORY_UNIFIED);
              cdev = -1;
              REQUIRE(p.b->classify(p.state, last, &cdev, &cmc, &err) == HURRAY_OK);
              CHECK(cdev == dev);
            } else {
              CHECK(p.b->classify(p.state, a.data, &cdev, &cmc, &err) == HURRAY_E_UNSUPPORTED);
            }
          }
        }
      }
      // An empty buffer has no memory.
      AllocGuard g{p, p.alloc(dev, mc, 0, 64)};
      CHECK(g.a.data == nullptr);
      CHECK(g.a.byte_size == 0);
    }
  }
  int stack_value = 0;
  hurray_error err{};
  CHECK(p.b->classify(p.state, &stack_value, nullptr, nullptr, &err) == HURRAY_E_UNSUPPORTED);
  CHECK(std::string(err.message).find("not fine-grained SVM") != std::string::npos);
}

TEST_CASE("opencl: copy: a 1 MiB round trip through every served class") {
  Probed p;
  constexpr uint64_t kSize = uint64_t{1} << 20;
  std::vector<uint8_t> src(kSize), back(kSize);
  for (size_t i = 0; i < kSize; ++i) src[i] = static_cast<uint8_t>(i * 131 + (i >> 11));
  for (int32_t dev = 0; dev < p.count(); ++dev) {
    for (uint8_t mc : p.classes(dev)) {
      INFO("device " << dev << ", " << class_name(mc));
      AllocGuard g{p, p.alloc(dev, mc, kSize, 4096)};
      hurray_error err{};
      REQUIRE(p.b->copy_from_host(p.state, &g.a, 0, src.data(), kSize, &err) == HURRAY_OK);
      std::fill(back.begin(), back.end(), 0);
      REQUIRE(p.b->copy_to_host(p.state, &g.a, 0, back.data(), kSize, &err) == HURRAY_OK);
      CHECK(back == src);
      if (g.a.host != nullptr) CHECK(std::memcmp(g.a.host, src.data(), kSize) == 0);

      // A part, at an offset.
      const std::vector<uint8_t> part(1000, 0x5C);
      REQUIRE(p.b->copy_from_host(p.state, &g.a, 12345, part.data(), part.size(), &err) ==
              HURRAY_OK);
      std::vector<uint8_t> expect = src;
      std::memcpy(expect.data() + 12345, part.data(), part.size());
      REQUIRE(p.b->copy_to_host(p.state, &g.a, 0, back.data(), kSize, &err) == HURRAY_OK);
      CHECK(back == expect);
      std::vector<uint8_t> tail(100);
      REQUIRE(p.b->copy_to_host(p.state, &g.a, kSize - 100, tail.data(), 100, &err) == HURRAY_OK);
      CHECK(std::memcmp(tail.data(), expect.data() + kSize - 100, 100) == 0);

      // Outside the allocation, and nothing at all.
      CHECK(p.b->copy_to_host(p.state, &g.a, kSize - 10, back.data(), 11, &err) ==
            HURRAY_E_INVALID_ARGUMENT);
      CHECK(p.b->copy_from_host(p.state, &g.a, kSize + 1, src.data(), 0, &err) ==
            HURRAY_E_INVALID_ARGUMENT);
      CHECK(p.b->copy_to_host(p.state, &g.a, kSize, back.data(), 0, &err) == HURRAY_OK);
    }
  }
}

TEST_CASE("opencl: events: a kernel on another queue waited for on the default queue") {
  Probed p;
  for (int32_t dev = 0; dev < p.count(); ++dev) {
    INFO("device " << dev);
    KernelRig rig(p, dev);
    constexpr size_t kCount = 1 << 18;  // 1 MiB of uint32
    AllocGuard g{p, p.alloc(dev, HURRAY_MEMORY_STANDARD, kCount * 4, 4096)};
    std::vector<uint32_t> out(kCount, 0xFFFFFFFFu);
    hurray_error err{};
    const std::vector<uint32_t> zeros(kCount, 0);
    REQUIRE(p.b->copy_from_host(p.state, &g.a, 0, zeros.data(), kCount * 4, &err) == HURRAY_OK);

    // The kernel waits for a gate the test opens later, so that the wait
    // below is what orders the copy after it.
    Gate gate(rig);
    auto mem = static_cast<cl_mem>(g.a.data);
    REQUIRE(rig.cl.clSetKernelArg(rig.kernel, 0, sizeof mem, &mem) == CL_SUCCESS);
    rig.run(kCount, 7u, gate.ev);
    void *event = p.record(dev, rig.queue);
    CHECK(rig.status(static_cast<cl_event>(event)) != CL_COMPLETE);

    // The default queue waits for the event; a copy on it waits too.
    REQUIRE(p.b->event_wait(p.state, dev, event, 0, rig.nat.handles[3], &err) == HURRAY_OK);
    const hurray_status copy_status = gate.blocks([&] {  // behind the barrier
      return p.b->copy_to_host(p.state, &g.a, 0, out.data(), kCount * 4, nullptr);
    });
    REQUIRE(copy_status == HURRAY_OK);
    size_t wrong = 0;
    for (size_t i = 0; i < kCount; ++i) wrong += out[i] != pattern_at(i, 7u);
    CHECK(wrong == 0);
    CHECK(rig.status(static_cast<cl_event>(event)) == CL_COMPLETE);
    p.b->event_release(p.state, dev, event);
  }
}

TEST_CASE("opencl: events: a wait on the host (stream NULL)") {
  Probed p;
  for (int32_t dev = 0; dev < p.count(); ++dev) {
    INFO("device " << dev);
    KernelRig rig(p, dev);
    const auto served = p.classes(dev);
    const bool unified =
        std::find(served.begin(), served.end(), HURRAY_MEMORY_UNIFIED) != served.end();
    const uint8_t mc = unified ? HURRAY_MEMORY_UNIFIED : HURRAY_MEMORY_STANDARD;
    constexpr size_t kCount = 1 << 16;
    AllocGuard g{p, p.alloc(dev, mc, kCount * 4, 4096)};
    hurray_error err{};
    if (unified) {
      std::memset(g.a.host, 0, kCount * 4);
      REQUIRE(rig.cl.clSetKernelArgSVMPointer(rig.kernel, 0, g.a.data) == CL_SUCCESS);
    } else {
      auto mem = static_cast<cl_mem>(g.a.data);
      REQUIRE(rig.cl.clSetKernelArg(rig.kernel, 0, sizeof mem, &mem) == CL_SUCCESS);
    }
    Gate gate(rig);
    rig.run(kCount, 1234u, gate.ev);
    void *event = nullptr;
    uint64_t value = 1;
    REQUIRE(p.b->event_record(p.state, dev, rig.queue, &event, &value, &err) == HURRAY_OK);
    CHECK(value == 0);

    const hurray_status wait_status = gate.blocks([&] {  // the host waits for the kernel
      return p.b->event_wait(p.state, dev, event, 0, nullptr, nullptr);
    });
    REQUIRE(wait_status == HURRAY_OK);
    CHECK(rig.status(static_cast<cl_event>(event)) == CL_COMPLETE);
    std::vector<uint32_t> out(kCount);
    if (unified) {
      // Fine-grained SVM: the host reads the kernel's writes directly.
      std::memcpy(out.data(), g.a.host, kCount * 4);
    } else {
      REQUIRE(p.b->copy_to_host(p.state, &g.a, 0, out.data(), kCount * 4, &err) == HURRAY_OK);
    }
    size_t wrong = 0;
    for (size_t i = 0; i < kCount; ++i) wrong += out[i] != pattern_at(i, 1234u);
    CHECK(wrong == 0);
    p.b->event_release(p.state, dev, event);

    // An event on the default queue (stream NULL), and what a wait refuses.
    REQUIRE(p.b->event_record(p.state, dev, nullptr, &event, &value, &err) == HURRAY_OK);
    CHECK(p.b->event_wait(p.state, dev, event, 1, nullptr, &err) == HURRAY_E_INVALID_ARGUMENT);
    CHECK(std::string(err.message).find("binary") != std::string::npos);
    CHECK(p.b->event_wait(p.state, dev, nullptr, 0, nullptr, &err) == HURRAY_E_INVALID_ARGUMENT);
    REQUIRE(p.b->event_wait(p.state, dev, event, 0, nullptr, &err) == HURRAY_OK);
    REQUIRE(p.b->event_wait(p.state, dev, event, 0, rig.queue, &err) == HURRAY_OK);
    p.b->event_release(p.state, dev, event);
  }
}

TEST_CASE("opencl: errors: an absent memory class is DEVICE_UNAVAILABLE and named") {
  Probed p;
  for (int32_t dev = 0; dev < p.count(); ++dev) {
    const uint32_t served = p.info(dev).memory_classes;
    for (uint8_t mc : {uint8_t{HURRAY_MEMORY_STANDARD}, uint8_t{HURRAY_MEMORY_HOST_PINNED},
                       uint8_t{HURRAY_MEMORY_UNIFIED}, uint8_t{HURRAY_MEMORY_PEER}, uint8_t{0xF0}}) {
      if (mc < 32 && (served & (1u << mc)) != 0) continue;
      INFO("device " << dev << ", " << class_name(mc));
      hurray_backend_allocation a{};
      hurray_error err{};
      CHECK(p.b->alloc(p.state, dev, mc, 4096, 4096, 0, &a, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
      CHECK(err.status == HURRAY_E_DEVICE_UNAVAILABLE);
      CHECK(std::string(err.message).find(class_name(mc)) != std::string::npos);
      CHECK(a.data == nullptr);
      CHECK(a.plugin_data == nullptr);
      std::printf("absent class %s on device %d: %s\n", class_name(mc), dev, err.message);
    }
    // A device that does not exist.
    hurray_backend_allocation a{};
    hurray_error err{};
    CHECK(p.b->alloc(p.state, p.count(), HURRAY_MEMORY_STANDARD, 64, 64, 0, &a, &err) ==
          HURRAY_E_DEVICE_UNAVAILABLE);
  }
}

TEST_CASE("opencl: errors: SHAREABLE memory is UNSUPPORTED") {
  Probed p;
  for (int32_t dev = 0; dev < p.count(); ++dev) {
    for (uint8_t mc : p.classes(dev)) {
      INFO("device " << dev << ", " << class_name(mc));
      hurray_backend_allocation a{};
      hurray_error err{};
      CHECK(p.b->alloc(p.state, dev, mc, 4096, 4096, HURRAY_ALLOC_SHAREABLE, &a, &err) ==
            HURRAY_E_UNSUPPORTED);
      CHECK(err.status == HURRAY_E_UNSUPPORTED);
      CHECK(std::string(err.message).find("SHAREABLE") != std::string::npos);
      CHECK(a.plugin_data == nullptr);
    }
  }
}

TEST_CASE("opencl: errors: a size past what the host can address is refused before OpenCL") {
  Probed p;
  for (int32_t dev = 0; dev < p.count(); ++dev) {
    hurray_backend_allocation a{};
    hurray_error err{};
    const uint64_t huge = uint64_t{1} << 63;
    CHECK(p.b->alloc(p.state, dev, HURRAY_MEMORY_STANDARD, huge, 64, 0, &a, &err) ==
          HURRAY_E_OUT_OF_MEMORY);
    CHECK(std::string(err.message) ==
          "opencl: " + std::to_string(huge) + " bytes cannot be allocated");
    CHECK(a.plugin_data == nullptr);
  }
}

TEST_CASE("opencl: errors: too large an allocation is OUT_OF_MEMORY and names the OpenCL error") {
  Probed p;
  for (int32_t dev = 0; dev < p.count(); ++dev) {
    const hurray_backend_native nat = p.native(dev);
    const Cl cl(nat.handles[4]);
    cl_ulong max_alloc = 0;
    REQUIRE(cl.clGetDeviceInfo(static_cast<cl_device_id>(nat.handles[1]),
                               CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc,
                               nullptr) == CL_SUCCESS);
    for (uint8_t mc : p.classes(dev)) {
      INFO("device " << dev << ", " << class_name(mc));
      hurray_backend_allocation a{};
      hurray_error err{};
      CHECK(p.b->alloc(p.state, dev, mc, max_alloc + 1, 64, 0, &a, &err) ==
            HURRAY_E_OUT_OF_MEMORY);
      CHECK(err.status == HURRAY_E_OUT_OF_MEMORY);
      const std::string msg = err.message;
      std::printf("too large %s on device %d: %s\n", class_name(mc), dev, err.message);
      if (mc == HURRAY_MEMORY_UNIFIED) {
        CHECK(msg.rfind("[clSVMAlloc] ", 0) == 0);  // clSVMAlloc gives no error code
      } else {
        CHECK(msg.rfind("[clCreateBuffer] CL_INVALID_BUFFER_SIZE: ", 0) == 0);
      }
      CHECK(a.plugin_data == nullptr);
    }
  }
}

// Run by the next test in a child process, in the environment it chooses.
TEST_CASE("opencl: child: probe and print the result", "[.child]") {
  gpu_test::print_probe_result(plugin());
}

TEST_CASE("opencl: probe: no OpenCL platform is DEVICE_UNAVAILABLE with the reason") {
  // ocl-icd reads OCL_ICD_VENDORS once per process, so the probe runs in a
  // child of this program with OCL_ICD_VENDORS pointing at an empty folder.
  char dir[] = "/tmp/hurray-opencl-no-icd-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  const gpu_test::ChildProbe r = gpu_test::probe_in_child(
      std::string("OCL_ICD_VENDORS='") + dir + "' ", "opencl: child: probe and print the result");
  rmdir(dir);
  // ocl-icd's answer when it finds no driver.
  gpu_test::check_child_unavailable(r, "libOpenCL.so.1",
                                    "message=[clGetPlatformIDs] CL_PLATFORM_NOT_FOUND_KHR");
}

TEST_CASE("opencl: threads: alloc copy classify and free from several threads at once") {
  Probed p;
  const int failures = gpu_test::threads_round_trip(
      p, [&p](int32_t dev, uint8_t mc, const hurray_backend_allocation &a) {
        int32_t cdev = -1;
        uint8_t cmc = 0;
        const hurray_status cs = p.b->classify(p.state, a.data, &cdev, &cmc, nullptr);
        return mc == HURRAY_MEMORY_UNIFIED ? cs == HURRAY_OK && cdev == dev
                                           : cs == HURRAY_E_UNSUPPORTED;
      });
  CHECK(failures == 0);
}

TEST_CASE("opencl: shutdown: allocations still alive are freed with the state") {
  Probed p;
  gpu_test::leave_allocations(p);
}
