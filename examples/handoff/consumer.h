#ifndef HURRAY_EXAMPLE_CONSUMER_H
#define HURRAY_EXAMPLE_CONSUMER_H
#include <hurray.h>
/* Mean of a CPU float32 handoff; releases it. Returns -1 if it cannot use it. */
double consumer_mean(hurray_handoff *h);
#endif
