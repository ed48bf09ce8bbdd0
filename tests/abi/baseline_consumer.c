/* An "old" consumer: compiled against the frozen header abi/hurray.h (the ABI
 * baseline), linked to and run with the freshly built libhurray. Everything a
 * program built against the baseline relies on must keep working: struct
 * layouts, enum values, status codes, rule IDs and the behaviour of encode,
 * decode and table validation. Exits non-zero on the first run with any
 * mismatch, printing each one. */
#include <stdio.h>
#include <string.h>

#include "hurray.h"

#include "../common/c_check.h"

/* byte_size 0x0102030405060708, alignment 4096, CUDA, EVENT, UNIFIED. */
static const unsigned char kWire[HURRAY_HANDLE_SIZE] = {
    0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,
    0x00, 0x10, 0x00, 0x00, 0x01, 0x01, 0x02, 0x00};

int main(void) {
  hurray_buffer_handle h, back;
  hurray_error err;
  unsigned char table[2 * HURRAY_HANDLE_SIZE];
  unsigned v = hurray_version();

  /* Same major version, and not older than the baseline. */
  CHECK(v / 10000 == HURRAY_VERSION_MAJOR);
  CHECK(v >= HURRAY_VERSION_NUMBER);

  memset(&h, 0, sizeof h);
  h.byte_size = 0x0102030405060708u;
  h.alignment = 4096;
  h.device_tag = HURRAY_DEVICE_CUDA;
  h.sync_mode = HURRAY_SYNC_EVENT;
  h.memory_class = HURRAY_MEMORY_UNIFIED;

  /* encode / decode */
  CHECK(hurray_handle_encode(&h, table, sizeof table, &err) == HURRAY_OK);
  CHECK(memcmp(table, kWire, sizeof kWire) == 0);
  memset(&back, 0xAA, sizeof back);
  CHECK(hurray_handle_decode(table, HURRAY_HANDLE_SIZE, &back, &err) == HURRAY_OK);
  CHECK(memcmp(&back, &h, sizeof h) == 0);
  CHECK(hurray_handle_decode(table, 15, &back, &err) == HURRAY_E_SIZE);
  CHECK(err.status == HURRAY_E_SIZE && err.rule == HURRAY_RULE_SIZE);
  CHECK(strcmp(err.rule_id, "BP-SIZE") == 0);

  /* A valid two-handle table, then the same with handle 1 elsewhere. */
  memcpy(table + HURRAY_HANDLE_SIZE, kWire, HURRAY_HANDLE_SIZE);
  CHECK(hurray_table_validate(table, sizeof table, NULL, &err) == HURRAY_OK);
  table[HURRAY_HANDLE_SIZE + 14] = HURRAY_MEMORY_STANDARD;
  CHECK(hurray_table_validate(table, sizeof table, NULL, &err) == HURRAY_E_COLOCATION);
  CHECK(err.status == HURRAY_E_COLOCATION && err.rule == HURRAY_RULE_COLOC);
  CHECK(err.severity == HURRAY_SEVERITY_ERROR);
  CHECK(err.buffer_index == 1 && err.byte_offset == HURRAY_HANDLE_SIZE + 14);
  CHECK(strcmp(err.rule_id, "BP-COLOC") == 0);
  CHECK(strstr(err.message, "BP-COLOC") != NULL);
  CHECK(strcmp(hurray_status_name(HURRAY_E_COLOCATION), "HURRAY_E_COLOCATION") == 0);

  /* The reserved byte, and a table that is not a whole number of handles. */
  memcpy(table + HURRAY_HANDLE_SIZE, kWire, HURRAY_HANDLE_SIZE);
  table[HURRAY_HANDLE_SIZE + 15] = 1;
  CHECK(hurray_table_validate(table, sizeof table, NULL, &err) == HURRAY_E_RESERVED);
  CHECK(strcmp(err.rule_id, "BP-RESERVED") == 0);
  CHECK(hurray_table_validate(table, 17, NULL, &err) == HURRAY_E_SIZE);
  CHECK(strcmp(err.rule_id, "BP-SIZE") == 0);

  if (checks_failed("baseline header consumer")) return 1;
  printf("baseline header consumer: OK against libhurray %s\n",
         hurray_version_string());
  return 0;
}
