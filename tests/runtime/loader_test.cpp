// The plugin loader, run in processes whose environment each test case sets
// (see tests/CMakeLists.txt): discovery through HURRAY_BACKEND_PATH, the
// HURRAY_BACKENDS restriction, refusal of bad plugins with the reason, and
// BP-PUT-DEVICE (an absent device is an error, never another device), and
// the known plugin names (hurray_known_plugins.h) against the plugins built.
#include <catch2/catch.hpp>
#include <hurray.h>
#include <hurray_backend.h>

#include <dirent.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "hurray_known_plugins.h"
#include "../common/proc_maps.h"

namespace {

std::string report() {
  std::string r(hurray_backend_report(nullptr, nullptr, 0) + 1, '\0');
  hurray_backend_report(nullptr, r.data(), r.size());
  r.pop_back();
  return r;
}

using hurray_test::mapped;

// hurray_buffer_alloc of 64 bytes on the example plugin's private tag 0xF0
// in ctx (nullptr: the default context).
hurray_status alloc_private(hurray_context *ctx, hurray_error *err) {
  hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
  a.byte_size = 64;
  a.device_tag = 0xF0;
  hurray_buffer *b = nullptr;
  const hurray_status st = hurray_buffer_alloc(ctx, &a, &b, err);
  if (st == HURRAY_OK) hurray_buffer_unref(b);
  return st;
}

struct PrivateContext {
  hurray_context *ctx = nullptr;
  PrivateContext() {
    hurray_context_create(&ctx, nullptr);
    hurray_policy *p;
    hurray_policy_create(&p, nullptr);
    hurray_policy_allow_private_tag(p, 0xF0, 1, nullptr);
    hurray_context_set_policy(ctx, p, nullptr);
    hurray_policy_destroy(p);
  }
  ~PrivateContext() { hurray_context_destroy(ctx); }
};

}  // namespace

TEST_CASE("a private plugin found through HURRAY_BACKEND_PATH serves its tag", "[loader][path]") {
  PrivateContext pc;
  int32_t n = 0;
  hurray_error err;
  REQUIRE(hurray_device_count(pc.ctx, 0xF0, &n, &err) == HURRAY_OK);
  CHECK(n == 1);
  hurray_backend_device_info info;
  REQUIRE(hurray_device_info(pc.ctx, 0xF0, 0, &info, &err) == HURRAY_OK);
  CHECK(std::string(info.name) == "example private device");
  CHECK(hurray_device_info(pc.ctx, 0xF0, 1, &info, &err) == HURRAY_E_DEVICE_UNAVAILABLE);

  // allocate, write, hand off with an event, the consumer waits and releases
  hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
  a.byte_size = 4096;
  a.alignment = 4096;
  a.device_tag = 0xF0;
  hurray_buffer *b;
  REQUIRE(hurray_buffer_alloc(pc.ctx, &a, &b, &err) == HURRAY_OK);
  std::memset(hurray_buffer_data(b), 0x42, 4096);
  hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
  REQUIRE(hurray_event_record(pc.ctx, 0xF0, 0, nullptr, &e, &err) == HURRAY_OK);
  CHECK(e.sync_mode == HURRAY_SYNC_EVENT);
  CHECK(e.sync_value == 1);
  hurray_handoff h;
  REQUIRE(hurray_buffer_export(b, &e, &h, &err) == HURRAY_OK);
  hurray_buffer_unref(b);
  hurray_policy *consumer;
  hurray_policy_create(&consumer, nullptr);
  hurray_policy_allow_private_tag(consumer, 0xF0, 1, nullptr);
  CHECK(hurray_handoff_check(&h, consumer, &err) == HURRAY_OK);
  CHECK(hurray_handoff_check(&h, nullptr, &err) == HURRAY_E_DEVICE_TAG);  // not agreed there
  hurray_policy_destroy(consumer);
  REQUIRE(hurray_handoff_acquire(pc.ctx, &h, nullptr, &err) == HURRAY_OK);
  CHECK(h.release_event == nullptr);  // waited, then released exactly once
  CHECK(static_cast<unsigned char *>(h.data)[4095] == 0x42);
  REQUIRE(hurray_handoff_release(&h, &err) == HURRAY_OK);

  const std::string r = report();
  INFO(r);
  CHECK(r.find("device_tag 0xF0") != std::string::npos);
  CHECK(r.find("example private device") != std::string::npos);
  CHECK(r.find("device_tag 0x00 CPU") != std::string::npos);
}

TEST_CASE("the default context refuses a private tag nobody agreed", "[loader][path]") {
  hurray_error err;
  CHECK(alloc_private(nullptr, &err) == HURRAY_E_DEVICE_TAG);
  CHECK(std::string(err.rule_id) == "BP-DEV-PRIVATE");
}

