/* CHECK(cond) for the C test programs (consumers, ABI checks): a failed
 * condition is printed with its place and counted in `failures`; main
 * returns non-zero when any failed (checks_failed). C99, one translation unit each. */
#ifndef HURRAY_TEST_C_CHECK_H
#define HURRAY_TEST_C_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond)                                                          \
  do {                                                                       \
    if (!(cond)) {                                                           \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                            \
    }                                                                        \
  } while (0)

/* At the end of main: non-zero, with a line on stderr naming `who`, when a
 * CHECK failed. */
static int checks_failed(const char *who) {
  if (failures) fprintf(stderr, "%s: %d check(s) failed\n", who, failures);
  return failures != 0;
}

#endif
