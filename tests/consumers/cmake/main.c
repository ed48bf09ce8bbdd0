/* A consumer of the installed libhurray found with find_package(hurray):
 * validates a METAL table that uses events over IPC, which METAL does not
 * export by default, then again once the policy says it does. Returns
 * non-zero on a wrong result. */
#include <hurray.h>
#include <stdio.h>
#include <string.h>

#include "../../common/c_check.h"

int main(void) {
  hurray_buffer_handle h, back;
  hurray_error err;
  hurray_policy *policy = NULL;
  unsigned char wire[HURRAY_HANDLE_SIZE];

  memset(&h, 0, sizeof h);
  h.byte_size = 65536;
  h.alignment = HURRAY_IPC_ALIGNMENT;
  h.device_tag = HURRAY_DEVICE_METAL;
  h.sync_mode = HURRAY_SYNC_EVENT;
  h.memory_class = HURRAY_MEMORY_UNIFIED;
  CHECK(hurray_handle_encode(&h, wire, sizeof wire, &err) == HURRAY_OK);
  CHECK(hurray_handle_decode(wire, sizeof wire, &back, &err) == HURRAY_OK);
  CHECK(memcmp(&back, &h, sizeof h) == 0);

  CHECK(hurray_policy_create(&policy, &err) == HURRAY_OK);
  CHECK(hurray_policy_set_transport(policy, HURRAY_TRANSPORT_IPC, &err) == HURRAY_OK);
  CHECK(hurray_table_validate(wire, sizeof wire, policy, &err) == HURRAY_E_SYNC);
  CHECK(strcmp(err.rule_id, "BP-SYNC-IPC") == 0 && err.byte_offset == 13);
  CHECK(hurray_policy_set_ipc_sync(policy, HURRAY_DEVICE_METAL, HURRAY_IPC_SYNC_EVENTS,
                                   &err) == HURRAY_OK);
  CHECK(hurray_table_validate(wire, sizeof wire, policy, &err) == HURRAY_OK);
  hurray_policy_destroy(policy);

  if (checks_failed("cmake consumer")) return 1;
  printf("cmake consumer: OK (libhurray %s)\n", hurray_version_string());
  return 0;
}