TEST_CASE("HURRAY_BACKENDS keeps a plugin from loading, and says so", "[loader][restrict]") {
  PrivateContext pc;
  int32_t n = -1;
  hurray_error err;
  CHECK(hurray_device_count(pc.ctx, 0xF0, &n, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(n == 0);
  CHECK(std::string(err.message).find("HURRAY_BACKENDS") != std::string::npos);
  CHECK(hurray_device_count(pc.ctx, HURRAY_DEVICE_CPU, &n, &err) == HURRAY_OK);  // built in
  CHECK(n == 1);
}

TEST_CASE("plugins with a wrong ABI are refused with the reason", "[loader][bad]") {
  const std::string r = report();
  INFO(r);
  CHECK(r.find("plugin ABI version 99") != std::string::npos);
  CHECK(r.find("hurray_backend_v1.size is 16, below 224") != std::string::npos);
  CHECK(r.find("no hurray_backend_entry symbol") != std::string::npos);
  CHECK(r.find("a required function of the table is NULL") != std::string::npos);
  int32_t n;
  hurray_error err;
  CHECK(hurray_device_count(nullptr, 0xF1, &n, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
}

TEST_CASE("a plugin whose probe fails makes its device unavailable, with the reason", "[loader][absent]") {
  PrivateContext pc;
  hurray_error err;
  CHECK(alloc_private(pc.ctx, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(std::string(err.message).find("the device is switched off") != std::string::npos);
}

TEST_CASE("BP-PUT-DEVICE: an absent device is an error, never another device", "[loader][none]") {
  hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
  a.byte_size = 4096;
  a.alignment = 4096;
  hurray_buffer *b;
  hurray_error err;
  for (uint8_t tag : {HURRAY_DEVICE_CUDA, HURRAY_DEVICE_ROCM, HURRAY_DEVICE_LEVEL_ZERO}) {
    a.device_tag = tag;
    CHECK(hurray_buffer_alloc(nullptr, &a, &b, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
    CHECK(std::string(err.message).find(hurray_device_tag_name(tag)) != std::string::npos);
  }
  a.device_tag = HURRAY_DEVICE_CPU;
  a.device_ordinal = 1;  // the host has one CPU device
  CHECK(hurray_buffer_alloc(nullptr, &a, &b, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(std::string(err.rule_id) == "BP-PUT-DEVICE");
}

TEST_CASE("no vendor runtime is loaded until its device is used", "[loader][lazy]") {
  hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
  a.byte_size = 4096;
  hurray_buffer *b;
  REQUIRE(hurray_buffer_alloc(nullptr, &a, &b, nullptr) == HURRAY_OK);  // CPU only
  hurray_buffer_unref(b);
  for (const char *lib : {"libvulkan", "libOpenCL", "libcuda", "libamdhip64", "libze_loader",
                          "libhurray-vulkan", "libhurray-opencl"})
    CHECK_FALSE(mapped(lib));
}

namespace {

struct Known {
  const char *name;
  uint8_t tag;
};
// The loader's list, from the same generated header (HURRAY_PLUGINS).
constexpr Known kKnown[] = {HURRAY_KNOWN_PLUGINS};

std::set<std::string> split(const char *csv) {
  std::set<std::string> out;
  std::stringstream s(csv ? csv : "");
  std::string item;
  while (std::getline(s, item, ','))
    if (!item.empty()) out.insert(item);
  return out;
}

const Known *known(const std::string &name) {
  for (const Known &k : kKnown)
    if (name == k.name) return &k;
  return nullptr;
}

}  // namespace

TEST_CASE("every plugin built has a known name and serves its tag", "[loader][known]") {
  const char *dir = std::getenv("HURRAY_TEST_PLUGIN_DIR");
  REQUIRE(dir != nullptr);
  const std::set<std::string> built = split(std::getenv("HURRAY_TEST_BUILT"));
  const std::set<std::string> skipped = split(std::getenv("HURRAY_TEST_SKIPPED"));
  // The plugins in the build's folder are those CMake says it built.
  std::set<std::string> found;
  DIR *d = opendir(dir);
  REQUIRE(d != nullptr);
  while (dirent *e = readdir(d)) {
    const std::string f = e->d_name;
    if (f.size() > 13 && f.rfind("libhurray-", 0) == 0 && f.compare(f.size() - 3, 3, ".so") == 0)
      found.insert(f.substr(10, f.size() - 13));
  }
  closedir(d);
  CHECK(found == built);
  // Each is a known name, and its table serves the tag the list gives it.
  for (const std::string &name : found) {
    INFO(name);
    const Known *k = known(name);
    REQUIRE(k != nullptr);
    void *dl = dlopen((std::string(dir) + "/libhurray-" + name + ".so").c_str(),
                      RTLD_NOW | RTLD_LOCAL);
    REQUIRE(dl != nullptr);
    auto entry = reinterpret_cast<hurray_backend_entry_fn>(dlsym(dl, HURRAY_BACKEND_ENTRY_SYMBOL));
    REQUIRE(entry != nullptr);
    const hurray_backend_v1 *t = entry();
    REQUIRE(t != nullptr);
    CHECK(t->device_tag == k->tag);
    dlclose(dl);
  }
  // And every known name is a plugin this build made or one it skipped.
  std::set<std::string> names;
  for (const Known &k : kKnown) names.insert(k.name);
  std::set<std::string> configured = built;
  configured.insert(skipped.begin(), skipped.end());
  CHECK(names == configured);
  CHECK(names.count("webgpu") == 1);
}

TEST_CASE("a plugin with a known name serving another tag is refused", "[loader][known-name]") {
  // The example plugin (tag 0xF0) under every known name: the loader refuses
  // each, so each is in the list it was built with.
  const char *example = std::getenv("HURRAY_TEST_EXAMPLE");
  REQUIRE(example != nullptr);
  char dir[] = "/tmp/hurray-known-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  std::vector<std::string> links;
  for (const Known &k : kKnown) {
    links.push_back(std::string(dir) + "/libhurray-" + k.name + ".so");
    REQUIRE(symlink(example, links.back().c_str()) == 0);
  }
  setenv("HURRAY_BACKEND_PATH", dir, 1);
  const std::string r = report();
  for (const std::string &l : links) unlink(l.c_str());
  rmdir(dir);
  INFO(r);
  for (const Known &k : kKnown)
    CHECK(r.find(std::string("named ") + k.name + " but serves device_tag 240") !=
          std::string::npos);
}
