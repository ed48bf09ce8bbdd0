/* CHECK(cond) for the C test programs (consumers, ABI checks): a failed
 * condition is printed with its place and counted in `failures`; main
 * returns non-zero when any failed. C99, one translation unit each. */
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

#endif
