/* A C99 consumer of the installed libhurray, built with the flags of
 * hurray.pc: encodes a table, decodes it, validates it under an IPC policy
 * and checks the rule IDs diagnosed. Returns non-zero on a wrong result. */
#include <hurray.h>
#include <stdio.h>
#include <string.h>

#include "../../common/c_check.h"

int main(void) {
  hurray_buffer_handle h, back;
  hurray_error err, diag[4];
  hurray_policy *policy = NULL;
  unsigned char table[2 * HURRAY_HANDLE_SIZE];
  size_t n_errors = 0, n_warnings = 0;

  CHECK(hurray_version() == HURRAY_VERSION_NUMBER);

  /* A 1 MiB ROCm buffer, 64-aligned, signalled by an event. */
  memset(&h, 0, sizeof h);
  h.byte_size = 1u << 20;
  h.alignment = 64;
  h.device_tag = HURRAY_DEVICE_ROCM;
  h.sync_mode = HURRAY_SYNC_EVENT;
  h.memory_class = HURRAY_MEMORY_STANDARD;
  CHECK(hurray_handle_encode(&h, table, HURRAY_HANDLE_SIZE, &err) == HURRAY_OK);
  CHECK(hurray_handle_encode(&h, table + HURRAY_HANDLE_SIZE, HURRAY_HANDLE_SIZE,
                             &err) == HURRAY_OK);
  CHECK(table[2] == 0x10 && table[8] == 64 && table[12] == HURRAY_DEVICE_ROCM);
  CHECK(hurray_handle_decode(table, HURRAY_HANDLE_SIZE, &back, &err) == HURRAY_OK);
  CHECK(back.byte_size == h.byte_size && back.alignment == 64 &&
        back.device_tag == HURRAY_DEVICE_ROCM && back.sync_mode == HURRAY_SYNC_EVENT);

  /* In process: valid, with a SHOULD (GPU memory should be page-aligned). */
  CHECK(hurray_table_validate(table, sizeof table, NULL, &err) == HURRAY_OK);
  CHECK(hurray_table_diagnose(table, sizeof table, NULL, diag, 4, &n_errors,
                              &n_warnings, &err) == HURRAY_OK);
  CHECK(n_errors == 0 && n_warnings == 2);
  CHECK(strcmp(diag[0].rule_id, "BP-ALIGN-GPU-PAGE") == 0 &&
        diag[0].severity == HURRAY_SEVERITY_WARNING);

  /* Over IPC the same table is rejected: alignment below 4096. */
  CHECK(hurray_policy_create(&policy, &err) == HURRAY_OK);
  CHECK(hurray_policy_set_transport(policy, HURRAY_TRANSPORT_IPC, &err) == HURRAY_OK);
  CHECK(hurray_table_validate(table, sizeof table, policy, &err) == HURRAY_E_ALIGNMENT);
  CHECK(strcmp(err.rule_id, "BP-ALIGN-IPC") == 0 && err.buffer_index == 0 &&
        err.byte_offset == 8);
  CHECK(strcmp(hurray_rule_id((hurray_rule)err.rule), "BP-ALIGN-IPC") == 0);
  hurray_policy_destroy(policy);

  if (checks_failed("c99 consumer")) return 1;
  printf("c99 consumer: OK (libhurray %s)\n", hurray_version_string());
  return 0;
}
