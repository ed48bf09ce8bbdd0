#ifndef HURRAY_EXAMPLE_PRODUCER_H
#define HURRAY_EXAMPLE_PRODUCER_H
#include <hurray.h>
/* count float32 values 0, 1, 2, ... in page-aligned CPU memory. */
hurray_buffer *producer_make_ramp(uint64_t count);
/* One more read-only handoff of buf for one consumer. 0 on success. */
int producer_share(hurray_buffer *buf, hurray_handoff *out);
#endif
