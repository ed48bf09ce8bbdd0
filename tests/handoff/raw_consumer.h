/* A consumer that only includes hurray.h for the struct layout and never
 * calls into libhurray: it is built as its own shared object without
 * linking libhurray (checked by "handoff: raw consumer links no libhurray"). */
#ifndef HURRAY_TEST_RAW_CONSUMER_H
#define HURRAY_TEST_RAW_CONSUMER_H
#include <hurray.h>
#ifdef __cplusplus
extern "C" {
#endif
/* Sum the bytes of a CPU, PRODUCER_SYNCED handoff, then release it through
 * the function pointer. Returns 0 for anything else (nothing released). */
uint64_t raw_consumer_sum(hurray_handoff *h);
#ifdef __cplusplus
}
#endif
#endif
