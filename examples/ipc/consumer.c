/* examples/ipc/consumer.c - receive buffers from hurray-example-ipc-producer
 * (see producer.c): each arrives as a hurray_handoff whose memory is mapped
 * here, no byte copied. Reading it, then releasing it, tells the producer.
 *
 * Usage: hurray-example-ipc-consumer [SOCKET] [COUNT] */
#define _POSIX_C_SOURCE 200809L
#include <hurray_ipc.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "/tmp/hurray-ipc-example.sock";
  const int count = argc > 2 ? atoi(argv[2]) : 3;
  const struct timespec pause = {0, 100 * 1000 * 1000};
  hurray_ipc_channel *ch = NULL;
  hurray_policy *ipc = NULL;
  hurray_error err;
  int i, tries;

  /* the producer may not be listening yet: try for 10 seconds */
  for (tries = 0; hurray_ipc_connect(path, NULL, &ch, &err) != HURRAY_OK; ++tries) {
    if (tries == 100) {
      fprintf(stderr, "consumer: %s\n", err.message);
      return 1;
    }
    nanosleep(&pause, NULL);
  }
  printf("consumer: connected to %s\n", path);
  hurray_policy_create(&ipc, NULL);
  hurray_policy_set_transport(ipc, HURRAY_TRANSPORT_IPC, NULL);

  for (i = 0; i < count; ++i) {
    hurray_handoff h;
    hurray_buffer_handle hd;
    uint64_t id = 0, n, sum = 0;
    const unsigned char *p;
    if (hurray_ipc_receive(ch, 30000, &h, &id, &err) != HURRAY_OK) {
      fprintf(stderr, "consumer: receive: %s\n", err.message);
      break;
    }
    /* an ordinary handoff: check it, acquire it, read it, release it */
    if (hurray_handoff_check(&h, ipc, &err) != HURRAY_OK ||
        hurray_handoff_acquire(NULL, &h, NULL, &err) != HURRAY_OK) {
      fprintf(stderr, "consumer: %s\n", err.message);
      hurray_ipc_release(&h, NULL);
      break;
    }
    hurray_handle_decode(h.handle, sizeof h.handle, &hd, NULL);
    p = (const unsigned char *)h.data;
    for (n = 0; n < hd.byte_size; ++n) sum += p[n];
    printf("consumer: buffer %llu: %llu bytes mapped at %p, every byte 0x%02x: %s\n",
           (unsigned long long)id, (unsigned long long)hd.byte_size, h.data, p[0],
           sum == (uint64_t)p[0] * hd.byte_size ? "yes" : "NO");
    if (hurray_ipc_release(&h, &err) != HURRAY_OK)
      printf("consumer: release did not reach the producer: %s\n", err.message);
    else
      printf("consumer: released buffer %llu\n", (unsigned long long)id);
    fflush(stdout);
  }
  hurray_policy_destroy(ipc);
  hurray_ipc_close(ch);
  return i == count ? 0 : 1;
}
