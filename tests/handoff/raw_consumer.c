#include "raw_consumer.h"

uint64_t raw_consumer_sum(hurray_handoff *h) {
  uint64_t size = 0, sum = 0, i;
  const unsigned char *p;
  if (!h->release || h->version != HURRAY_HANDOFF_VERSION) return 0;
  if (h->handle[12] != HURRAY_DEVICE_CPU || h->handle[13] != HURRAY_SYNC_PRODUCER_SYNCED) return 0;
  for (i = 0; i < 8; ++i) size |= (uint64_t)h->handle[i] << (8 * i); /* little-endian */
  p = (const unsigned char *)h->data;
  for (i = 0; i < size; ++i) sum += p[i];
  h->release(h); /* exactly once; sets h->release to NULL */
  return sum;
}
