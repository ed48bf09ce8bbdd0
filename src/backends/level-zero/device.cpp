// The Level Zero plugin: probe, shutdown and the description of each device.
#include "kit/identity.h"
#include "kit/probe.h"
#include "state.h"

namespace hurray::level_zero {

// ---- probe ----------------------------------------------------------------

void destroy_events(const Api &ze, Device &d) noexcept {
  for (auto &[event, imp] : d.imported) {
    ze.zeEventDestroy(event);
    ze.zeEventPoolCloseIpcHandle(imp.pool);
    if (imp.fd >= 0) close(imp.fd);
  }
  d.imported.clear();
  for (Pool &p : d.pools) {
    for (ze_event_handle_t &e : p.events) {
      if (e != nullptr) ze.zeEventDestroy(e);
      e = nullptr;
    }
    if (p.handle != nullptr) ze.zeEventPoolDestroy(p.handle);
    p.handle = nullptr;
  }
  d.pools.clear();
  d.free_slots.clear();
  d.lent.clear();
}

// Wait until everything appended to the plugin's list is done (shutdown).
void drain(const Api &ze, Device &d) noexcept {
  if (d.list == nullptr || d.copy_event == nullptr) return;
  if (ze.zeCommandListAppendBarrier(d.list, d.copy_event, 0, nullptr) == ZE_RESULT_SUCCESS)
    ze.zeEventHostSynchronize(d.copy_event, UINT64_MAX);
  ze.zeEventHostReset(d.copy_event);
}

void close_device(const Api &ze, Device &d) noexcept {
  drain(ze, d);
  destroy_events(ze, d);
  if (d.copy_event != nullptr) ze.zeEventDestroy(d.copy_event);
  if (d.copy_pool != nullptr) ze.zeEventPoolDestroy(d.copy_pool);
  if (d.list != nullptr) ze.zeCommandListDestroy(d.list);
  d.copy_event = nullptr;
  d.copy_pool = nullptr;
  d.list = nullptr;
}

void close_all(State *s) noexcept {
  for (auto &d : s->devices) close_device(s->ze, *d);
  for (auto &drv : s->drivers) {
    if (drv->context != nullptr) s->ze.zeContextDestroy(drv->context);
    drv->context = nullptr;
  }
}

// The command list, copy event and capabilities of one device. false (and a
// note in *why) when the device cannot be used.
bool open_device(const Api &ze, Device &d, std::string *why) {
  char buf[40];
  const char *label = d.name.c_str();
  // A queue group that can compute (and so copy), else one that can copy.
  uint32_t n = 0;
  ze_result_t r = ze.zeDeviceGetCommandQueueGroupProperties(d.handle, &n, nullptr);
  if (r != ZE_RESULT_SUCCESS || n == 0) {
    note(why, "[zeDeviceGetCommandQueueGroupProperties] %s: device '%s'",
         r != ZE_RESULT_SUCCESS ? result_text(r, buf) : "no command queue group", label);
    return false;
  }
  std::vector<ze_command_queue_group_properties_t> groups(n);
  for (auto &g : groups) {
    g = {};
    g.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
  }
  r = ze.zeDeviceGetCommandQueueGroupProperties(d.handle, &n, groups.data());
  if (r != ZE_RESULT_SUCCESS) {
    note(why, "[zeDeviceGetCommandQueueGroupProperties] %s: device '%s'", result_text(r, buf),
         label);
    return false;
  }
  groups.resize(std::min<size_t>(n, groups.size()));
  int compute = -1, copy = -1;
  for (size_t i = 0; i < groups.size(); ++i) {
    if (compute < 0 && (groups[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) != 0)
      compute = static_cast<int>(i);
    if (copy < 0 && (groups[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY) != 0)
      copy = static_cast<int>(i);
  }
  if (compute < 0 && copy < 0) {
    note(why, "device '%s' has no command queue group for compute or copy", label);
    return false;
  }
  d.group = static_cast<uint32_t>(compute >= 0 ? compute : copy);

  ze_command_queue_desc_t qd{};
  qd.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
  qd.ordinal = d.group;
  qd.index = 0;
  qd.flags = 0;
  qd.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
  qd.priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL;
  r = ze.zeCommandListCreateImmediate(d.driver->context, d.handle, &qd, &d.list);
  if (r != ZE_RESULT_SUCCESS || d.list == nullptr) {
    note(why, "[zeCommandListCreateImmediate] %s: device '%s', queue group %u",
         r != ZE_RESULT_SUCCESS ? result_text(r, buf) : "no list", label, d.group);
    d.list = nullptr;
    return false;
  }

  // A call that makes one handle: false, with the reason noted, when it
  // fails or makes none.
  auto made = [&](ze_result_t res, const void *handle, const char *fn, const char *none) {
    if (res == ZE_RESULT_SUCCESS && handle != nullptr) return true;
    note(why, "[%s] %s: device '%s'", fn, res != ZE_RESULT_SUCCESS ? result_text(res, buf) : none,
         label);
    return false;
  };

  // The copy event: one host-visible event of its own pool.
  ze_event_pool_desc_t pd{};
  pd.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC;
  pd.flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE;
  pd.count = 1;
  r = ze.zeEventPoolCreate(d.driver->context, &pd, 1, &d.handle, &d.copy_pool);
  if (!made(r, d.copy_pool, "zeEventPoolCreate", "no pool")) {
    d.copy_pool = nullptr;
    return false;
  }
  ze_event_desc_t ed{};
  ed.stype = ZE_STRUCTURE_TYPE_EVENT_DESC;
  ed.index = 0;
  ed.signal = ZE_EVENT_SCOPE_FLAG_HOST;
  ed.wait = ZE_EVENT_SCOPE_FLAG_HOST;
  r = ze.zeEventCreate(d.copy_pool, &ed, &d.copy_event);
  if (!made(r, d.copy_event, "zeEventCreate", "no event")) {
    d.copy_event = nullptr;
    return false;
  }

  // UNIFIED needs read/write shared single-device allocations.
  ze_device_memory_access_properties_t access{};
  access.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_ACCESS_PROPERTIES;
  r = ze.zeDeviceGetMemoryAccessProperties(d.handle, &access);
  if (r != ZE_RESULT_SUCCESS) {
    d.unified_why = std::string("[zeDeviceGetMemoryAccessProperties] ") + result_text(r, buf);
  } else if ((access.sharedSingleDeviceAllocCapabilities & ZE_MEMORY_ACCESS_CAP_FLAG_RW) == 0) {
    char why_buf[160];
    std::snprintf(why_buf, sizeof why_buf,
                  "the device reports no read/write access to shared allocations "
                  "(sharedSingleDeviceAllocCapabilities 0x%x)",
                  static_cast<unsigned>(access.sharedSingleDeviceAllocCapabilities));
    d.unified_why = why_buf;
  } else {
    d.unified = true;
  }
  d.ipc_pools = d.driver->ipc_events();
  return true;
}

// Peers: devices of the same driver that can access each device's memory.
void find_peers(const Api &ze, State *s) {
  for (auto &dp : s->devices) {
    Device &d = *dp;
    std::string why;
    size_t others = 0;
    for (auto &ep : s->devices) {
      Device &e = *ep;
      if (&e == &d || e.driver != d.driver) continue;
      ++others;
      ze_bool_t can = 0;
      const ze_result_t r = ze.zeDeviceCanAccessPeer(e.handle, d.handle, &can);
      if (r != ZE_RESULT_SUCCESS) {
        char buf[40];
        note(&why, "[zeDeviceCanAccessPeer] %s: device %d to device %d", result_text(r, buf),
             static_cast<int>(e.ordinal), static_cast<int>(d.ordinal));
      } else if (can) {
        d.peers.push_back(e.ordinal);
      } else {
        note(&why, "device %d cannot access it (zeDeviceCanAccessPeer)",
             static_cast<int>(e.ordinal));
      }
    }
    if (others == 0) why = "it is the only device of its driver: no peer device";
    if (d.peers.empty()) d.peer_why = why;
  }
}

hurray_status open_devices(State *s, hurray_error *err) {
  const Api &ze = s->ze;
  char buf[40];
  ze_result_t r = ze.zeInit(ZE_INIT_FLAG_GPU_ONLY);
  if (r != ZE_RESULT_SUCCESS)
    return code_fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "zeInit", ze_code(r),
                     "%s could not initialise a Level Zero GPU driver", kLibrary);
  uint32_t count = 0;
  r = ze.zeDriverGet(&count, nullptr);
  if (r != ZE_RESULT_SUCCESS)
    return code_fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "zeDriverGet", ze_code(r), nullptr);
  if (count == 0)
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "[zeDriverGet] no Level Zero GPU driver");
  std::vector<ze_driver_handle_t> handles(count);
  r = ze.zeDriverGet(&count, handles.data());
  if (r != ZE_RESULT_SUCCESS)
    return code_fail(err, HURRAY_E_DEVICE_UNAVAILABLE, "zeDriverGet", ze_code(r), nullptr);
  handles.resize(std::min<size_t>(count, handles.size()));

