/* Plugins the loader must refuse, one per compile definition:
 * BAD_VERSION (api_version 99), BAD_SIZE (a table too small), NO_ENTRY (no
 * entry symbol), NULL_FN (a required function missing). Each claims tag 0xF1. */
#include <hurray_backend.h>

#include <stddef.h>

static hurray_status probe(void **state, hurray_error *err) { (void)err; *state = NULL; return HURRAY_OK; }
static int32_t count(void *s) { (void)s; return 1; }

static hurray_backend_v1 table = {HURRAY_BACKEND_API_VERSION, sizeof(hurray_backend_v1), "bad", 0xF1,
                                  {0}, probe, NULL, count, NULL, NULL, NULL, NULL, NULL, NULL,
                                  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                  NULL, {NULL}};

#ifndef NO_ENTRY
__attribute__((visibility("default"))) const hurray_backend_v1 *hurray_backend_entry(void) {
#if defined(BAD_VERSION)
  table.api_version = 99;
#elif defined(BAD_SIZE)
  table.size = 16;
#endif
  return &table; /* NULL_FN: device_info and the rest are NULL */
}
#endif
