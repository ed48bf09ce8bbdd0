// What the tests of the device plugins (CUDA, HIP, OpenCL, Level Zero,
// WebGPU) share: loading a plugin as libhurray's loader does (dlopen, then
// its one entry symbol), a probed plugin that skips the test (exit code 77,
// the reason printed) when the machine has no device, one probe's answer,
// vendor functions looked up in a plugin's library handle, the checks of an
// entry table, and the test bodies that are the same for every plugin
// (probing in a child process, several threads at once), which each
// plugin's tests call from test cases named after it.
// Header-only, for Catch2 test programs.
#pragma once

#include <dlfcn.h>
#include <unistd.h>
#include <hurray_backend.h>

#include "../../src/backends/class_name.h"
#include "../../src/backends/kit/library.h"

#include <catch2/catch.hpp>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace gpu_test {

constexpr int kSkipCode = 77;
constexpr uint32_t kAlignments[] = {64, 256, 4096, 65536};

inline bool is_aligned(const void *p, uint64_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0; }
inline bool is_pow2(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }
inline bool contains(const std::string &s, const char *part) {
  return s.find(part) != std::string::npos;
}

// The plugin's table; the plugin stays loaded for the whole process.
inline const hurray_backend_v1 *load_plugin(const char *path) {
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) FAIL("dlopen " << path << ": " << dlerror());
  auto entry =
      reinterpret_cast<hurray_backend_entry_fn>(dlsym(handle, HURRAY_BACKEND_ENTRY_SYMBOL));
  REQUIRE(entry != nullptr);
  const hurray_backend_v1 *table = entry();
  REQUIRE(table != nullptr);
  return table;
}

// Print why and leave with 77, which CTest reports as skipped (never passed).
[[noreturn]] inline void skip(const char *what, const char *why) {
  std::printf("SKIPPED: %s: %s\n", what, why);
  std::fflush(stdout);
  std::exit(kSkipCode);
}

using hurray::plugin::class_name;

// A probed plugin. Without a device the test is skipped, printing
// no_device and probe's reason; where no_device is NULL it fails instead.
struct Probed {
  const hurray_backend_v1 *b;
  void *state = nullptr;

  Probed(const char *path, const char *no_device) : b(load_plugin(path)) {
    hurray_error err{};
    const hurray_status st = b->probe(&state, &err);
    if (st == HURRAY_E_DEVICE_UNAVAILABLE && no_device != nullptr) skip(no_device, err.message);
    INFO("probe: " << err.message);
    REQUIRE(st == HURRAY_OK);
    REQUIRE(state != nullptr);
  }
  ~Probed() { b->shutdown(state); }
  Probed(const Probed &) = delete;
  Probed &operator=(const Probed &) = delete;

  int32_t count() const { return b->device_count(state); }
  hurray_backend_device_info info(int32_t dev) const { return query(b->device_info, dev); }
  hurray_backend_native native(int32_t dev) const { return query(b->native, dev); }
  // What a per-device entry (device_info, native) answers; it must succeed.
  template <class Out>
  Out query(hurray_status (*entry)(void *, int32_t, Out *, hurray_error *), int32_t dev) const {
    Out out{};
    hurray_error err{};
    const hurray_status st = entry(state, dev, &out, &err);
    INFO(err.message);
    REQUIRE(st == HURRAY_OK);
    return out;
  }
  hurray_backend_allocation alloc(int32_t dev, uint8_t mc, uint64_t size, uint32_t align,
                                  uint32_t flags = 0) const {
    hurray_backend_allocation a{};
    hurray_error err{};
    const hurray_status st = b->alloc(state, dev, mc, size, align, flags, &a, &err);
    INFO(class_name(mc) << " " << size << " bytes aligned to " << align << ": " << err.message);
    REQUIRE(st == HURRAY_OK);
    return a;
  }
  // The memory classes device dev serves, in order.
  std::vector<uint8_t> classes(int32_t dev) const {
    std::vector<uint8_t> out;
    const uint32_t mask = info(dev).memory_classes;
    for (uint8_t mc = 0; mc < 32; ++mc)
      if (mask & (1u << mc)) out.push_back(mc);
    return out;
  }
  // An event recorded on stream (NULL: the plugin's own); binary, value 0.
  void *record(int32_t dev, void *stream) const {
    void *ev = nullptr;
    uint64_t value = 99;
    hurray_error err{};
    const hurray_status st = b->event_record(state, dev, stream, &ev, &value, &err);
    INFO(err.message);
    REQUIRE(st == HURRAY_OK);
    REQUIRE(ev != nullptr);
    CHECK(value == 0);
    return ev;
  }
};

