/* examples/ipc/uv-producer.c - the poll-producer.c of this folder on libuv.
 *
 * Usage: hurray-example-ipc-uv-producer SOCKET CONSUMERS COUNT
 *
 * Listens on SOCKET and hands COUNT shareable 64 KiB buffers (buffer i
 * filled with the byte i % 255 + 1) to each consumer that connects
 * (hurray-example-ipc-consumer SOCKET COUNT); returns 0 once CONSUMERS of
 * them have released every buffer. libhurray's descriptors go into the loop
 * as uv_poll_t handles for UV_READABLE: hurray_ipc_listener_fd() (accept
 * with timeout 0 until it says HURRAY_E_IO) and each channel's
 * hurray_ipc_fd() (progress, then hurray_ipc_try_send what there is room
 * for). A 60-second timer ends the loop if that has not happened. */
#define _GNU_SOURCE /* libuv's headers use POSIX threads' types */
#include <hurray_ipc.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#define BUFFER_BYTES (64u << 10)

struct consumer {
  uv_poll_t poll; /* first: the handle's address is the consumer's */
  hurray_ipc_channel *ch;
  int next, back;
};

static hurray_buffer **bufs;
static int count, want, served;
static hurray_ipc_listener *listener;
static uv_poll_t listener_poll;
static uv_timer_t deadline;

static void on_release(void *user, uint64_t id, hurray_ipc_release_reason reason) {
  (void)id;
  if (reason == HURRAY_IPC_RELEASED) ++((struct consumer *)user)->back;
}

static void freed(uv_handle_t *h) {
  struct consumer *c = (struct consumer *)h;
  hurray_ipc_close(c->ch);
  free(c);
}

static void stop_all(void) {
  uv_poll_stop(&listener_poll);
  uv_timer_stop(&deadline);
  uv_close((uv_handle_t *)&listener_poll, NULL);
  uv_close((uv_handle_t *)&deadline, NULL);
  uv_stop(uv_default_loop()); /* channels still open (not served) end with the program */
}

/* Send what there is room for; close the channel when it is done with. */
static void serve(struct consumer *c) {
  hurray_error err;
  hurray_ipc_stats s;
  while (c->next < count) {
    uint64_t id;
    if (hurray_ipc_try_send(c->ch, bufs[c->next], NULL, &id, &err) != HURRAY_OK || id == 0)
      break; /* no room (the descriptor says when there is) or the channel is gone */
    ++c->next;
  }
  s.size = sizeof s;
  hurray_ipc_get_stats(c->ch, &s, NULL);
  if (c->back == count || s.closed) {
    if (c->back == count) {
      printf("uv-producer: a consumer released all %d buffers\n", count);
      if (++served == want) stop_all();
    }
    uv_poll_stop(&c->poll);
    uv_close((uv_handle_t *)&c->poll, freed);
  }
}

static void on_channel(uv_poll_t *p, int status, int events) {
  struct consumer *c = (struct consumer *)p;
  (void)status;
  (void)events;
  hurray_ipc_progress(c->ch, 0, NULL, NULL); /* releases; a closed channel shows in serve */
  serve(c);
}

static void on_listener(uv_poll_t *p, int status, int events) {
  hurray_ipc_channel *ch;
  hurray_error err;
  hurray_status st;
  (void)p;
  (void)status;
  (void)events;
  while ((st = hurray_ipc_accept(listener, 0, &ch, &err)) != HURRAY_E_IO) {
    struct consumer *c;
    if (st != HURRAY_OK) continue; /* a refused or malformed peer: the next */
    c = (struct consumer *)calloc(1, sizeof *c);
    if (!c || uv_poll_init(uv_default_loop(), &c->poll, hurray_ipc_fd(ch)) != 0) {
      free(c);
      hurray_ipc_close(ch);
      continue;
    }
    c->ch = ch;
    hurray_ipc_set_release_callback(ch, on_release, c, NULL);
    uv_poll_start(&c->poll, UV_READABLE, on_channel);
    serve(c);
  }
}

static void on_deadline(uv_timer_t *t) {
  (void)t;
  fprintf(stderr, "uv-producer: %d of %d consumers served in 60 s\n", served, want);
  uv_stop(uv_default_loop());
}

int main(int argc, char **argv) {
  hurray_error err;
  int i;
  if (argc < 4) {
    fprintf(stderr, "usage: %s SOCKET CONSUMERS COUNT\n", argv[0]);
    return 2;
  }
  want = atoi(argv[2]);
  count = atoi(argv[3]);
  if (want < 1 || count < 1) return 2;
  bufs = (hurray_buffer **)calloc((size_t)count, sizeof *bufs);
  for (i = 0; bufs && i < count; ++i) {
    hurray_alloc_desc d = HURRAY_ALLOC_DESC_INIT;
    d.flags = HURRAY_ALLOC_SHAREABLE;
    d.byte_size = BUFFER_BYTES;
    d.alignment = HURRAY_IPC_ALIGNMENT;
    if (hurray_buffer_alloc(NULL, &d, &bufs[i], &err) != HURRAY_OK) return 1;
    memset(hurray_buffer_data(bufs[i]), i % 255 + 1, BUFFER_BYTES);
  }
  if (!bufs || hurray_ipc_listen(argv[1], NULL, &listener, &err) != HURRAY_OK) {
    fprintf(stderr, "uv-producer: %s\n", bufs ? err.message : "out of memory");
    return 1;
  }
  uv_poll_init(uv_default_loop(), &listener_poll, hurray_ipc_listener_fd(listener));
  uv_poll_start(&listener_poll, UV_READABLE, on_listener);
  uv_timer_init(uv_default_loop(), &deadline);
  uv_timer_start(&deadline, on_deadline, 60000, 0);
  printf("uv-producer: listening on %s\n", argv[1]);
  fflush(stdout);
  uv_run(uv_default_loop(), UV_RUN_DEFAULT);
  printf("uv-producer: %d of %d consumers served\n", served, want);
  hurray_ipc_listener_destroy(listener);
  for (i = 0; i < count; ++i) hurray_buffer_unref(bufs[i]);
  free(bufs);
  return served == want ? 0 : 1;
}