  std::string why;  // why drivers or devices were left out
  for (size_t di = 0; di < handles.size(); ++di) {
    auto drv = std::make_unique<Driver>();
    drv->handle = handles[di];
    drv->index = static_cast<uint32_t>(di);
    ze_driver_properties_t dprops{};
    dprops.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES;
    if (ze.zeDriverGetProperties(drv->handle, &dprops) == ZE_RESULT_SUCCESS)
      drv->version = dprops.driverVersion;
    ze_api_version_t api = ZE_API_VERSION_1_0;
    if (ze.zeDriverGetApiVersion(drv->handle, &api) == ZE_RESULT_SUCCESS) drv->api = api;
    ze_driver_ipc_properties_t ipc{};
    ipc.stype = ZE_STRUCTURE_TYPE_DRIVER_IPC_PROPERTIES;
    if (ze.zeDriverGetIpcProperties(drv->handle, &ipc) == ZE_RESULT_SUCCESS) drv->ipc = ipc.flags;

    ze_context_desc_t cd{};
    cd.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC;
    r = ze.zeContextCreate(drv->handle, &cd, &drv->context);
    if (r != ZE_RESULT_SUCCESS || drv->context == nullptr) {
      note(&why, "[zeContextCreate] %s: driver %zu",
           r != ZE_RESULT_SUCCESS ? result_text(r, buf) : "no context", di);
      continue;
    }
    Driver *driver = drv.get();
    s->drivers.push_back(std::move(drv));

    uint32_t n = 0;
    r = ze.zeDeviceGet(driver->handle, &n, nullptr);
    if (r != ZE_RESULT_SUCCESS || n == 0) {
      note(&why, "[zeDeviceGet] %s: driver %zu",
           r != ZE_RESULT_SUCCESS ? result_text(r, buf) : "no device", di);
      continue;
    }
    std::vector<ze_device_handle_t> devs(n);
    r = ze.zeDeviceGet(driver->handle, &n, devs.data());
    if (r != ZE_RESULT_SUCCESS) {
      note(&why, "[zeDeviceGet] %s: driver %zu", result_text(r, buf), di);
      continue;
    }
    devs.resize(std::min<size_t>(n, devs.size()));
    for (ze_device_handle_t h : devs) {
      auto d = std::make_unique<Device>();
      d->driver = driver;
      d->handle = h;
      d->props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
      r = ze.zeDeviceGetProperties(h, &d->props);
      if (r != ZE_RESULT_SUCCESS) {
        note(&why, "[zeDeviceGetProperties] %s: a device of driver %zu", result_text(r, buf), di);
        continue;
      }
      d->props.name[sizeof d->props.name - 1] = '\0';
      d->name = d->props.name[0] != '\0' ? d->props.name : "(unnamed Level Zero device)";
      d->ordinal = static_cast<int32_t>(s->devices.size());
      if (!open_device(ze, *d, &why)) {
        close_device(ze, *d);
        continue;
      }
      s->devices.push_back(std::move(d));
    }
  }
  if (s->devices.empty())
    return refuse(err, HURRAY_E_DEVICE_UNAVAILABLE, "no usable Level Zero device: %s",
                  why.empty() ? "(no reason given)" : why.c_str());
  find_peers(ze, s);
  return HURRAY_OK;
}

