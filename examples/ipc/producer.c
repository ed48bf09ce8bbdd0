/* examples/ipc/producer.c - hand buffers to another process without copying.
 *
 * Run in one terminal:   hurray-example-ipc-producer [SOCKET] [COUNT]
 * and in another:        hurray-example-ipc-consumer [SOCKET] [COUNT]
 * (SOCKET defaults to /tmp/hurray-ipc-example.sock, COUNT to 3).
 *
 * The producer allocates COUNT shareable 1 MiB CPU buffers (memfds), fills
 * buffer i with the byte i + 1, sends each over the channel, drops its own
 * reference, and waits until the consumer has released every one: only then
 * is the memory freed (BP-IPC-RELEASE). */
#include <hurray_ipc.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void on_release(void *user, uint64_t id, hurray_ipc_release_reason reason) {
  int *left = (int *)user;
  --*left;
  printf("producer: buffer %llu came back (%s); %d still out\n", (unsigned long long)id,
         reason == HURRAY_IPC_RELEASED ? "released by the consumer" : "the consumer is gone",
         *left);
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "/tmp/hurray-ipc-example.sock";
  const int count = argc > 2 ? atoi(argv[2]) : 3;
  hurray_ipc_listener *listener = NULL;
  hurray_ipc_channel *ch = NULL;
  hurray_ipc_peer_info peer;
  hurray_error err;
  int i, left = 0;

  if (hurray_ipc_listen(path, NULL, &listener, &err) != HURRAY_OK) {
    fprintf(stderr, "producer: %s\n", err.message);
    return 1;
  }
  printf("producer: listening on %s; start the consumer\n", path);
  fflush(stdout);
  if (hurray_ipc_accept(listener, 60000, &ch, &err) != HURRAY_OK) {
    fprintf(stderr, "producer: %s\n", err.message);
    hurray_ipc_listener_destroy(listener);
    return 1;
  }
  peer.size = sizeof peer;
  hurray_ipc_peer(ch, &peer, NULL);
  printf("producer: consumer pid %d connected (protocol %u, %u device(s))\n", (int)peer.pid,
         peer.protocol_version, peer.device_count);
  hurray_ipc_set_release_callback(ch, on_release, &left, NULL);

  for (i = 0; i < count; ++i) {
    hurray_alloc_desc d = HURRAY_ALLOC_DESC_INIT;
    hurray_buffer *buf = NULL;
    uint64_t id = 0;
    d.flags = HURRAY_ALLOC_SHAREABLE;
    d.byte_size = 1u << 20;
    d.alignment = HURRAY_IPC_ALIGNMENT; /* BP-ALIGN-IPC */
    if (hurray_buffer_alloc(NULL, &d, &buf, &err) != HURRAY_OK) {
      fprintf(stderr, "producer: %s\n", err.message);
      break;
    }
    memset(hurray_buffer_data(buf), i + 1, (size_t)d.byte_size);
    if (hurray_ipc_send(ch, buf, NULL, &id, &err) != HURRAY_OK) {
      fprintf(stderr, "producer: send: %s\n", err.message);
      hurray_buffer_unref(buf);
      break;
    }
    ++left;
    printf("producer: sent buffer %llu (1 MiB of 0x%02x) without copying it\n",
           (unsigned long long)id, i + 1);
    hurray_buffer_unref(buf); /* the channel keeps it alive until released */
  }
  fflush(stdout);
  while (left > 0) {
    if (hurray_ipc_progress(ch, -1, NULL, &err) != HURRAY_OK) {
      printf("producer: %s\n", err.message);
      break;
    }
    fflush(stdout);
  }
  printf("producer: every buffer is back; memory freed\n");
  hurray_ipc_close(ch);
  hurray_ipc_listener_destroy(listener);
  return 0;
}
