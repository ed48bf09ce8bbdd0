// libhurray-kit-test.so: a plugin built on the kit (hurray_add_backend_plugin)
// whose every entry throws on demand, for barrier_test.cpp. The state is a
// pointer to a Mode the test owns (probe reads it from *state): kNormal runs
// the kit's own checks, the others throw from inside the entry. Never
// installed, never in libhurray's plugin folder. Its entries and table come
// from kit/entries.h, as a real plugin's do.
#include <hurray_backend.h>

#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "kit/entry.h"
#include "kit/errors.h"
#include "kit/table.h"
#include "kit_test_modes.h"

namespace hurray::kit_test {

// The entry points and the table (src/backends/kit/entries.h).
#include "kit/entries.h"

namespace {

// Throw what the mode says (a plugin's own code failing deep inside).
void act(const void *state) {
  if (state == nullptr) return;
  switch (*static_cast<const Mode *>(state)) {
    case Mode::kBadAlloc:
      throw std::bad_alloc();
    case Mode::kRuntimeError:
      throw std::runtime_error("the test plugin threw");
    case Mode::kInt:
      throw 42;
    case Mode::kNormal:
      break;
  }
}

constexpr size_t kDevices = 1;

}  // namespace

hurray_status probe(void **state, hurray_error *err) {
  if (state == nullptr)
    return hurray::kit::fail(err, HURRAY_E_INVALID_ARGUMENT, "kit-test: probe: state is NULL");
  act(*state);
  return HURRAY_OK;
}
void shutdown(void *state) { act(state); }
int32_t device_count(void *state) {
  act(state);
  return static_cast<int32_t>(kDevices);
}
hurray_status device_info(void *state, int32_t device, hurray_backend_device_info *out,
                          hurray_error *err) {
  if (const hurray_status st = hurray::kit::check_device(state, device, kDevices, err)) return st;
  act(state);
  const std::string name = "kit-test device " + std::to_string(device);  // may throw, like CUDA's
  std::memset(out, 0, sizeof *out);
  std::memcpy(out->name, name.c_str(), name.size() + 1);
  return HURRAY_OK;
}
hurray_status alloc(void *state, int32_t, uint8_t, uint64_t, uint32_t, uint32_t,
                    hurray_backend_allocation *, hurray_error *err) {
  act(state);
  return hurray::kit::fail(err, HURRAY_E_UNSUPPORTED, "kit-test: alloc allocates nothing");
}
void free_(void *state, hurray_backend_allocation *) { act(state); }
hurray_status copy_to_host(void *state, const hurray_backend_allocation *src, uint64_t offset,
                           void *dst, uint64_t n, hurray_error *err) {
  act(state);
  return hurray::kit::check_copy(src, offset, dst, n, "copy_to_host", err);
}
hurray_status copy_from_host(void *state, hurray_backend_allocation *dst, uint64_t offset,
                             const void *src, uint64_t n, hurray_error *err) {
  act(state);
  return hurray::kit::check_copy(dst, offset, src, n, "copy_from_host", err);
}
hurray_status classify(void *state, const void *, int32_t *, uint8_t *, hurray_error *err) {
  act(state);
  return hurray::kit::fail(err, HURRAY_E_INVALID_ARGUMENT, "kit-test: classify knows nothing");
}
hurray_status event_record(void *state, int32_t, void *, void **, uint64_t *, hurray_error *) {
  act(state);
  return HURRAY_OK;
}
hurray_status event_wait(void *state, int32_t, void *, uint64_t, void *, hurray_error *) {
  act(state);
  return HURRAY_OK;
}
void event_release(void *state, int32_t, void *) { act(state); }
hurray_status ipc_export_memory(void *state, const hurray_backend_allocation *,
                                hurray_backend_ipc_handle *, hurray_error *) {
  act(state);
  return HURRAY_OK;
}
hurray_status ipc_import_memory(void *state, int32_t, const hurray_backend_ipc_handle *, uint8_t,
                                hurray_backend_allocation *, hurray_error *) {
  act(state);
  return HURRAY_OK;
}
hurray_status ipc_export_event(void *state, int32_t, void *, hurray_backend_ipc_handle *,
                               hurray_error *) {
  act(state);
  return HURRAY_OK;
}
hurray_status ipc_import_event(void *state, int32_t, const hurray_backend_ipc_handle *, void **,
                               hurray_error *) {
  act(state);
  return HURRAY_OK;
}
hurray_status native(void *state, int32_t, hurray_backend_native *, hurray_error *) {
  act(state);
  return HURRAY_OK;
}

hurray_status device_identity(void *state, int32_t, hurray_backend_device_identity *,
                              hurray_error *err) {
  act(state);
  return hurray::kit::fail(err, HURRAY_E_UNSUPPORTED, "kit-test: device_identity knows nothing");
}
hurray_status release_after(void *state, int32_t, void *, void *, uint64_t, void (*)(void *),
                            void *, hurray_error *err) {
  act(state);
  return hurray::kit::fail(err, HURRAY_E_UNSUPPORTED, "kit-test: release_after releases nothing");
}

constinit const hurray_backend_v1 kTable = kit_table<kit::Ipc::kEntries>(kDeviceTag);

}  // namespace hurray::kit_test

extern "C" __attribute__((visibility("default"))) const hurray_backend_v1 *hurray_backend_entry(
    void) {
  return &hurray::kit_test::kTable;
}
