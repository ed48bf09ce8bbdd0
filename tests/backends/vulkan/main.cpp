// The test runner of hurray_vulkan_tests, and the shared fixture: the plugin
// is dlopen()ed from HURRAY_VULKAN_PLUGIN (its build path), never linked.
//
// "hurray_vulkan_tests --probe-child" only probes the plugin and prints the
// result; the probe-failure tests run it with a broken environment:
//   HURRAY_VULKAN_LOADER=/nonexistent/libvulkan.so.1  (the plugin's own
//       override of the loader it opens: dlopen fails)
//   VK_ICD_FILENAMES / VK_DRIVER_FILES=/nonexistent/hurray-test-icd.json
//       (the Vulkan loader finds no driver: vkCreateInstance fails)
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "kit/library.h"
#include "vk_test_util.h"

#include <dlfcn.h>
#include <link.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

extern char **environ;

#ifndef HURRAY_VULKAN_PLUGIN
#error "HURRAY_VULKAN_PLUGIN must name libhurray-vulkan.so"
#endif

namespace hvk {
namespace {

struct Loaded {
  void *so = nullptr;
  const hurray_backend_v1 *table = nullptr;
  std::string why;
};

Loaded load_plugin() {
  Loaded l;
  l.so = dlopen(HURRAY_VULKAN_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  if (!l.so) {
    const char *e = dlerror();
    l.why = e ? e : "dlopen failed";
    return l;
  }
  void *sym = dlsym(l.so, HURRAY_BACKEND_ENTRY_SYMBOL);
  if (!sym) {
    l.why = "no hurray_backend_entry in " HURRAY_VULKAN_PLUGIN;
    return l;
  }
  hurray_backend_entry_fn entry = nullptr;
  std::memcpy(&entry, &sym, sizeof sym);
  l.table = entry();
  return l;
}

#if defined(__SANITIZE_ADDRESS__)
// Under AddressSanitizer, keep every library loaded so far (the Vulkan
// loader, the driver, LLVM) mapped until exit. Lavapipe keeps a one-time
// 128-byte allocation (Gallium's CPU detection: the L3 affinity masks) in a
// global of libvulkan_lvp.so, which the loader unloads at vkDestroyInstance;
// LeakSanitizer then no longer sees the global and reports the block as a
// leak from "<unknown module>", a frame no suppression can name. Pinned,
// the block stays reachable, and a real leak in a driver or in the plugin
// is reported with symbolised frames.
void pin_loaded_libraries() {
  std::vector<std::string> names;
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) {
        if (info->dlpi_name && info->dlpi_name[0])
          static_cast<std::vector<std::string> *>(data)->emplace_back(info->dlpi_name);
        return 0;
      },
      &names);
  for (const std::string &n : names) dlopen(n.c_str(), RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
}
#else
void pin_loaded_libraries() {}
#endif

// Owns the plugin and its state for the whole process.
struct Fixture {
  Loaded plugin = load_plugin();
  void *state = nullptr;
  bool probed = false;
  ~Fixture() {
    if (state && plugin.table && plugin.table->shutdown) plugin.table->shutdown(state);
    if (plugin.so) dlclose(plugin.so);
  }
};

Fixture &fixture() {
  static Fixture f;
  return f;
}

}  // namespace

const hurray_backend_v1 &table() {
  Fixture &f = fixture();
  INFO(f.plugin.why);
  REQUIRE(f.plugin.table != nullptr);
  return *f.plugin.table;
}

void *state() {
  Fixture &f = fixture();
  if (f.probed) return f.state;
  const hurray_backend_v1 &t = table();
  hurray_error err{};
  const hurray_status st = t.probe(&f.state, &err);
  if (st != HURRAY_OK) {
    std::printf("SKIPPED: the vulkan backend's probe failed with %s: %s\n",
                status_name(st), err.message);
    std::fflush(stdout);
    std::exit(77);
  }
  f.probed = true;
  pin_loaded_libraries();
  return f.state;
}

// The name of each status, by its number.
struct StatusName {
  int num;
  const char *name;
};
constexpr StatusName kStatusNames[] = {
#define HVK_XX(name, num, msg) {num, "HURRAY_" #name},
    HURRAY_STATUS_MAP(HVK_XX)
#undef HVK_XX
};

const char *status_name(int status) {
  for (const StatusName &s : kStatusNames)
    if (s.num == status) return s.name;
  return "HURRAY_E_UNKNOWN";
}

int probe_child_main() {
  Loaded l = load_plugin();
  if (!l.table) {
    std::printf("status=-1\nmessage=%s\n", l.why.c_str());
    return 1;
  }
  void *s = nullptr;
  hurray_error err{};
  const hurray_status st = l.table->probe(&s, &err);
  std::printf("status=%d\nmessage=%s\n", static_cast<int>(st),
              st == HURRAY_OK ? "" : err.message);
  std::fflush(stdout);
  if (st == HURRAY_OK) l.table->shutdown(s);
  dlclose(l.so);
  return 0;
}

std::string probe_in_child(const char *const *env, int *exit_code) {
  std::vector<std::string> keep;
  std::vector<char *> envp;
  for (const char *const *e = env; *e; ++e) keep.emplace_back(*e);
  for (char **e = environ; *e; ++e) {
    bool overridden = false;
    for (const char *const *o = env; *o; ++o) {
      const char *eq = std::strchr(*o, '=');
      const size_t n = eq ? static_cast<size_t>(eq - *o) + 1 : std::strlen(*o);
      overridden = overridden || std::strncmp(*e, *o, n) == 0;
    }
    if (!overridden) keep.emplace_back(*e);
  }
  for (std::string &s : keep) envp.push_back(s.data());
  envp.push_back(nullptr);

  int fds[2];
  REQUIRE(pipe(fds) == 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  posix_spawn_file_actions_addclose(&fa, fds[1]);
  char self[] = "/proc/self/exe";
  char arg[] = "--probe-child";
  char *argv[] = {self, arg, nullptr};
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  std::string out;
  if (rc == 0) {
    char buf[512];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    int status = 0;
    waitpid(pid, &status, 0);
    *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  } else {
    *exit_code = -1;
  }
  close(fds[0]);
  REQUIRE(rc == 0);
  return out;
}

hurray_backend_device_info info_of(int32_t d) {
  hurray_backend_device_info info{};
  hurray_error err{};
  INFO(err.message);
  REQUIRE(table().device_info(state(), d, &info, &err) == HURRAY_OK);
  return info;
}

hurray_backend_native native_of(int32_t d) {
  hurray_backend_native n{};
  hurray_error err{};
  REQUIRE(table().native(state(), d, &n, &err) == HURRAY_OK);
  return n;
}

// ------------------------------------------------------------------ Vk ----

// The functions of VkFunctions, looked up by their members' names.
constexpr hurray::kit::Symbol<VkFunctions> kVkFunctions[] = {
    hurray::kit::required<&VkFunctions::vkGetPhysicalDeviceQueueFamilyProperties>,
    hurray::kit::required<&VkFunctions::vkGetPhysicalDeviceMemoryProperties>,
    hurray::kit::required<&VkFunctions::vkGetDeviceQueue>,
    hurray::kit::required<&VkFunctions::vkCreateBuffer>,
    hurray::kit::required<&VkFunctions::vkDestroyBuffer>,
    hurray::kit::required<&VkFunctions::vkGetBufferMemoryRequirements>,
    hurray::kit::required<&VkFunctions::vkBindBufferMemory>,
    hurray::kit::required<&VkFunctions::vkAllocateMemory>,
    hurray::kit::required<&VkFunctions::vkFreeMemory>,
    hurray::kit::required<&VkFunctions::vkMapMemory>,
    hurray::kit::required<&VkFunctions::vkUnmapMemory>,
    hurray::kit::required<&VkFunctions::vkCreateShaderModule>,
    hurray::kit::required<&VkFunctions::vkDestroyShaderModule>,
    hurray::kit::required<&VkFunctions::vkCreateDescriptorSetLayout>,
    hurray::kit::required<&VkFunctions::vkDestroyDescriptorSetLayout>,
    hurray::kit::required<&VkFunctions::vkCreatePipelineLayout>,
    hurray::kit::required<&VkFunctions::vkDestroyPipelineLayout>,
    hurray::kit::required<&VkFunctions::vkCreateComputePipelines>,
    hurray::kit::required<&VkFunctions::vkDestroyPipeline>,
    hurray::kit::required<&VkFunctions::vkCreateDescriptorPool>,
    hurray::kit::required<&VkFunctions::vkDestroyDescriptorPool>,
    hurray::kit::required<&VkFunctions::vkAllocateDescriptorSets>,
    hurray::kit::required<&VkFunctions::vkUpdateDescriptorSets>,
    hurray::kit::required<&VkFunctions::vkCreateCommandPool>,
    hurray::kit::required<&VkFunctions::vkDestroyCommandPool>,
    hurray::kit::required<&VkFunctions::vkAllocateCommandBuffers>,
    hurray::kit::required<&VkFunctions::vkBeginCommandBuffer>,
    hurray::kit::required<&VkFunctions::vkEndCommandBuffer>,
    hurray::kit::required<&VkFunctions::vkCmdBindPipeline>,
    hurray::kit::required<&VkFunctions::vkCmdBindDescriptorSets>,
    hurray::kit::required<&VkFunctions::vkCmdPushConstants>,
    hurray::kit::required<&VkFunctions::vkCmdDispatch>,
    hurray::kit::required<&VkFunctions::vkCmdCopyBuffer>,
    hurray::kit::required<&VkFunctions::vkCmdPipelineBarrier>,
    hurray::kit::required<&VkFunctions::vkQueueSubmit>,
    hurray::kit::required<&VkFunctions::vkQueueWaitIdle>,
    hurray::kit::required<&VkFunctions::vkCreateFence>,
    hurray::kit::required<&VkFunctions::vkDestroyFence>,
    hurray::kit::required<&VkFunctions::vkWaitForFences>,
    hurray::kit::required<&VkFunctions::vkGetSemaphoreCounterValue>,
};
static_assert(hurray::kit::names_every_member(kVkFunctions));

Vk::Vk(int32_t ordinal) {
  const hurray_backend_native n = native_of(ordinal);
  instance = static_cast<VkInstance>(n.handles[0]);
  phys = static_cast<VkPhysicalDevice>(n.handles[1]);
  device = static_cast<VkDevice>(n.handles[2]);
  queue = static_cast<VkQueue>(n.handles[3]);
  family = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(n.handles[4]));
  std::memcpy(&gipa, &n.handles[5], sizeof gipa);
  timeline = reinterpret_cast<VkSemaphore>(n.handles[6]);
  REQUIRE(gipa != nullptr);
  vkGetDeviceProcAddr =
      reinterpret_cast<PFN_vkGetDeviceProcAddr>(gipa(instance, "vkGetDeviceProcAddr"));
  REQUIRE(vkGetDeviceProcAddr != nullptr);
  for (const hurray::kit::Symbol<VkFunctions> &fn : kVkFunctions) {
    PFN_vkVoidFunction f = vkGetDeviceProcAddr(device, fn.name);
    if (!f) f = gipa(instance, fn.name);
    INFO(fn.name);
    REQUIRE(f != nullptr);
    fn.store(this, f);
  }
}

uint32_t Vk::family_queue_count() const {
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(phys, &n, nullptr);
  std::vector<VkQueueFamilyProperties> f(n);
  vkGetPhysicalDeviceQueueFamilyProperties(phys, &n, f.data());
  return family < n ? f[family].queueCount : 0;
}

int Vk::memory_type(uint32_t bits, VkMemoryPropertyFlags flags) const {
  VkPhysicalDeviceMemoryProperties mp{};
  vkGetPhysicalDeviceMemoryProperties(phys, &mp);
  for (uint32_t i = 0; i < mp.memoryTypeCount; ++i)
    if ((bits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & flags) == flags)
      return static_cast<int>(i);
  return -1;
}

}  // namespace hvk

int main(int argc, char **argv) {
  if (argc >= 2 && std::strcmp(argv[1], "--probe-child") == 0) return hvk::probe_child_main();
  return Catch::Session().run(argc, argv);
}
