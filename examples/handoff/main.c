/* Two libraries, one buffer: the producer hands the same tensor to two
 * consumers; each releases its own handoff; the memory is freed after the
 * producer and both consumers are done. */
#include <stdio.h>

#include "consumer.h"
#include "producer.h"

int main(void) {
  hurray_handoff a, b;
  double ma, mb;
  hurray_buffer *buf = producer_make_ramp(1024);
  if (!buf || producer_share(buf, &a) || producer_share(buf, &b)) return 1;
  hurray_buffer_unref(buf); /* the producer is done; the consumers are not */
  ma = consumer_mean(&a);
  mb = consumer_mean(&b);
  printf("consumer A: mean %.1f, released: %s\n", ma, a.release ? "no" : "yes");
  printf("consumer B: mean %.1f, released: %s\n", mb, b.release ? "no" : "yes");
  return ma == 511.5 && mb == 511.5 && !a.release && !b.release ? 0 : 1;
}
