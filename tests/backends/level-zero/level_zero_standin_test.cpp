// Tests of libhurray-level-zero.so through its function table only, on the
// stand-in: "level-zero (stand-in: loader null driver): ..." (hidden, tag
// [standin]), run only by CTest with ZE_ENABLE_NULL_DRIVER=1 and the null
// driver built by scripts/build-ze-null.sh on LD_LIBRARY_PATH, once plainly
// and once more under the loader's parameter validation layer. The loader's
// null driver answers success with dummy handles and copies nothing, so these
// check the plugin's call sequence and error handling, never data; the
// pointers it returns are never dereferenced.
#include "level_zero_test_support.h"

using namespace l0test;

// ===========================================================================
// Stand-in: the Level Zero loader's null driver (hidden)
// ===========================================================================

TEST_CASE("level-zero (stand-in: loader null driver): probe finds the null driver's one device, described, with native handles",
          "[.][standin]") {
  Probed p(true);
  const hurray_backend_device_info info = p.info(0);
  std::printf("stand-in device 0: name \"%s\", memory_classes 0x%x, ipc 0x%x, min_alignment %u\n"
              "  detail: \"%s\"\n",
              info.name, info.memory_classes, info.ipc, info.min_alignment, info.detail);
  std::fflush(stdout);
  // The null driver reports no shared-allocation access, one device (no
  // peer) and no IPC property: STANDARD and HOST_PINNED only, no IPC.
  CHECK(info.memory_classes ==
        ((1u << HURRAY_MEMORY_STANDARD) | (1u << HURRAY_MEMORY_HOST_PINNED)));
  CHECK(info.ipc == 0);
  CHECK(info.min_alignment == HURRAY_MIN_ALIGNMENT);
  CHECK(contains(info.detail, "UNIFIED none"));
  CHECK(contains(info.detail, "PEER none"));
  CHECK(contains(info.detail, "IPC memory no, events no"));
  const hurray_backend_native nat = p.native(0);
  for (int i = 0; i < 5; ++i) CHECK(nat.handles[i] != nullptr);  // dummy handles, but set
  CHECK(nat.handles[5] == nullptr);  // queue group ordinal 0
  for (int i = 6; i < 8; ++i) CHECK(nat.handles[i] == nullptr);
  CHECK(dlsym(nat.handles[4], "zeInit") != nullptr);  // the loader the plugin opened
  hurray_error err{};
  hurray_backend_native none{};
  CHECK(p.b->native(p.state, 1, &none, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(p.b->native(p.state, 0, nullptr, &err) == HURRAY_E_INVALID_ARGUMENT);
}

TEST_CASE("level-zero (stand-in: loader null driver): alloc STANDARD and HOST_PINNED at 64..65536: aligned addresses, never touched",
          "[.][standin]") {
  Probed p(true);
  for (uint8_t mc : {HURRAY_MEMORY_STANDARD, HURRAY_MEMORY_HOST_PINNED}) {
    for (uint32_t align : kAlignments) {
      INFO(class_name(mc) << " aligned to " << align);
      // The null driver ignores the alignment it is given: the plugin checks
      // the pointer and places the buffer inside a larger allocation.
      hurray_backend_allocation a = p.alloc(0, static_cast<uint8_t>(mc), 65536 + 123, align);
      CHECK(a.byte_size == 65536 + 123);
      CHECK(a.alignment == align);
      CHECK(a.flags == 0);
      CHECK(a.device == 0);
      CHECK(a.memory_class == mc);
      REQUIRE(a.data != nullptr);
      CHECK(is_aligned(a.data, align));
      CHECK(a.host == (mc == HURRAY_MEMORY_STANDARD ? nullptr : a.data));
      CHECK(a.plugin_data != nullptr);
      p.b->free(p.state, &a);
      CHECK(a.plugin_data == nullptr);
      CHECK(a.data == nullptr);
    }
  }
  // 0 means 64; an empty buffer has no memory.
  hurray_backend_allocation a = p.alloc(0, HURRAY_MEMORY_STANDARD, 100, 0);
  CHECK(a.alignment == HURRAY_MIN_ALIGNMENT);
  CHECK(is_aligned(a.data, HURRAY_MIN_ALIGNMENT));
  p.b->free(p.state, &a);
  hurray_backend_allocation e = p.alloc(0, HURRAY_MEMORY_HOST_PINNED, 0, 4096);
  CHECK(e.data == nullptr);
  CHECK(e.byte_size == 0);
  p.b->free(p.state, &e);
}

TEST_CASE("level-zero (stand-in: loader null driver): refused allocations name their reason", "[.][standin]") {
  Probed p(true);
  hurray_backend_allocation a{};
  hurray_error err{};
  CHECK(p.b->alloc(p.state, 0, HURRAY_MEMORY_UNIFIED, 4096, 4096, 0, &a, &err) ==
        HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(contains(err.message, "UNIFIED"));
  CHECK(contains(err.message, "sharedSingleDeviceAllocCapabilities 0x0"));
  CHECK(p.b->alloc(p.state, 0, HURRAY_MEMORY_PEER, 4096, 4096, 0, &a, &err) ==
        HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(contains(err.message, "PEER"));
  CHECK(contains(err.message, "no peer device"));
  CHECK(p.b->alloc(p.state, 0, 0x04, 4096, 4096, 0, &a, &err) == HURRAY_E_MEMORY_CLASS);
  CHECK(p.b->alloc(p.state, 0, 0xF0, 4096, 4096, 0, &a, &err) == HURRAY_E_MEMORY_CLASS);
  CHECK(p.b->alloc(p.state, 0, HURRAY_MEMORY_STANDARD, 4096, 4096, HURRAY_ALLOC_SHAREABLE, &a,
                   &err) == HURRAY_E_UNSUPPORTED);
  CHECK(contains(err.message, "ZE_IPC_PROPERTY_FLAG_MEMORY"));
  CHECK(p.b->alloc(p.state, 0, HURRAY_MEMORY_HOST_PINNED, 4096, 4096, HURRAY_ALLOC_SHAREABLE, &a,
                   &err) == HURRAY_E_UNSUPPORTED);
  CHECK(contains(err.message, "device allocations only"));
  CHECK(p.b->alloc(p.state, 0, HURRAY_MEMORY_STANDARD, 4096, 4096, 0x80, &a, &err) ==
        HURRAY_E_INVALID_ARGUMENT);
  CHECK(p.b->alloc(p.state, 0, HURRAY_MEMORY_STANDARD, 4096, 96, 0, &a, &err) ==
        HURRAY_E_INVALID_ARGUMENT);
  CHECK(p.b->alloc(p.state, 1, HURRAY_MEMORY_STANDARD, 4096, 4096, 0, &a, &err) ==
        HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(contains(err.message, "no device 1"));
  CHECK(p.b->alloc(p.state, 0, HURRAY_MEMORY_STANDARD, UINT64_MAX, 4096, 0, &a, &err) ==
        HURRAY_E_OUT_OF_MEMORY);
  CHECK(a.data == nullptr);
  CHECK(a.plugin_data == nullptr);
}

TEST_CASE("level-zero (stand-in: loader null driver): copies run on the plugin's list and check their range", "[.][standin]") {
  Probed p(true);
  for (uint8_t mc : {HURRAY_MEMORY_STANDARD, HURRAY_MEMORY_HOST_PINNED}) {
    INFO(class_name(mc));
    hurray_backend_allocation a = p.alloc(0, static_cast<uint8_t>(mc), 1 << 16, 4096);
    std::vector<uint8_t> host(1 << 16, 7);
    hurray_error err{};
    // Barrier, copy with the copy event, host synchronize, reset: all succeed
    // (the null driver copies nothing, so no data is compared).
    CHECK(p.b->copy_from_host(p.state, &a, 0, host.data(), host.size(), &err) == HURRAY_OK);
    CHECK(p.b->copy_to_host(p.state, &a, 0, host.data(), host.size(), &err) == HURRAY_OK);
    CHECK(p.b->copy_to_host(p.state, &a, 100, host.data(), 50, &err) == HURRAY_OK);
    CHECK(p.b->copy_to_host(p.state, &a, 0, nullptr, 0, &err) == HURRAY_OK);  // empty
    CHECK(p.b->copy_to_host(p.state, &a, (1 << 16) - 10, host.data(), 11, &err) ==
          HURRAY_E_INVALID_ARGUMENT);
    CHECK(contains(err.message, "do not fit"));
    CHECK(p.b->copy_from_host(p.state, &a, 0, nullptr, 10, &err) == HURRAY_E_INVALID_ARGUMENT);
    CHECK(p.b->copy_from_host(p.state, &a, UINT64_MAX, host.data(), 2, &err) ==
          HURRAY_E_INVALID_ARGUMENT);
    p.b->free(p.state, &a);
    CHECK(p.b->copy_to_host(p.state, &a, 0, host.data(), 1, &err) == HURRAY_E_INVALID_ARGUMENT);
  }
}

TEST_CASE("level-zero (stand-in: loader null driver): classify asks zeMemGetAllocProperties, which knows no pointer here",
          "[.][standin]") {
  Probed p(true);
  hurray_backend_allocation a = p.alloc(0, HURRAY_MEMORY_STANDARD, 4096, 4096);
  int32_t dev = -1;
  uint8_t mc = 0xFF;
  hurray_error err{};
  // The null driver leaves the properties as given: ZE_MEMORY_TYPE_UNKNOWN.
  CHECK(p.b->classify(p.state, a.data, &dev, &mc, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(starts_with(err.message, "[zeMemGetAllocProperties] ZE_MEMORY_TYPE_UNKNOWN: "));
  CHECK(dev == -1);
  CHECK(mc == 0xFF);
  CHECK(p.b->classify(p.state, nullptr, &dev, &mc, &err) == HURRAY_E_INVALID_ARGUMENT);
  p.b->free(p.state, &a);
}

TEST_CASE("level-zero (stand-in: loader null driver): events: record, wait on the host and on a list, release and reuse",
          "[.][standin]") {
  Probed p(true);
  const hurray_backend_native nat = p.native(0);
  hurray_error err{};
  // More than three pools' worth at once.
  std::vector<void *> events;
  for (int i = 0; i < 200; ++i) events.push_back(p.record(0, i % 2 ? nat.handles[3] : nullptr));
  CHECK(std::set<void *>(events.begin(), events.end()).size() == events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    CHECK(p.b->event_wait(p.state, 0, events[i], 0, i % 3 ? nullptr : nat.handles[3], &err) ==
          HURRAY_OK);
  }
  CHECK(p.b->event_wait(p.state, 0, events[0], 5, nullptr, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(contains(err.message, "binary"));
  CHECK(starts_with(err.message, "level-zero: event_wait: Level Zero events are binary"));
  CHECK(p.b->event_wait(p.state, 0, nullptr, 0, nullptr, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(p.b->event_wait(p.state, 3, events[0], 0, nullptr, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
  void *ev = nullptr;
  uint64_t value = 0;
  CHECK(p.b->event_record(p.state, 0, nullptr, nullptr, &value, &err) ==
        HURRAY_E_INVALID_ARGUMENT);
  CHECK(p.b->event_record(p.state, 0, nullptr, &ev, nullptr, &err) == HURRAY_E_INVALID_ARGUMENT);
  for (void *e : events) p.b->event_release(p.state, 0, e);
  // Released events are reset and lent again, not made anew.
  for (int i = 0; i < 70; ++i) {
    void *again = p.record(0, nullptr);
    CHECK(std::set<void *>(events.begin(), events.end()).count(again) == 1);
    p.b->event_release(p.state, 0, again);
  }
  // Releasing what the plugin did not lend is ignored.
  int not_an_event = 0;
  p.b->event_release(p.state, 0, &not_an_event);
}

namespace {
void count_done(void *user) { static_cast<std::atomic<int> *>(user)->fetch_add(1); }
}  // namespace

TEST_CASE("level-zero (stand-in: loader null driver): release_after calls done exactly once, later, from its waiter",
          "[.][standin]") {
  Probed p(true);
  REQUIRE(p.b->release_after != nullptr);
  const hurray_backend_native nat = p.native(0);
  hurray_error err{};
  constexpr int kN = 64;
  std::atomic<int> calls[kN];
  std::vector<void *> events;
  for (int i = 0; i < kN; ++i) {
    calls[i] = 0;
    void *ev = nullptr;
    void *stream = nullptr;
    if (i % 3 == 0) events.push_back(ev = p.record(0, nullptr));  // after an event
    else if (i % 3 == 1) stream = nat.handles[3];                    // after the plugin's list
    INFO(err.message);
    REQUIRE(p.b->release_after(p.state, 0, stream, ev, 0, count_done, &calls[i], &err) ==
            HURRAY_OK);
  }
  // A binary event with a value, or no done, is refused and never called.
  std::atomic<int> never{0};
  CHECK(p.b->release_after(p.state, 0, nullptr, events[0], 5, count_done, &never, &err) ==
        HURRAY_E_INVALID_ARGUMENT);
  CHECK(starts_with(err.message, "level-zero: release_after: Level Zero events are binary"));
  CHECK(p.b->release_after(p.state, 0, nullptr, nullptr, 0, nullptr, nullptr, &err) ==
        HURRAY_E_INVALID_ARGUMENT);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  auto all = [&] {
    for (auto &c : calls)
      if (c.load() == 0) return false;
    return true;
  };
  while (!all() && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (auto &c : calls) CHECK(c.load() == 1);
  CHECK(never.load() == 0);
  for (void *e : events) p.b->event_release(p.state, 0, e);
}

TEST_CASE("level-zero (stand-in: loader null driver): IPC is refused, as the null driver reports no IPC property",
          "[.][standin]") {
  Probed p(true);
  hurray_backend_allocation a = p.alloc(0, HURRAY_MEMORY_STANDARD, 4096, 4096);
  hurray_backend_ipc_handle h{};
  hurray_error err{};
  CHECK(p.b->ipc_export_memory(p.state, &a, &h, &err) == HURRAY_E_UNSUPPORTED);
  CHECK(contains(err.message, "zeDriverGetIpcProperties"));
  void *ev = p.record(0, nullptr);
  CHECK(p.b->ipc_export_event(p.state, 0, ev, &h, &err) == HURRAY_E_UNSUPPORTED);
  CHECK(contains(err.message, "ZE_IPC_PROPERTY_FLAG_EVENT_POOL"));
  p.b->event_release(p.state, 0, ev);
  hurray_backend_allocation imported{};
  h.kind = 1234;
  h.fd = -1;
  h.byte_size = 4096;
  CHECK(p.b->ipc_import_memory(p.state, 0, &h, HURRAY_MEMORY_STANDARD, &imported, &err) ==
        HURRAY_E_INVALID_ARGUMENT);
  CHECK(contains(err.message, "not a Level Zero memory handle"));
  CHECK(contains(err.message, "its kind is 0x000004d2, this plugin's is 'ZEM1'"));
  h.kind = fourcc('Z', 'E', 'E', '1');  // an event handle is no memory handle
  CHECK(p.b->ipc_import_memory(p.state, 0, &h, HURRAY_MEMORY_STANDARD, &imported, &err) ==
        HURRAY_E_INVALID_ARGUMENT);
  CHECK(contains(err.message, "its kind is 'ZEE1'"));
  h.kind = fourcc('Z', 'E', 'M', '1');  // the plugin's memory kind
  CHECK(p.b->ipc_import_memory(p.state, 0, &h, HURRAY_MEMORY_HOST_PINNED, &imported, &err) ==
        HURRAY_E_UNSUPPORTED);
  CHECK(p.b->ipc_import_memory(p.state, 0, &h, HURRAY_MEMORY_STANDARD, &imported, &err) ==
        HURRAY_E_UNSUPPORTED);
  CHECK(contains(err.message, "ZE_IPC_PROPERTY_FLAG_MEMORY"));
  h.kind = fourcc('Z', 'E', 'E', '1');  // the plugin's event kind
  void *imported_event = nullptr;
  CHECK(p.b->ipc_import_event(p.state, 0, &h, &imported_event, &err) == HURRAY_E_UNSUPPORTED);
  CHECK(imported_event == nullptr);
  p.b->free(p.state, &a);
}

TEST_CASE("level-zero (stand-in: loader null driver): threads: alloc copy record wait release and free at once", "[.][standin]") {
  Probed p(true);
  constexpr int kThreads = 4, kRounds = 50;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        const uint8_t mc = (t + r) % 2 ? HURRAY_MEMORY_STANDARD : HURRAY_MEMORY_HOST_PINNED;
        hurray_backend_allocation a{};
        if (p.b->alloc(p.state, 0, mc, 65536, 4096, 0, &a, nullptr) != HURRAY_OK ||
            !is_aligned(a.data, 4096)) {
          ++failures;
          continue;
        }
        uint8_t buf[256] = {};
        if (p.b->copy_from_host(p.state, &a, 1024, buf, sizeof buf, nullptr) != HURRAY_OK ||
            p.b->copy_to_host(p.state, &a, 1024, buf, sizeof buf, nullptr) != HURRAY_OK)
          ++failures;
        void *ev = nullptr;
        uint64_t value = 0;
        if (p.b->event_record(p.state, 0, nullptr, &ev, &value, nullptr) != HURRAY_OK ||
            p.b->event_wait(p.state, 0, ev, 0, nullptr, nullptr) != HURRAY_OK)
          ++failures;
        if (ev != nullptr) p.b->event_release(p.state, 0, ev);
        p.b->free(p.state, &a);
      }
    });
  }
  for (std::thread &th : threads) th.join();
  CHECK(failures.load() == 0);
}

TEST_CASE("level-zero (stand-in: loader null driver): shutdown frees allocations and events still alive", "[.][standin]") {
  Probed p(true);
  for (uint8_t mc : {HURRAY_MEMORY_STANDARD, HURRAY_MEMORY_HOST_PINNED}) {
    hurray_backend_allocation a = p.alloc(0, static_cast<uint8_t>(mc), 8192, 4096);
    CHECK(a.plugin_data != nullptr);  // left for shutdown()
  }
  hurray_backend_allocation empty = p.alloc(0, HURRAY_MEMORY_STANDARD, 0, 64);
  CHECK(empty.plugin_data != nullptr);  // a record without memory, freed too
  for (int i = 0; i < 70; ++i) (void)p.record(0, nullptr);  // never released
}

// Registered only in the run with the loader's parameter validation layer:
// proves that the layer is loaded, so the other stand-in tests of that run
// had every call of the plugin checked by it.
TEST_CASE("level-zero (stand-in: loader null driver): the parameter validation layer is active", "[.][standin-validation]") {
  Probed p(true);
  const hurray_backend_native nat = p.native(0);
  const Ze ze(nat.handles[4]);
  void *ptr = nullptr;
  // A NULL descriptor: the layer answers before the null driver does.
  CHECK(ze.zeMemAllocDevice(static_cast<ze_context_handle_t>(nat.handles[2]), nullptr, 64, 64,
                            static_cast<ze_device_handle_t>(nat.handles[1]), &ptr) ==
        ZE_RESULT_ERROR_INVALID_NULL_POINTER);
  CHECK(ptr == nullptr);
}
