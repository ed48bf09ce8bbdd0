// The plugin's table, written once: kit/entries.h declares the entry
// functions by their conventional names in the plugin's namespace and
// defines kit_table, the constant table that holds each behind the kit's
// exception barrier (entry.h). A plugin's header includes this header, then
// entries.h inside its namespace; its plugin.cpp keeps the table and
// exports it by hand:
//
//   // state.h
//   #include "kit/table.h"
//   namespace hurray::myplugin {
//   #include "kit/entries.h"  // probe ... native, device_identity, release_after
//   }
//
//   // plugin.cpp
//   namespace hurray::myplugin {
//   constinit const hurray_backend_v1 kTable =
//       kit_table<kit::Ipc::kEntries>(HURRAY_DEVICE_X);  // or kit::Ipc::kNone
//   }
//   extern "C" HURRAY_API const hurray_backend_v1 *hurray_backend_entry(void) {
//     return &hurray::myplugin::kTable;
//   }
//
// free is spelled free_ (the name free is libc's). Every kit plugin has
// device_identity and release_after. A plugin without IPC takes
// kit::Ipc::kNone: those entries stay NULL (and are declared, never
// defined). A plugin's own optional entries (ipc_export_pointer) go into a
// copy of the table, each `t.field = kit::barrier<&fn, "field">;`.
#pragma once

#include <hurray_backend.h>

#include "entry.h"

namespace hurray::kit {

// Whether a plugin's table has the four IPC entries (kit_table).
enum class Ipc { kNone, kEntries };

// device_count() of a plugin whose State holds its devices in `devices`.
template <class State>
int32_t count_devices(void *state) noexcept {
  const auto *s = static_cast<const State *>(state);
  return s == nullptr ? 0 : static_cast<int32_t>(s->devices.size());
}

}  // namespace hurray::kit