// Frees an allocation when the test leaves its scope, passed or not.
struct AllocGuard {
  const Probed &p;
  hurray_backend_allocation a;
  ~AllocGuard() { p.b->free(p.state, &a); }
};

// A release_after done that counts its calls into the int at user.
inline void count_call(void *user) { ++*static_cast<int *>(user); }

inline bool starts_with(const std::string &s, const std::string &prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// Probe once and return the status; *message gets the error text. A failed
// probe leaves no state and fills the whole error: its status, no rule,
// ERROR, no buffer index or byte offset.
inline hurray_status probe_once(const hurray_backend_v1 *b, std::string *message) {
  void *state = nullptr;
  hurray_error err;
  std::memset(&err, 0x55, sizeof err);
  const hurray_status st = b->probe(&state, &err);
  if (st == HURRAY_OK) {
    REQUIRE(state != nullptr);
    b->shutdown(state);
    message->clear();
  } else {
    CHECK(state == nullptr);
    CHECK(err.status == st);
    CHECK(err.rule == HURRAY_RULE_NONE);
    CHECK(err.severity == HURRAY_SEVERITY_ERROR);
    CHECK(err.buffer_index == -1);
    CHECK(err.byte_offset == -1);
    *message = err.message;
  }
  return st;
}

// What every plugin's table holds: its version, size, tag and name, the
// entries every plugin fills, the reserved fields zero.
inline void check_table(const hurray_backend_v1 *b, uint8_t tag, const char *name) {
  CHECK(b->api_version == HURRAY_BACKEND_API_VERSION);
  CHECK(b->size == sizeof(hurray_backend_v1));
  CHECK(b->device_tag == tag);
  CHECK(std::string(b->name) == name);
  const std::pair<const char *, bool> entries[] = {
      {"probe", b->probe != nullptr},
      {"shutdown", b->shutdown != nullptr},
      {"device_count", b->device_count != nullptr},
      {"device_info", b->device_info != nullptr},
      {"alloc", b->alloc != nullptr},
      {"free", b->free != nullptr},
      {"copy_to_host", b->copy_to_host != nullptr},
      {"copy_from_host", b->copy_from_host != nullptr},
      {"classify", b->classify != nullptr},
      {"event_record", b->event_record != nullptr},
      {"event_wait", b->event_wait != nullptr},
      {"event_release", b->event_release != nullptr},
      {"native", b->native != nullptr},
  };
  for (const auto &[entry, set] : entries) {
    INFO(entry << " is set");
    CHECK(set);
  }
  for (void *r : b->reserved) CHECK(r == nullptr);
  for (uint8_t r : b->reserved0) CHECK(r == 0);
}

// The four IPC entries: all set (filled) or all NULL.
inline void check_ipc_entries(const hurray_backend_v1 *b, bool filled) {
  CHECK((b->ipc_export_memory != nullptr) == filled);
  CHECK((b->ipc_import_memory != nullptr) == filled);
  CHECK((b->ipc_export_event != nullptr) == filled);
  CHECK((b->ipc_import_event != nullptr) == filled);
}

// The table of a plugin that fills every entry (CUDA, HIP, Level Zero):
// check_table, every entry set; before probe nothing works and nothing
// crashes, and release_after calls no done on its error.
inline void check_full_table(const hurray_backend_v1 *b, uint8_t tag, const char *name) {
  check_table(b, tag, name);
  check_ipc_entries(b, true);
  CHECK(b->device_identity != nullptr);
  CHECK(b->release_after != nullptr);
  CHECK(b->device_count(nullptr) == 0);
  hurray_error err{};
  hurray_backend_allocation a{};
  CHECK(b->alloc(nullptr, 0, 0, 64, 64, 0, &a, &err) == HURRAY_E_INVALID_ARGUMENT);
  int calls = 0;
  if (b->release_after != nullptr)
    CHECK(b->release_after(nullptr, 0, nullptr, nullptr, 0, count_call, &calls, &err) ==
          HURRAY_E_INVALID_ARGUMENT);
  CHECK(calls == 0);  // never on an error
  b->shutdown(nullptr);
}

inline std::vector<unsigned char> pattern(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>((i * 131 + seed) ^ (i >> 9));
  return v;
}

// Set an environment variable for the life of the object, then restore it.
struct ScopedEnv {
  std::string name;
  bool had = false;
  std::string old;
  ScopedEnv(const char *n, const char *value) : name(n) {
    if (const char *v = std::getenv(n)) {
      had = true;
      old = v;
    }
    if (value != nullptr)
      setenv(n, value, 1);
    else
      unsetenv(n);
  }
  ~ScopedEnv() {
    if (had)
      setenv(name.c_str(), old.c_str(), 1);
    else
      unsetenv(name.c_str());
  }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;
};

// One vendor function, looked up by dlsym in a library handle (a plugin's
// native handle); a missing one fails the test.
inline void *require_library(void *lib) {
  REQUIRE(lib != nullptr);
  return lib;
}
template <class Fn>
Fn symbol(void *lib, const char *name) {
  auto fn = reinterpret_cast<Fn>(dlsym(lib, name));
  INFO("dlsym " << name);
  REQUIRE(fn != nullptr);
  return fn;
}

// The vendor functions a test calls, members of a struct named as the vendor
// names them and listed in a table of kit::required<&Fns::name>
// (src/backends/kit/library.h), looked up by dlsym in lib into *fns: a
// missing required one fails the test, a missing optional one stays nullptr.
template <class Fns, std::size_t N>
void load_symbols(void *lib, const hurray::kit::Symbol<Fns> (&table)[N], Fns *fns) {
  require_library(lib);
  for (const hurray::kit::Symbol<Fns> &fn : table)
    fn.store(fns, fn.required ? symbol<hurray::kit::AnyFunction>(lib, fn.name)
                              : reinterpret_cast<hurray::kit::AnyFunction>(dlsym(lib, fn.name)));
}

// What a device reports, printed for the test's log.
inline void print_device(const char *plugin, int32_t dev, const hurray_backend_device_info &info) {
  std::printf("%s device %d: name \"%s\", memory_classes 0x%x, ipc 0x%x, min_alignment %u\n"
              "  detail: \"%s\"\n",
              plugin, dev, info.name, info.memory_classes, info.ipc, info.min_alignment,
              info.detail);
  std::fflush(stdout);
}

// ---- test bodies the same for every plugin ---------------------------------

// The start of "<plugin>: probe: every device is described ...": at least
// one device; each one's info printed, with a name and STANDARD memory, and
// `more` checks the rest; device_info refuses ordinals count and -1.
inline void describe_devices(
    const Probed &p, const char *plugin,
    const std::function<void(int32_t dev, const hurray_backend_device_info &)> &more) {
  const int32_t n = p.count();
  REQUIRE(n >= 1);
  for (int32_t dev = 0; dev < n; ++dev) {
    const hurray_backend_device_info info = p.info(dev);
    print_device(plugin, dev, info);
    CHECK(std::strlen(info.name) > 0);
    CHECK((info.memory_classes & (1u << HURRAY_MEMORY_STANDARD)) != 0);
    more(dev, info);
  }
  hurray_backend_device_info info{};
  hurray_error err{};
  CHECK(p.b->device_info(p.state, n, &info, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(p.b->device_info(p.state, -1, &info, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
}

// The body of "<plugin>: child: probe and print the result" (hidden), which
// probe_in_child runs: probe once and print "probe-result status=N message=M".
inline void print_probe_result(const hurray_backend_v1 *b) {
  void *state = nullptr;
  hurray_error err{};
  const hurray_status st = b->probe(&state, &err);
  std::printf("probe-result status=%d message=%s\n", static_cast<int>(st),
              st == HURRAY_OK ? "" : err.message);
  std::fflush(stdout);
  if (st == HURRAY_OK) b->shutdown(state);
}

// What a child of this program printed, and its probe-result line.
struct ChildProbe {
  int rc = -1;
  std::string output;
  std::string line;
};

// Run the test case `child_test` (print_probe_result) in a child of this
// program, its command line prefixed by env (variables, or "env -u NAME ...").
inline ChildProbe probe_in_child(const std::string &env, const char *child_test) {
  char exe[4096] = "";
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  REQUIRE(len > 0);
  exe[len] = '\0';
  const std::string cmd = env + "'" + exe + "' '" + child_test + "' 2>&1";
  FILE *child = popen(cmd.c_str(), "r");
  REQUIRE(child != nullptr);
  ChildProbe r;
  char buf[512];
  while (std::fgets(buf, sizeof buf, child) != nullptr) r.output += buf;
  r.rc = pclose(child);
  const size_t at = r.output.find("probe-result status=");
  if (at != std::string::npos) r.line = r.output.substr(at, r.output.find('\n', at) - at);
  return r;
}

// A child's probe without a driver: it exited 0, printed its result, and the
// status is DEVICE_UNAVAILABLE with the loader's answer (message, where
// `loader` loads here) or dlerror's text naming `loader`.
inline void check_child_unavailable(const ChildProbe &r, const char *loader, const char *message) {
  INFO(r.output);
  CHECK(r.rc == 0);
  REQUIRE(!r.line.empty());
  std::printf("%s\n", r.line.c_str());
  CHECK(contains(r.line, "status=10 "));  // HURRAY_E_DEVICE_UNAVAILABLE
  void *lib = dlopen(loader, RTLD_NOW | RTLD_LOCAL);
  if (lib != nullptr) {
    CHECK(contains(r.line, message));
    dlclose(lib);
  } else {
    CHECK(contains(r.line, loader));  // dlerror's text
  }
}

// 4 threads of 40 rounds each: allocate 64 KiB of a class the device serves,
// copy 256 bytes in and out at 1024, `more` (what else the plugin checks:
// classify, events; false is a failure), free. Returns the failures; Catch's
// macros stay on the calling thread.
inline int threads_round_trip(
    const Probed &p,
    const std::function<bool(int32_t dev, uint8_t mc, const hurray_backend_allocation &)> &more) {
  constexpr int kThreads = 4, kRounds = 40;
  std::vector<std::vector<uint8_t>> served;
  for (int32_t dev = 0; dev < p.count(); ++dev) served.push_back(p.classes(dev));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        const int32_t dev = (t + r) % p.count();
        const std::vector<uint8_t> &classes = served[static_cast<size_t>(dev)];
        const uint8_t mc = classes[static_cast<size_t>(r) % classes.size()];
        hurray_backend_allocation a{};
        if (p.b->alloc(p.state, dev, mc, 65536, 4096, 0, &a, nullptr) != HURRAY_OK) {
          ++failures;
          continue;
        }
        uint8_t in[256], out[256];
        std::memset(in, t * 16 + r, sizeof in);
        if (p.b->copy_from_host(p.state, &a, 1024, in, sizeof in, nullptr) != HURRAY_OK ||
            p.b->copy_to_host(p.state, &a, 1024, out, sizeof out, nullptr) != HURRAY_OK ||
            std::memcmp(in, out, sizeof in) != 0)
          ++failures;
        if (!more(dev, mc, a)) ++failures;
        p.b->free(p.state, &a);
      }
    });
  }
  for (std::thread &th : threads) th.join();
  return failures.load();
}

// Allocations (one of each served class of device 0) left for shutdown().
inline void leave_allocations(const Probed &p) {
  for (uint8_t mc : p.classes(0)) {
    hurray_backend_allocation a = p.alloc(0, mc, 8192, 4096);
    CHECK(a.plugin_data != nullptr);  // left for shutdown()
  }
}

}  // namespace gpu_test
