// The GPU stream driver: probe, shutdown and the description of each device.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <new>

#include "kit/identity.h"
#include "kit/probe.h"
#include "driver.h"

namespace hurray::gpu_stream {

namespace {

void close_devices(State *s) noexcept {
  for (auto &d : s->devices) rt::close_device(s->api, *d);
}

hurray_status open_devices(State *s, hurray_error *err) {
  const Api &api = s->api;
  // HURRAY_CUDA_SHAREABLE=legacy: SHAREABLE memory by cuMemAlloc and
  // cuIpcGetMemHandle even where VMM descriptors work (vmm.cpp);
  // HURRAY_HIP_SHAREABLE=vmm: by hipMemCreate where they work
  const char *shareable = std::getenv(rt::kShareableEnv);
  s->shareable_vmm = rt::kShareableVmmByDefault
                         ? shareable == nullptr || std::strcmp(shareable, "legacy") != 0
                         : shareable != nullptr && std::strcmp(shareable, "vmm") == 0;
  int count = 0;
  if (const hurray_status st = rt::start(s, &count, err)) return st;
  std::string why;
  for (int i = 0; i < count; ++i) {
    auto d = std::make_unique<Device>();
    if (!rt::open_device(api, i, d.get(), &why)) continue;
    {
      rt::Current cur(api, d->ref);
      if (cur.result() != rt::kSuccess || !rt::vmm_probe(api, d->ref, &d->vmm_granularity))
        d->vmm_granularity = 0;
    }
    try {
      s->devices.push_back(std::move(d));
    } catch (...) {
      rt::close_device(api, *d);
      throw;
    }
  }
  if (s->devices.empty())
    return refuse(err, HURRAY_E_DEVICE_UNAVAILABLE, "no usable %s device: %s", rt::kVendor,
                  why.c_str());
  // Which devices can access each device's memory (PEER).
  for (size_t i = 0; i < s->devices.size(); ++i)
    for (size_t j = 0; j < s->devices.size(); ++j)
      if (i != j && rt::can_access_peer(api, *s->devices[j], *s->devices[i]))
        s->devices[i]->peers.push_back(static_cast<int32_t>(j));
  return HURRAY_OK;
}

}  // namespace

hurray_status probe(void **state, hurray_error *err) {
  // From open_devices on the runtime may have started threads: it stays loaded.
  return hurray::kit::probe_state<State>(state, err, rt::kLibraryEnv, rt::kSonames, rt::kNeeded,
                                         &State::api, rt::load_api, open_devices, close_devices);
}

void shutdown(void *state) {
  // release_after's worker first (it may still call done, which frees);
  // allocations still alive are freed with the state (their records too).
  hurray::kit::shutdown_state<State>(
      state,
      [](State *s) {
        s->releaser.reset();
        while (Allocation *a = s->live.take_any()) free_allocation(s, a);
      },
      close_devices);
}

hurray_status device_info(void *state, int32_t device, hurray_backend_device_info *out,
                          hurray_error *err) {
  auto [refused, s, d] = kit::enter_out<const State>(state, device, out, err, "device_info: out");
  if (refused != HURRAY_OK) return refused;
  std::snprintf(out->name, sizeof out->name, "%s", d->name.c_str());
  out->memory_classes = (1u << HURRAY_MEMORY_STANDARD) |
                        (d->map_host ? 1u << HURRAY_MEMORY_HOST_PINNED : 0u) |
                        (d->managed ? 1u << HURRAY_MEMORY_UNIFIED : 0u) |
                        (d->peers.empty() ? 0u : 1u << HURRAY_MEMORY_PEER);
  out->ipc = HURRAY_BACKEND_IPC_MEMORY | (d->ipc_events ? HURRAY_BACKEND_IPC_EVENTS : 0u);
  out->min_alignment = rt::kBaseAlignment;
  std::string peers;
  for (int32_t p : d->peers) peers += (peers.empty() ? "" : ",") + std::to_string(p);
  std::snprintf(out->detail, sizeof out->detail,
                "%s %d.%d, %llu MiB; STANDARD: %s; HOST_PINNED: %s; UNIFIED: %s; PEER: %s%s; "
                "IPC: memory (STANDARD, PEER)%s",
                rt::kVersionOf, rt::version_major(s->version), rt::version_minor(s->version),
                static_cast<unsigned long long>(d->total_mem >> 20), rt::kStandardAlloc,
                d->map_host ? rt::kPinnedAlloc : "none", d->managed ? rt::kManagedAlloc : "none",
                peers.empty() ? "none" : "devices ", peers.c_str(),
                d->ipc_events ? ", events" : ", no events");
  // release_after without a host function call waits on the host (whole or not said).
  // VMM memory crosses as descriptors (vmm.cpp); SHAREABLE STANDARD is made so.
  const char *vmm = d->vmm_granularity == 0 ? ""
                    : s->shareable_vmm      ? "; VMM descriptors (SHAREABLE)"
                                            : "; VMM descriptors";
  for (const char *note : {vmm, rt::has_host_func(s->api) ? "" : rt::kHostWaitNote}) {
    const size_t n = std::strlen(out->detail), note_size = std::strlen(note) + 1;
    if (n + note_size <= sizeof out->detail) std::memcpy(out->detail + n, note, note_size);
  }
  return HURRAY_OK;
}

// The device's stable identity: the runtime's device UUID (cuDeviceGetUuid,
// hipDeviceGetUuid), the same whatever CUDA_VISIBLE_DEVICES or
// HIP_VISIBLE_DEVICES reorder; NONE when the runtime cannot say.
hurray_status device_identity(void *state, int32_t device, hurray_backend_device_identity *out,
                              hurray_error *err) {
  auto [refused, s, d] = kit::enter_identity<const State>(state, device, out, err);
  if (refused != HURRAY_OK) return refused;
  uint8_t uuid[16] = {};
  if (rt::device_uuid(s->api, d->ref, uuid))
    hurray::kit::set_identity(out, HURRAY_BACKEND_ID_UUID, uuid, sizeof uuid);
  return HURRAY_OK;
}

}  // namespace hurray::gpu_stream
