// The Vulkan plugin: probe (instance, devices, memory types, queues) and shutdown.
#include "kit/identity.h"
#include "state.h"

namespace hurray::vulkan {

// ------------------------------------------------------------- probe ----

VkResult make_host_barrier(Device &d) {
  VkCommandPoolCreateInfo pci{};
  pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pci.queueFamilyIndex = d.family;
  VkResult r = d.fn.vkCreateCommandPool(d.dev, &pci, nullptr, &d.barrier_pool);
  if (r != VK_SUCCESS) return r;
  VkCommandBufferAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  ai.commandPool = d.barrier_pool;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  r = d.fn.vkAllocateCommandBuffers(d.dev, &ai, &d.host_barrier);
  if (r != VK_SUCCESS) return r;
  VkCommandBufferBeginInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  bi.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
  r = d.fn.vkBeginCommandBuffer(d.host_barrier, &bi);
  if (r != VK_SUCCESS) return r;
  VkMemoryBarrier mb{};
  mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  mb.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT;
  d.fn.vkCmdPipelineBarrier(d.host_barrier, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                            VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0,
                            nullptr);
  return d.fn.vkEndCommandBuffer(d.host_barrier);
}

// memoryTypeBits of a small buffer of `usage` (external OPAQUE_FD if asked).
uint32_t buffer_type_bits(Device &d, VkBufferUsageFlags usage, bool external) {
  VkBuffer b = VK_NULL_HANDLE;
  if (create_buffer(d, 65536, usage, external, &b) != VK_SUCCESS) return 0;
  VkMemoryRequirements req{};
  d.fn.vkGetBufferMemoryRequirements(d.dev, b, &req);
  d.fn.vkDestroyBuffer(d.dev, b, nullptr);
  return req.memoryTypeBits;
}

std::string describe_type(const Device &d, int t) {
  const VkMemoryType &mt = d.mem.memoryTypes[t];
  char buf[96];
  std::snprintf(buf, sizeof buf, "type %d %s heap %u %lluMiB", t,
                flag_text(mt.propertyFlags).c_str(), mt.heapIndex,
                static_cast<unsigned long long>(d.mem.memoryHeaps[mt.heapIndex].size >> 20));
  return buf;
}

// Set up one physical device. Returns null and appends to *why when it
// cannot serve.
std::unique_ptr<Device> open_device(State &s, VkPhysicalDevice phys, int32_t ordinal,
                                    std::string *why) {
  auto d = std::make_unique<Device>();
  d->phys = phys;
  d->ordinal = ordinal;
  s.fn.vkGetPhysicalDeviceProperties(phys, &d->props);
  char head[200];
  std::snprintf(head, sizeof head, "physical device %d (%.160s)", static_cast<int>(ordinal),
                d->props.deviceName);
  auto skip = [&](const std::string &reason) -> std::unique_ptr<Device> {
    if (!why->empty()) *why += "; ";
    *why += head;
    *why += ": ";
    *why += reason;
    return nullptr;
  };
  const uint32_t api = d->props.apiVersion;
  if (api < VK_API_VERSION_1_2) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "Vulkan %u.%u, the backend needs 1.2",
                  VK_API_VERSION_MAJOR(api), VK_API_VERSION_MINOR(api));
    return skip(buf);
  }

  auto p11 = vk_struct<VkPhysicalDeviceVulkan11Properties>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES);
  auto p2 =
      vk_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &p11);
  s.fn.vkGetPhysicalDeviceProperties2(phys, &p2);
  std::memcpy(d->device_uuid, p11.deviceUUID, VK_UUID_SIZE);
  std::memcpy(d->driver_uuid, p11.driverUUID, VK_UUID_SIZE);
  d->max_alloc = p11.maxMemoryAllocationSize ? p11.maxMemoryAllocationSize : UINT64_MAX;

  auto f12 = vk_struct<VkPhysicalDeviceVulkan12Features>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
  auto f2 =
      vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f12);
  s.fn.vkGetPhysicalDeviceFeatures2(phys, &f2);
  if (!f12.timelineSemaphore) return skip("no timelineSemaphore feature");

  uint32_t nfam = 0;
  s.fn.vkGetPhysicalDeviceQueueFamilyProperties(phys, &nfam, nullptr);
  std::vector<VkQueueFamilyProperties> fams(nfam);
  s.fn.vkGetPhysicalDeviceQueueFamilyProperties(phys, &nfam, fams.data());
  int family = -1;
  for (uint32_t i = 0; i < nfam && family < 0; ++i)
    if ((fams[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) &&
        (fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && fams[i].queueCount)
      family = static_cast<int>(i);
  for (uint32_t i = 0; i < nfam && family < 0; ++i)
    if ((fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && fams[i].queueCount)
      family = static_cast<int>(i);
  if (family < 0) return skip("no compute queue family");
  d->family = static_cast<uint32_t>(family);

  uint32_t next = 0;
  s.fn.vkEnumerateDeviceExtensionProperties(phys, nullptr, &next, nullptr);
  std::vector<VkExtensionProperties> exts(next);
  s.fn.vkEnumerateDeviceExtensionProperties(phys, nullptr, &next, exts.data());
  auto has_ext = [&](const char *name) {
    for (const auto &e : exts)
      if (std::strcmp(e.extensionName, name) == 0) return true;
    return false;
  };
  const bool mem_fd = has_ext(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
  const bool sem_fd = has_ext(VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);

  // Can buffers be exported and imported as OPAQUE_FD?
  if (!mem_fd) {
    d->ipc_memory_why = "no " VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME;
  } else {
    VkPhysicalDeviceExternalBufferInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO;
    bi.usage = kBufferUsage;
    bi.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkExternalBufferProperties ep{};
    ep.sType = VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES;
    s.fn.vkGetPhysicalDeviceExternalBufferProperties(phys, &bi, &ep);
    const VkExternalMemoryFeatureFlags feat =
        ep.externalMemoryProperties.externalMemoryFeatures;
    d->ipc_memory = (feat & VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT) &&
                    (feat & VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT);
    d->export_dedicated = (feat & VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT) != 0;
    if (!d->ipc_memory) d->ipc_memory_why = "OPAQUE_FD buffers are not exportable and importable";
  }
  // Can timeline semaphores be exported and imported as OPAQUE_FD?
  if (!sem_fd) {
    d->ipc_events_why = "no " VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME;
  } else {
    const VkSemaphoreTypeCreateInfo type = timeline_type();
    VkPhysicalDeviceExternalSemaphoreInfo si{};
    si.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO;
    si.pNext = &type;
    si.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkExternalSemaphoreProperties sp{};
    sp.sType = VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES;
    s.fn.vkGetPhysicalDeviceExternalSemaphoreProperties(phys, &si, &sp);
    d->ipc_events = (sp.externalSemaphoreFeatures & VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT) &&
                    (sp.externalSemaphoreFeatures & VK_EXTERNAL_SEMAPHORE_FEATURE_IMPORTABLE_BIT);
    if (!d->ipc_events)
      d->ipc_events_why = "timeline semaphores are not exportable and importable as OPAQUE_FD";
  }

  // Queues: 0 of every graphics/compute/transfer family, 1 more in ours.
  const float priorities[2] = {1.0f, 1.0f};
  std::vector<VkDeviceQueueCreateInfo> qcis;
  for (uint32_t i = 0; i < nfam; ++i) {
    const VkQueueFlags useful =
        VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT | VK_QUEUE_TRANSFER_BIT;
    if (!(fams[i].queueFlags & useful) || !fams[i].queueCount) continue;
    VkDeviceQueueCreateInfo q{};
    q.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    q.queueFamilyIndex = i;
    q.queueCount = (i == d->family && fams[i].queueCount >= 2) ? 2u : 1u;
    q.pQueuePriorities = priorities;
    qcis.push_back(q);
    d->families.push_back(i);
  }
  std::vector<const char *> enable;
  if (mem_fd) enable.push_back(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
  if (sem_fd) enable.push_back(VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);
  VkPhysicalDeviceVulkan12Features want12{};
  want12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  want12.timelineSemaphore = VK_TRUE;
  VkDeviceCreateInfo dci{};
  dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  dci.pNext = &want12;
  dci.queueCreateInfoCount = static_cast<uint32_t>(qcis.size());
  dci.pQueueCreateInfos = qcis.data();
  dci.enabledExtensionCount = static_cast<uint32_t>(enable.size());
  dci.ppEnabledExtensionNames = enable.data();
  VkResult r = s.fn.vkCreateDevice(phys, &dci, nullptr, &d->dev);
  if (r != VK_SUCCESS) {
    d->dev = VK_NULL_HANDLE;
    return skip(std::string("[vkCreateDevice] ") + vk_result_name(r));
  }

  // Device functions; without vkDestroyDevice the destructor cannot work.
  const DeviceResolver at{s.fn.vkGetDeviceProcAddr, d->dev};
  std::string missing;
  kit::resolve_symbols<DeviceCoreFns>(lookup_in(at), kDeviceSymbols, &d->fn, &missing);
  if (!d->fn.vkDestroyDevice) {
    // Leak rather than call through nothing; this cannot happen on a loader.
    d->dev = VK_NULL_HANDLE;
    return skip("[vkGetDeviceProcAddr] vkDestroyDevice missing");
  }
  if (!missing.empty()) return skip("[vkGetDeviceProcAddr] missing " + missing);
  if (mem_fd) kit::resolve_symbols<MemoryFdFns>(lookup_in(at), kMemoryFdSymbols, &d->fn);
  if (sem_fd) kit::resolve_symbols<SemaphoreFdFns>(lookup_in(at), kSemaphoreFdSymbols, &d->fn);
  if (!d->fn.vkGetMemoryFdKHR && d->ipc_memory) {
    d->ipc_memory = false;
    d->ipc_memory_why = "vkGetMemoryFdKHR missing";
  }
  if ((!d->fn.vkGetSemaphoreFdKHR || !d->fn.vkImportSemaphoreFdKHR) && d->ipc_events) {
    d->ipc_events = false;
    d->ipc_events_why = "vkGetSemaphoreFdKHR / vkImportSemaphoreFdKHR missing";
  }
  d->fn.vkGetDeviceQueue(d->dev, d->family, 0, &d->queue);

  s.fn.vkGetPhysicalDeviceMemoryProperties(phys, &d->mem);
  const VkPhysicalDeviceLimits &lim = d->props.limits;
  d->atom = lim.nonCoherentAtomSize ? lim.nonCoherentAtomSize : 1;
  d->map_align = std::max<uint64_t>(HURRAY_MIN_ALIGNMENT,
                                    pow2_ceil(lim.minMemoryMapAlignment));

  {
    char buf[192];
    std::snprintf(buf, sizeof buf, "vulkan device %d (%.160s)", static_cast<int>(ordinal),
                  d->props.deviceName);
    d->label = buf;
  }

  r = make_host_barrier(*d);
  if (r != VK_SUCCESS) return skip(std::string("[vkCreateCommandPool] ") + vk_result_name(r));
  Timeline t;
  t.queue = d->queue;
  r = create_timeline(*d, &t.semaphore);
  if (r != VK_SUCCESS) return skip(std::string("[vkCreateSemaphore] ") + vk_result_name(r));
  d->timelines.push_back(t);

  // Which memory type serves which class (for buffers of our usage).
  const uint32_t bits = buffer_type_bits(*d, kBufferUsage, false);
  std::string detail;
  for (int c = 0; c < kClassCount; ++c) {
    d->class_type[c] = d->pick_type(c, bits);
    if (!detail.empty()) detail += "; ";
    detail += class_name(static_cast<unsigned>(c));
    detail += ": ";
    if (d->class_type[c] < 0) {
      detail += "none (no ";
      detail += class_needs(static_cast<unsigned>(c)) + 2;  // skip "a "
      detail += ")";
    } else {
      detail += describe_type(*d, d->class_type[c]);
      detail += class_mapped(static_cast<unsigned>(c)) ? ", mapped" : ", opaque";
    }
  }
  {
    char tail[96];
    std::snprintf(tail, sizeof tail, "; atom %llu, map align %llu",
                  static_cast<unsigned long long>(lim.nonCoherentAtomSize),
                  static_cast<unsigned long long>(lim.minMemoryMapAlignment));
    detail += tail;
  }
  d->detail = detail;
  return d;
}

hurray_status probe_impl(void **out_state, hurray_error *err) {
  if (!out_state) return refuse(err, HURRAY_E_INVALID_ARGUMENT, "probe: state is NULL");
  *out_state = nullptr;
  auto s = std::make_unique<State>();
  static constexpr const char *kSonames[] = {"libvulkan.so.1", nullptr};
  std::string loader, not_loaded;
  s->lib = kit::open_library("HURRAY_VULKAN_LOADER", kSonames, &loader, &not_loaded);
  if (!s->lib) return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "%s", not_loaded.c_str());
  if (kit::resolve_symbols<LoaderFns>(kit::from_library(s->lib), kLoaderSymbols, &s->loader) !=
      nullptr)
    return refuse(err, HURRAY_E_DEVICE_UNAVAILABLE,
                  "%s is not a Vulkan loader: it has no vkGetInstanceProcAddr", loader.c_str());

  GlobalFns global;
  const InstanceResolver no_instance{s->loader.vkGetInstanceProcAddr, VK_NULL_HANDLE};
  const char *absent =
      kit::resolve_symbols<GlobalFns>(lookup_in(no_instance), kGlobalSymbols, &global);
  uint32_t loader_version = VK_API_VERSION_1_0;
  if (global.vkEnumerateInstanceVersion) {
    const VkResult r = global.vkEnumerateInstanceVersion(&loader_version);
    if (r != VK_SUCCESS)
      return vk_fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "vkEnumerateInstanceVersion", r, "%s",
                     "");
  }
  if (loader_version < VK_API_VERSION_1_2)
    return refuse(err, HURRAY_E_DEVICE_UNAVAILABLE,
                  "the Vulkan loader %s offers Vulkan %u.%u; the vulkan backend needs 1.2",
                  loader.c_str(), VK_API_VERSION_MAJOR(loader_version),
                  VK_API_VERSION_MINOR(loader_version));
  if (absent != nullptr)  // vkCreateInstance, the one required
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                "[vkGetInstanceProcAddr] vkCreateInstance missing from %s", loader.c_str());

  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "libhurray";
  app.applicationVersion = HURRAY_VERSION_NUMBER;
  app.pEngineName = "libhurray";
  app.engineVersion = HURRAY_VERSION_NUMBER;
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo ici{};
  ici.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  ici.pApplicationInfo = &app;
  VkResult r = global.vkCreateInstance(&ici, nullptr, &s->instance);
  if (r != VK_SUCCESS) {
    s->instance = VK_NULL_HANDLE;
    return vk_fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "vkCreateInstance", r, "%s", "");
  }
  std::string missing;
  const InstanceResolver at{s->loader.vkGetInstanceProcAddr, s->instance};
  if (kit::resolve_symbols<InstanceFns>(lookup_in(at), kInstanceSymbols, &s->fn, &missing) !=
      nullptr)
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "[vkGetInstanceProcAddr] missing %s",
                missing.c_str());

  uint32_t n = 0;
  r = s->fn.vkEnumeratePhysicalDevices(s->instance, &n, nullptr);
  std::vector<VkPhysicalDevice> phys(n);
  if (r == VK_SUCCESS && n) r = s->fn.vkEnumeratePhysicalDevices(s->instance, &n, phys.data());
  if (r != VK_SUCCESS && r != VK_INCOMPLETE)
    return vk_fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "vkEnumeratePhysicalDevices", r, "%s",
                   "");
  phys.resize(n);
  if (phys.empty())
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE,
                "[vkEnumeratePhysicalDevices] the Vulkan loader found no physical device");
  std::string why;
  for (VkPhysicalDevice p : phys) {
    auto d = open_device(*s, p, static_cast<int32_t>(s->devices.size()), &why);
    if (d) s->devices.push_back(std::move(d));
  }
  if (s->devices.empty())
    return refuse(err, HURRAY_E_DEVICE_UNAVAILABLE, "no usable Vulkan device: %s", why.c_str());
  *out_state = s.release();
  return HURRAY_OK;
}

// The device's stable identity: VkPhysicalDeviceIDProperties.deviceUUID (as
// Vulkan 1.1 reports it), the UUID the IPC import already checks.
hurray_status device_identity(void *state, int32_t device, hurray_backend_device_identity *out,
                              hurray_error *err) {
  auto [refused, s, d] = kit::enter_identity<State>(state, device, out, err);
  if (refused != HURRAY_OK) return refused;
  hurray::kit::set_identity(out, HURRAY_BACKEND_ID_UUID, d->device_uuid, VK_UUID_SIZE);
  return HURRAY_OK;
}

}  // namespace hurray::vulkan
