// The GPU stream driver: the record of an allocation made or imported here
// (plain, VMM or IPC memory), kept in the registry of live allocations
// (record in driver.h).
#include <new>

#include "driver.h"

namespace hurray::gpu_stream {

hurray_status record(State *s, const Allocation &a,
                     void (*give_back)(const State *, const Allocation &),
                     hurray_backend_allocation *out, hurray_error *err) noexcept {
  auto *r = new (std::nothrow) Allocation(a);
  if (r == nullptr || !s->live.add(r)) {
    delete r;
    give_back(s, a);
    return refuse(err, HURRAY_E_OUT_OF_MEMORY, "out of host memory");
  }
  out->data = vptr(r->data);
  out->byte_size = r->byte_size;
  out->alignment = hurray::kit::alignment_of(r->data);
  out->flags = 0;
  out->device = r->device;
  out->memory_class = r->memory_class;
  out->host = nullptr;
  out->plugin_data = r;
  return HURRAY_OK;
}

}  // namespace hurray::gpu_stream
