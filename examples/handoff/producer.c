/* A producer library: it owns float32 tensors and hands them out through
 * libhurray. Each consumer gets its own handoff; the memory goes away when
 * the producer and every consumer are done. */
#include "producer.h"

#include <stdio.h>

hurray_buffer *producer_make_ramp(uint64_t count) {
  hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
  hurray_buffer *buf = NULL;
  hurray_error err;
  float *p;
  uint64_t i;
  a.byte_size = count * sizeof(float);
  a.alignment = 4096;
  if (hurray_buffer_alloc(NULL, &a, &buf, &err) != HURRAY_OK) {
    fprintf(stderr, "producer: %s\n", err.message);
    return NULL;
  }
  p = (float *)hurray_buffer_data(buf);
  for (i = 0; i < count; ++i) p[i] = (float)i;
  return buf;
}

int producer_share(hurray_buffer *buf, hurray_handoff *out) {
  hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
  hurray_error err;
  e.flags = HURRAY_HANDOFF_READ_ONLY; /* consumers read; nobody writes */
  if (hurray_buffer_export(buf, &e, out, &err) != HURRAY_OK) {
    fprintf(stderr, "producer: %s\n", err.message);
    return -1;
  }
  return 0;
}
