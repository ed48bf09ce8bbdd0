/* A consumer library that does not link libhurray: it reads the handoff
 * struct (layout from hurray.h), honours sync_mode and releases the buffer
 * through the function pointer, exactly once. */
#include "consumer.h"

double consumer_mean(hurray_handoff *h) {
  uint64_t size = 0, i, n;
  const float *p;
  double sum = 0;
  if (h->version != HURRAY_HANDOFF_VERSION || !h->release) return -1;
  if (h->handle[12] != HURRAY_DEVICE_CPU) return -1;           /* device_tag */
  if (h->handle[13] != HURRAY_SYNC_PRODUCER_SYNCED) return -1; /* CPU: always */
  for (i = 0; i < 8; ++i) size |= (uint64_t)h->handle[i] << (8 * i);
  n = size / sizeof(float);
  p = (const float *)h->data;
  for (i = 0; i < n; ++i) sum += p[i];
  h->release(h); /* done: the producer may free the memory now */
  return n ? sum / (double)n : 0;
}