// From open_devices on the loader holds process-wide state: it stays loaded.
hurray_status probe(void **state, hurray_error *err) {
  return kit::probe_state<State>(state, err, kLoader, &State::ze, load_api, open_devices,
                                 close_all);
}

// The lists drained, then the allocations still alive freed with the state
// (their records too).
static void free_left(State *s) {
  s->releaser.reset();  // release_after's waiter first: it uses the devices
  for (auto &d : s->devices) {
    std::lock_guard<std::mutex> lock(d->mu);
    drain(s->ze, *d);
  }
  std::vector<Allocation *> left;
  {
    std::lock_guard<std::mutex> lock(s->mu);
    for (auto &[addr, a] : s->live) left.push_back(a);
    left.insert(left.end(), s->empties.begin(), s->empties.end());
    s->live.clear();
    s->empties.clear();
  }
  for (Allocation *a : left) {
    release_memory(s, a);
    delete a;
  }
}

void shutdown(void *state) { hurray::kit::shutdown_state<State>(state, free_left, close_all); }

hurray_status device_info(void *state, int32_t device, hurray_backend_device_info *out,
                          hurray_error *err) {
  auto [refused, s, d] = kit::enter_out<State>(state, device, out, err, "device_info: out");
  if (refused != HURRAY_OK) return refused;
  std::snprintf(out->name, sizeof out->name, "%s", d->name.c_str());
  out->memory_classes = d->memory_classes();
  out->ipc = (d->driver->ipc_memory() ? HURRAY_BACKEND_IPC_MEMORY : 0u) |
             (d->driver->ipc_events() ? HURRAY_BACKEND_IPC_EVENTS : 0u);
  out->min_alignment = HURRAY_MIN_ALIGNMENT;
  std::string peers;
  for (int32_t p : d->peers) peers += (peers.empty() ? "" : ",") + std::to_string(p);
  std::snprintf(out->detail, sizeof out->detail,
                "Level Zero %u.%u driver %u; STANDARD zeMemAllocDevice; "
                "HOST_PINNED zeMemAllocHost; "
                "UNIFIED %s; PEER %s%s; IPC memory %s, events %s; queue group %u",
                ZE_MAJOR_VERSION(d->driver->api), ZE_MINOR_VERSION(d->driver->api),
                d->driver->index, d->unified ? "zeMemAllocShared" : "none",
                d->peers.empty() ? "none" : "zeMemAllocDevice, peers ",
                d->peers.empty() ? "" : peers.c_str(), d->driver->ipc_memory() ? "yes" : "no",
                d->driver->ipc_events() ? "yes" : "no", d->group);
  return HURRAY_OK;
}

// The device's stable identity: ze_device_properties_t.uuid (read at probe).
hurray_status device_identity(void *state, int32_t device, hurray_backend_device_identity *out,
                              hurray_error *err) {
  auto [refused, s, d] = kit::enter_identity<State>(state, device, out, err);
  if (refused != HURRAY_OK) return refused;
  static_assert(sizeof d->props.uuid.id == 16);
  hurray::kit::set_identity(out, HURRAY_BACKEND_ID_UUID, d->props.uuid.id, sizeof d->props.uuid.id);
  return HURRAY_OK;
}

}  // namespace hurray::level_zero
