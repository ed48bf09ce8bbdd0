/* The offsets of hurray_backend_v1's members as published in 1.0.0, and its
 * size: "abi: the plugin table keeps its 1.0 layout" builds this once against
 * abi/hurray_backend.h (the baseline) and once against include/, and compares
 * the two outputs. A later entry may take a reserved slot (abi/plugin.suppr
 * lets abidiff pass that one change), never move an older member. */
#include <stddef.h>
#include <stdio.h>

#include "hurray_backend.h"

#define AT(m) printf("%s %zu\n", #m, offsetof(hurray_backend_v1, m))

int main(void) {
  printf("sizeof %zu\n", sizeof(hurray_backend_v1));
  AT(api_version); AT(size); AT(name); AT(device_tag); AT(reserved0);
  AT(probe); AT(shutdown); AT(device_count); AT(device_info); AT(alloc); AT(free);
  AT(copy_to_host); AT(copy_from_host); AT(classify); AT(event_record); AT(event_wait);
  AT(event_release); AT(ipc_export_memory); AT(ipc_import_memory); AT(ipc_export_event);
  AT(ipc_import_event); AT(native); AT(device_identity); AT(release_after);
  return 0;
}
