// The plugin kit's exception barrier and checks, through a plugin built on
// the kit whose entries throw on demand (throwing_plugin.cpp): every entry
// turns std::bad_alloc into HURRAY_E_OUT_OF_MEMORY and anything else into
// HURRAY_E_INTERNAL, with "<plugin>: <entry>: ..." in err, and the process
// lives on. Without the barrier each throw below ends the test process.
#include <dlfcn.h>
#include <hurray_backend.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <string>

#include "kit_test_modes.h"

using hurray::kit_test::Mode;

namespace {

const hurray_backend_v1 &table() {
  static const hurray_backend_v1 *t = [] {
    void *lib = dlopen(HURRAY_KIT_TEST_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    INFO("dlopen " HURRAY_KIT_TEST_PLUGIN ": " << (lib ? "ok" : dlerror()));
    REQUIRE(lib != nullptr);
    auto entry = reinterpret_cast<hurray_backend_entry_fn>(dlsym(lib, HURRAY_BACKEND_ENTRY_SYMBOL));
    REQUIRE(entry != nullptr);
    return entry();
  }();
  return *t;
}

bool contains(const char *s, const char *part) { return std::strstr(s, part) != nullptr; }

// Every status entry of the table called with `state`: each returns `want`
// and names itself; err NULL is allowed too.
void every_status_entry(void *state, hurray_status want, const char *what) {
  const hurray_backend_v1 &t = table();
  hurray_backend_allocation a{};
  a.byte_size = 64;
  hurray_backend_ipc_handle h{};
  hurray_backend_device_info info{};
  hurray_backend_native nat{};
  char host[64];
  void *event = nullptr;
  uint64_t value = 0;
  int32_t dev = 0;
  uint8_t mc = 0;
  void *probe_state = state;
  // Calls one entry (run(err)) with an error and with err NULL, which is
  // allowed: the barrier fills nothing then. Both return want; the first
  // names the entry and `what`.
  const auto call = [&](const char *entry, const auto &run) {
    hurray_error err{};
    INFO(entry << " (" << what << ")");
    CHECK(run(&err) == want);
    CHECK(err.status == want);
    CHECK(contains(err.message, ("kit-test: " + std::string(entry) + ": ").c_str()));
    CHECK(contains(err.message, what));
    CHECK(run(nullptr) == want);
  };
  call("probe", [&](hurray_error *e) { return t.probe(&probe_state, e); });
  call("device_info", [&](hurray_error *e) { return t.device_info(state, 0, &info, e); });
  call("alloc", [&](hurray_error *e) {
    return t.alloc(state, 0, HURRAY_MEMORY_STANDARD, 64, 64, 0, &a, e);
  });
  call("copy_to_host", [&](hurray_error *e) { return t.copy_to_host(state, &a, 0, host, 8, e); });
  call("copy_from_host",
       [&](hurray_error *e) { return t.copy_from_host(state, &a, 0, host, 8, e); });
  call("classify", [&](hurray_error *e) { return t.classify(state, host, &dev, &mc, e); });
  call("event_record",
       [&](hurray_error *e) { return t.event_record(state, 0, nullptr, &event, &value, e); });
  call("event_wait", [&](hurray_error *e) { return t.event_wait(state, 0, event, 0, nullptr, e); });
  call("ipc_export_memory", [&](hurray_error *e) { return t.ipc_export_memory(state, &a, &h, e); });
  call("ipc_import_memory",
       [&](hurray_error *e) { return t.ipc_import_memory(state, 0, &h, 0, &a, e); });
  call("ipc_export_event",
       [&](hurray_error *e) { return t.ipc_export_event(state, 0, event, &h, e); });
  call("ipc_import_event",
       [&](hurray_error *e) { return t.ipc_import_event(state, 0, &h, &event, e); });
  call("native", [&](hurray_error *e) { return t.native(state, 0, &nat, e); });
}

}  // namespace

TEST_CASE("kit: the table of a kit plugin: version, size, name and every entry") {
  const hurray_backend_v1 &t = table();
  CHECK(t.api_version == HURRAY_BACKEND_API_VERSION);
  CHECK(t.size == sizeof(hurray_backend_v1));
  CHECK(std::string(t.name) == "kit-test");
  CHECK(t.device_tag == hurray::kit_test::kDeviceTag);
  void *const *fns = reinterpret_cast<void *const *>(&t.probe);
  for (int i = 0; i < 17; ++i) CHECK(fns[i] != nullptr);
}

TEST_CASE("kit: std::bad_alloc thrown in any entry is HURRAY_E_OUT_OF_MEMORY") {
  Mode m = Mode::kBadAlloc;
  every_status_entry(&m, HURRAY_E_OUT_OF_MEMORY, "out of host memory (std::bad_alloc)");
}

TEST_CASE("kit: any other exception thrown in an entry is HURRAY_E_INTERNAL") {
  Mode m = Mode::kRuntimeError;
  every_status_entry(&m, HURRAY_E_INTERNAL, "unexpected exception: the test plugin threw");
  m = Mode::kInt;
  every_status_entry(&m, HURRAY_E_INTERNAL, "unexpected exception of unknown type");
}

TEST_CASE("kit: entries without a status swallow what they throw") {
  const hurray_backend_v1 &t = table();
  for (Mode m : {Mode::kBadAlloc, Mode::kRuntimeError, Mode::kInt}) {
    hurray_backend_allocation a{};
    CHECK(t.device_count(&m) == 0);  // no device rather than a crash
    t.free(&m, &a);
    t.event_release(&m, 0, nullptr);
    t.shutdown(&m);
  }
  Mode normal = Mode::kNormal;
  CHECK(t.device_count(&normal) == 1);
}

TEST_CASE("kit: the state and ordinal checks: INVALID_ARGUMENT, DEVICE_UNAVAILABLE") {
  const hurray_backend_v1 &t = table();
  Mode m = Mode::kNormal;
  hurray_backend_device_info info{};
  hurray_error err{};
  CHECK(t.device_info(&m, 0, &info, &err) == HURRAY_OK);
  CHECK(std::string(info.name) == "kit-test device 0");
  CHECK(t.device_info(nullptr, 0, &info, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(std::string(err.message) == "kit-test: the plugin state is NULL (probe first)");
  for (int32_t bad : {1, -1, INT32_MAX}) {
    CHECK(t.device_info(&m, bad, &info, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
    CHECK(err.status == HURRAY_E_DEVICE_UNAVAILABLE);
    CHECK(std::string(err.message) == "kit-test: there is no device " + std::to_string(bad) +
                                          ": it does not exist (1 found)");
  }
}

TEST_CASE("kit: the copy range check") {
  const hurray_backend_v1 &t = table();
  Mode m = Mode::kNormal;
  int owner = 0;
  hurray_backend_allocation a{};
  a.byte_size = 64;
  a.plugin_data = &owner;
  char host[128];
  hurray_error err{};
  CHECK(t.copy_to_host(&m, &a, 0, host, 64, &err) == HURRAY_OK);
  CHECK(t.copy_to_host(&m, &a, 64, host, 0, &err) == HURRAY_OK);  // empty, at the end
  CHECK(t.copy_to_host(&m, &a, 63, nullptr, 0, &err) == HURRAY_OK);  // nothing to copy
  CHECK(t.copy_to_host(&m, &a, 1, host, 64, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(std::string(err.message) ==
        "kit-test: copy_to_host: 64 bytes at offset 1 do not fit in the 64-byte allocation");
  CHECK(t.copy_from_host(&m, &a, 65, host, 0, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(t.copy_from_host(&m, &a, UINT64_MAX, host, 2, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(t.copy_from_host(&m, &a, 8, host, UINT64_MAX, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(t.copy_from_host(&m, &a, 0, nullptr, 1, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(std::string(err.message) == "kit-test: copy_from_host: the host pointer is NULL");
  CHECK(t.copy_from_host(&m, nullptr, 0, host, 1, &err) == HURRAY_E_INVALID_ARGUMENT);
  a.plugin_data = nullptr;
  CHECK(t.copy_to_host(&m, &a, 0, host, 1, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(contains(err.message, "not made by this plugin"));
}
