/* hurray.h compiles on its own as strict C99 (-std=c99 -pedantic -Werror). */
#include <hurray.h>

int hurray_header_c99_probe(void);
int hurray_header_c99_probe(void) {
  hurray_buffer_handle h = {0, 64, HURRAY_DEVICE_CPU, HURRAY_SYNC_PRODUCER_SYNCED,
                            HURRAY_MEMORY_STANDARD, 0};
  hurray_error e;
  e.status = HURRAY_OK;
  return (int)h.alignment + e.status + HURRAY_HANDLE_SIZE + HURRAY_RULE_COLOC;
}
