// Tests of libhurray-level-zero.so through its function table only. The
// plugin is dlopened as libhurray's loader does it; Level Zero itself is
// reached through dlsym on native handle [4] (this program links neither
// libze_loader nor libhurray).
//
// Three kinds of test cases:
//  - "level-zero: ..." without a device: the table, probe's answer on this
//    machine, probe with no driver at all (in a child process), calls
//    without a state. They always run.
//  - "level-zero: ..." with a device: each prints the reason and exits with
//    77 where probe finds no Level Zero GPU, which CTest reports as skipped
//    (never as passed).
//  - "level-zero (stand-in: loader null driver): ..." (hidden, tag
//    [standin]): level_zero_standin_test.cpp.
#include "level_zero_test_support.h"

using namespace l0test;

// ===========================================================================
// Without a device
// ===========================================================================

TEST_CASE("level-zero: entry table: version size device tag and functions") {
  gpu_test::check_full_table(plugin(), HURRAY_DEVICE_LEVEL_ZERO, "level-zero");
}

TEST_CASE("level-zero: probe: this machine's answer is a device or DEVICE_UNAVAILABLE with a named reason") {
  const hurray_backend_v1 *b = plugin();
  void *state = nullptr;
  hurray_error err{};
  const hurray_status st = b->probe(&state, &err);
  std::printf("level-zero probe on this machine: status %d, message \"%s\"\n",
              static_cast<int>(st), st == HURRAY_OK ? "" : err.message);
  std::fflush(stdout);
  if (st == HURRAY_OK) {
    CHECK(b->device_count(state) >= 1);
    b->shutdown(state);
    return;
  }
  REQUIRE(st == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(state == nullptr);
  CHECK(err.status == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(err.rule == HURRAY_RULE_NONE);
  const std::string msg = err.message;
  // The loader is missing (dlerror), or a Level Zero call names its result.
  CHECK((contains(msg, "libze_loader.so.1") || starts_with(msg, "[zeInit] ZE_RESULT_") ||
         starts_with(msg, "[zeDriverGet] ") || starts_with(msg, "level-zero: no usable")));
  // A second probe answers the same (nothing was left half-open).
  hurray_error again{};
  CHECK(b->probe(&state, &again) == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(std::string(again.message) == msg);
}

// Run by the next test in a child process, in the environment it chooses.
TEST_CASE("level-zero: child: probe and print the result", "[.child]") {
  gpu_test::print_probe_result(plugin());
}

TEST_CASE("level-zero: probe: no driver is DEVICE_UNAVAILABLE with the zeInit result by name") {
  // The loader reads ZE_ENABLE_ALT_DRIVERS (its list of driver libraries) at
  // zeInit: a child of this program probes with a list naming no real file,
  // and without the null driver, on any machine.
  const gpu_test::ChildProbe r = gpu_test::probe_in_child(
      "env -u ZE_ENABLE_NULL_DRIVER "
      "ZE_ENABLE_ALT_DRIVERS=/nonexistent/libze_hurray_no_driver.so.1 ",
      "level-zero: child: probe and print the result");
  // What the loader answers when no driver loads.
  gpu_test::check_child_unavailable(r, "libze_loader.so.1",
                                    "message=[zeInit] ZE_RESULT_ERROR_UNINITIALIZED: ");
}

TEST_CASE("level-zero: errors: calls without a probed state fail cleanly") {
  const hurray_backend_v1 *b = plugin();
  hurray_error err{};
  CHECK(b->probe(nullptr, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(b->device_count(nullptr) == 0);
  hurray_backend_device_info info{};
  CHECK(b->device_info(nullptr, 0, &info, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(contains(err.message, "probe first"));
  hurray_backend_allocation a{};
  CHECK(b->alloc(nullptr, 0, HURRAY_MEMORY_STANDARD, 64, 64, 0, &a, &err) ==
        HURRAY_E_INVALID_ARGUMENT);
  uint8_t host[8] = {};
  CHECK(b->copy_to_host(nullptr, &a, 0, host, sizeof host, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(b->copy_from_host(nullptr, &a, 0, host, sizeof host, &err) == HURRAY_E_INVALID_ARGUMENT);
  int32_t dev = -1;
  uint8_t mc = 0;
  CHECK(b->classify(nullptr, host, &dev, &mc, &err) == HURRAY_E_INVALID_ARGUMENT);
  void *ev = nullptr;
  uint64_t value = 0;
  CHECK(b->event_record(nullptr, 0, nullptr, &ev, &value, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(b->event_wait(nullptr, 0, host, 0, nullptr, &err) == HURRAY_E_INVALID_ARGUMENT);
  hurray_backend_native nat{};
  CHECK(b->native(nullptr, 0, &nat, &err) == HURRAY_E_INVALID_ARGUMENT);
  hurray_backend_ipc_handle ih{};
  CHECK(b->ipc_export_memory(nullptr, &a, &ih, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(b->ipc_import_memory(nullptr, 0, &ih, 0, &a, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(b->ipc_export_event(nullptr, 0, host, &ih, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(b->ipc_import_event(nullptr, 0, &ih, &ev, &err) == HURRAY_E_INVALID_ARGUMENT);
  // No-ops, and err may be NULL.
  b->free(nullptr, &a);
  b->event_release(nullptr, 0, host);
  b->shutdown(nullptr);
  CHECK(b->alloc(nullptr, 0, HURRAY_MEMORY_STANDARD, 64, 64, 0, &a, nullptr) ==
        HURRAY_E_INVALID_ARGUMENT);
}

// ===========================================================================
// With a Level Zero GPU (skipped, exit 77, without one)
// ===========================================================================

TEST_CASE("level-zero: probe: every device is described with its native handles") {
  Probed p;
  // Beyond describe_devices: what this plugin reports, and its native handles.
  auto more = [&p](int32_t dev, const hurray_backend_device_info &info) {
    CHECK((info.memory_classes & (1u << HURRAY_MEMORY_HOST_PINNED)) != 0);
    CHECK((info.memory_classes & ~0xFu) == 0);
    CHECK((info.ipc & ~(HURRAY_BACKEND_IPC_MEMORY | HURRAY_BACKEND_IPC_EVENTS)) == 0);
    CHECK(info.min_alignment == HURRAY_MIN_ALIGNMENT);
    CHECK(contains(info.detail, "zeMemAllocDevice"));

    const hurray_backend_native nat = p.native(dev);
    for (int i = 0; i < 5; ++i) CHECK(nat.handles[i] != nullptr);
    for (int i = 6; i < 8; ++i) CHECK(nat.handles[i] == nullptr);
    const Ze ze(nat.handles[4]);
    ze_device_properties_t props{};
    props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
    REQUIRE(ze.zeDeviceGetProperties(static_cast<ze_device_handle_t>(nat.handles[1]), &props) ==
            ZE_RESULT_SUCCESS);
    CHECK(std::string(props.name) == info.name);
  };
  gpu_test::describe_devices(p, "level-zero", more);
}

TEST_CASE("level-zero: alloc: every served class at alignments 64 256 4096 65536, classified") {
  Probed p;
  for (int32_t dev = 0; dev < p.count(); ++dev) {
    for (uint8_t mc : p.classes(dev)) {
      for (uint32_t align : kAlignments) {
        INFO("device " << dev << " " << class_name(mc) << " aligned to " << align);
        hurray_backend_allocation a = p.alloc(dev, mc, 65536 + 123, align);
        CHECK(a.byte_size == 65536 + 123);
        CHECK(a.alignment == align);
        CHECK(a.flags == 0);  // device addresses, never opaque
        CHECK(a.device == dev);
        CHECK(a.memory_class == mc);
        REQUIRE(a.data != nullptr);
        CHECK(is_aligned(a.data, align));
        if (mc == HURRAY_MEMORY_STANDARD || mc == HURRAY_MEMORY_PEER) {
          CHECK(a.host == nullptr);
        } else {
          CHECK(a.host == a.data);
        }
        int32_t cdev = -1;
        uint8_t cmc = 0xFF;
        hurray_error err{};
        const hurray_status cs = p.b->classify(p.state, a.data, &cdev, &cmc, &err);
        INFO(err.message);
        CHECK(cs == HURRAY_OK);
        CHECK(cdev == dev);
        CHECK(cmc == mc);
        // Inside the allocation too.
        CHECK(p.b->classify(p.state, static_cast<char *>(a.data) + 65536, &cdev, &cmc, &err) ==
              HURRAY_OK);
        CHECK(cmc == mc);
        p.b->free(p.state, &a);
        CHECK(a.plugin_data == nullptr);
      }
    }
  }
  // A pointer Level Zero did not allocate.
  int on_stack = 0;
  int32_t cdev = -1;
  uint8_t cmc = 0;
  hurray_error err{};
  CHECK(p.b->classify(p.state, &on_stack, &cdev, &cmc, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(starts_with(err.message, "[zeMemGetAllocProperties] ZE_MEMORY_TYPE_UNKNOWN"));
}

TEST_CASE("level-zero: copy: a 1 MiB round trip through every served class") {
  Probed p;
  const size_t n = 1 << 20;
  for (int32_t dev = 0; dev < p.count(); ++dev) {
    for (uint8_t mc : p.classes(dev)) {
      INFO("device " << dev << " " << class_name(mc));
      hurray_backend_allocation a = p.alloc(dev, mc, n, 4096);
      const std::vector<uint8_t> in = pattern(n, mc + 7u * static_cast<unsigned>(dev));
      hurray_error err{};
      REQUIRE(p.b->copy_from_host(p.state, &a, 0, in.data(), n, &err) == HURRAY_OK);
      std::vector<uint8_t> out(n, 0);
      REQUIRE(p.b->copy_to_host(p.state, &a, 0, out.data(), n, &err) == HURRAY_OK);
      CHECK(out == in);
      REQUIRE(p.b->copy_to_host(p.state, &a, 4000, out.data(), 100, &err) == HURRAY_OK);
      CHECK(std::memcmp(out.data(), in.data() + 4000, 100) == 0);
      CHECK(p.b->copy_to_host(p.state, &a, n - 10, out.data(), 11, &err) ==
            HURRAY_E_INVALID_ARGUMENT);
      p.b->free(p.state, &a);
    }
  }
}

TEST_CASE("level-zero: events: a copy on another list waited for on the plugin's list") {
  Probed p;
  for (int32_t dev = 0; dev < p.count(); ++dev) {
    INFO("device " << dev);
    const hurray_backend_native nat = p.native(dev);
    const Ze ze(nat.handles[4]);
    auto context = static_cast<ze_context_handle_t>(nat.handles[2]);
    auto device = static_cast<ze_device_handle_t>(nat.handles[1]);
    ze_command_queue_desc_t qd{};
    qd.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
    qd.ordinal = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(nat.handles[5]));
    qd.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
    ze_command_list_handle_t other = nullptr;
    REQUIRE(ze.zeCommandListCreateImmediate(context, device, &qd, &other) == ZE_RESULT_SUCCESS);
    REQUIRE(other != static_cast<ze_command_list_handle_t>(nat.handles[3]));

    const size_t n = 4 << 20;
    hurray_backend_allocation a = p.alloc(dev, HURRAY_MEMORY_STANDARD, n, 4096);
    const std::vector<uint8_t> in = pattern(n, 42);
    // The test's own list fills the buffer; the event follows that copy.
    REQUIRE(ze.zeCommandListAppendMemoryCopy(other, a.data, in.data(), n, nullptr, 0, nullptr) ==
            ZE_RESULT_SUCCESS);
    void *ev = p.record(dev, other);
    hurray_error err{};
    // The plugin's list waits for it, then its copy reads the buffer.
    REQUIRE(p.b->event_wait(p.state, dev, ev, 0, nat.handles[3], &err) == HURRAY_OK);
    std::vector<uint8_t> out(n, 0);
    REQUIRE(p.b->copy_to_host(p.state, &a, 0, out.data(), n, &err) == HURRAY_OK);
    CHECK(out == in);
    CHECK(ze.zeEventQueryStatus(static_cast<ze_event_handle_t>(ev)) == ZE_RESULT_SUCCESS);
    p.b->event_release(p.state, dev, ev);
    p.b->free(p.state, &a);
    ze.zeCommandListDestroy(other);
  }
}

TEST_CASE("level-zero: events: host waits, reuse after release, and more events than one pool") {
  Probed p;
  hurray_error err{};
  for (int32_t dev = 0; dev < p.count(); ++dev) {
    const hurray_backend_native nat = p.native(dev);
    const Ze ze(nat.handles[4]);
    std::vector<void *> events;
    for (int i = 0; i < 150; ++i) events.push_back(p.record(dev, i % 2 ? nat.handles[3] : nullptr));
    CHECK(std::set<void *>(events.begin(), events.end()).size() == events.size());
    for (void *ev : events) {
      REQUIRE(p.b->event_wait(p.state, dev, ev, 0, nullptr, &err) == HURRAY_OK);
      CHECK(ze.zeEventQueryStatus(static_cast<ze_event_handle_t>(ev)) == ZE_RESULT_SUCCESS);
    }
    for (void *ev : events) p.b->event_release(p.state, dev, ev);
    // Released events come back reset.
    void *again = p.record(dev, nullptr);
    CHECK(std::set<void *>(events.begin(), events.end()).count(again) == 1);
    REQUIRE(p.b->event_wait(p.state, dev, again, 0, nullptr, &err) == HURRAY_OK);
    CHECK(p.b->event_wait(p.state, dev, again, 1, nullptr, &err) == HURRAY_E_INVALID_ARGUMENT);
    p.b->event_release(p.state, dev, again);
  }
}

TEST_CASE("level-zero: errors: an absent memory class is DEVICE_UNAVAILABLE and named") {
  Probed p;
  for (int32_t dev = 0; dev < p.count(); ++dev) {
    const uint32_t served = p.info(dev).memory_classes;
    for (uint8_t mc = 0; mc <= HURRAY_MEMORY_PEER; ++mc) {
      if (served & (1u << mc)) continue;
      hurray_backend_allocation a{};
      hurray_error err{};
      CHECK(p.b->alloc(p.state, dev, mc, 4096, 4096, 0, &a, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
      std::printf("device %d, %s: %s\n", dev, class_name(mc), err.message);
      CHECK(contains(err.message, class_name(mc)));
      CHECK(a.data == nullptr);
    }
    hurray_backend_allocation a{};
    hurray_error err{};
    CHECK(p.b->alloc(p.state, dev, 0x04, 4096, 4096, 0, &a, &err) == HURRAY_E_MEMORY_CLASS);
  }
}

TEST_CASE("level-zero: errors: too large an allocation is OUT_OF_MEMORY and names the result") {
  Probed p;
  for (int32_t dev = 0; dev < p.count(); ++dev) {
    hurray_backend_allocation a{};
    hurray_error err{};
    CHECK(p.b->alloc(p.state, dev, HURRAY_MEMORY_STANDARD, 1ull << 50, 4096, 0, &a, &err) ==
          HURRAY_E_OUT_OF_MEMORY);
    std::printf("too large on device %d: %s\n", dev, err.message);
    CHECK(starts_with(err.message, "[zeMemAllocDevice] ZE_RESULT_ERROR_"));
    CHECK(a.plugin_data == nullptr);
  }
}

TEST_CASE("level-zero: ipc: export as the driver reports, with a dma-buf fd or none") {
  Probed p;
  for (int32_t dev = 0; dev < p.count(); ++dev) {
    const hurray_backend_device_info info = p.info(dev);
    hurray_backend_allocation a = p.alloc(dev, HURRAY_MEMORY_STANDARD, 1 << 16, 4096);
    hurray_backend_ipc_handle h{};
    hurray_error err{};
    const hurray_status st = p.b->ipc_export_memory(p.state, &a, &h, &err);
    INFO(err.message);
    if (info.ipc & HURRAY_BACKEND_IPC_MEMORY) {
      REQUIRE(st == HURRAY_OK);
      CHECK(h.kind != 0);
      CHECK(h.byte_size == a.byte_size);
      if (h.fd >= 0) close(h.fd);  // ours to close
    } else {
      CHECK(st == HURRAY_E_UNSUPPORTED);
      CHECK(contains(err.message, "zeDriverGetIpcProperties"));
    }
    void *ev = p.record(dev, nullptr);
    const hurray_status es = p.b->ipc_export_event(p.state, dev, ev, &h, &err);
    if (info.ipc & HURRAY_BACKEND_IPC_EVENTS) {
      CHECK(es == HURRAY_OK);
      if (es == HURRAY_OK && h.fd >= 0) close(h.fd);
    } else {
      CHECK(es == HURRAY_E_UNSUPPORTED);
    }
    REQUIRE(p.b->event_wait(p.state, dev, ev, 0, nullptr, &err) == HURRAY_OK);
    p.b->event_release(p.state, dev, ev);
    p.b->free(p.state, &a);
  }
}

TEST_CASE("level-zero: threads: alloc copy classify and free from several threads at once") {
  Probed p;
  const int failures = gpu_test::threads_round_trip(
      p, [&p](int32_t dev, uint8_t mc, const hurray_backend_allocation &a) {
        bool ok = true;
        int32_t cdev = -1;
        uint8_t cmc = 0xFF;
        if (p.b->classify(p.state, a.data, &cdev, &cmc, nullptr) != HURRAY_OK || cdev != dev ||
            cmc != mc)
          ok = false;
        void *ev = nullptr;
        uint64_t value = 0;
        if (p.b->event_record(p.state, dev, nullptr, &ev, &value, nullptr) != HURRAY_OK ||
            p.b->event_wait(p.state, dev, ev, 0, nullptr, nullptr) != HURRAY_OK)
          ok = false;
        if (ev != nullptr) p.b->event_release(p.state, dev, ev);
        return ok;
      });
  CHECK(failures == 0);
}

TEST_CASE("level-zero: shutdown: allocations and events still alive are freed with the state") {
  Probed p;
  gpu_test::leave_allocations(p);
  (void)p.record(0, nullptr);  // never released: shutdown() destroys it
}
