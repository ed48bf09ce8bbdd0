/* examples/ipc/poll-producer.c - one thread serves many consumers with poll().
 *
 * Usage: hurray-example-ipc-poll-producer SOCKET CONSUMERS COUNT [SECONDS]
 *
 * Listens on SOCKET and hands COUNT shareable 64 KiB buffers (buffer i
 * filled with the byte i % 255 + 1) to every consumer that connects, e.g.
 * hurray-example-ipc-consumer SOCKET COUNT. It returns 0 once CONSUMERS
 * consumers have each been sent every buffer and released all of them,
 * 1 if that has not happened within SECONDS (default 60).
 *
 * Everything is driven by one poll() over descriptors libhurray hands out:
 *  - hurray_ipc_listener_fd(): readable whenever hurray_ipc_accept() with
 *    timeout 0 would make progress (a connection, or a handshake's HELLO);
 *  - hurray_ipc_fd() of each channel: readable when a release came, the peer
 *    hung up, or, after hurray_ipc_try_send() found no room, there is room.
 * Nothing here ever waits on one peer: a consumer that reads nothing only
 * keeps its own buffers waiting (hurray_ipc_try_send), a connection that
 * never says HELLO waits inside the listener, and a peer that breaks the
 * protocol loses its own channel. */
#define _POSIX_C_SOURCE 200809L
#include <hurray_ipc.h>

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_CONSUMERS 64
#define BUFFER_BYTES (64u << 10)

struct consumer {
  hurray_ipc_channel *ch;
  int next;     /* the next buffer to send */
  int back;     /* buffers released */
  int pid;
};

static void on_release(void *user, uint64_t id, hurray_ipc_release_reason reason) {
  struct consumer *c = (struct consumer *)user;
  (void)id;
  if (reason == HURRAY_IPC_RELEASED) ++c->back;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The channel is done with: served (every buffer back) or dropped. */
static int done(struct consumer *c, int count, const char *why) {
  const int served = c->back == count;
  if (served)
    printf("poll-producer: consumer pid %d served: %d buffers sent and released\n", c->pid,
           count);
  else
    printf("poll-producer: consumer pid %d dropped (%s)\n", c->pid, why);
  fflush(stdout);
  hurray_ipc_close(c->ch);
  c->ch = NULL;
  return served;
}

int main(int argc, char **argv) {
  struct consumer cs[MAX_CONSUMERS];
  hurray_buffer **bufs;
  hurray_ipc_listener *l = NULL;
  hurray_error err;
  int want, count, served = 0, i, n = 0, np;
  double deadline;

  if (argc < 4) {
    fprintf(stderr, "usage: %s SOCKET CONSUMERS COUNT [SECONDS]\n", argv[0]);
    return 2;
  }
  want = atoi(argv[2]);
  count = atoi(argv[3]);
  deadline = now_s() + (argc > 4 ? atof(argv[4]) : 60.0);
  if (want < 1 || count < 1) return 2;
  bufs = (hurray_buffer **)calloc((size_t)count, sizeof *bufs);
  for (i = 0; bufs && i < count; ++i) {
    hurray_alloc_desc d = HURRAY_ALLOC_DESC_INIT;
    d.flags = HURRAY_ALLOC_SHAREABLE;
    d.byte_size = BUFFER_BYTES;
    d.alignment = HURRAY_IPC_ALIGNMENT;
    if (hurray_buffer_alloc(NULL, &d, &bufs[i], &err) != HURRAY_OK) {
      fprintf(stderr, "poll-producer: %s\n", err.message);
      return 1;
    }
    memset(hurray_buffer_data(bufs[i]), i % 255 + 1, BUFFER_BYTES);
  }
  if (!bufs || hurray_ipc_listen(argv[1], NULL, &l, &err) != HURRAY_OK) {
    fprintf(stderr, "poll-producer: %s\n", bufs ? err.message : "out of memory");
    return 1;
  }
  printf("poll-producer: listening on %s\n", argv[1]);
  fflush(stdout);

  while (served < want && now_s() < deadline) {
    struct pollfd p[MAX_CONSUMERS + 1];
    int map[MAX_CONSUMERS + 1];
    np = 1;
    p[0].fd = hurray_ipc_listener_fd(l);
    p[0].events = POLLIN;
    for (i = 0; i < n; ++i) {
      if (!cs[i].ch) continue;
      p[np].fd = hurray_ipc_fd(cs[i].ch);
      p[np].events = POLLIN;
      map[np++] = i;
    }
    if (poll(p, (nfds_t)np, 100) < 0) break;
    /* every connection whose handshake is done, until accept says there is none */
    if (p[0].revents & POLLIN) {
      hurray_ipc_channel *ch;
      hurray_status st;
      while ((st = hurray_ipc_accept(l, 0, &ch, &err)) != HURRAY_E_IO) {
        hurray_ipc_peer_info info;
        if (st != HURRAY_OK) continue; /* a refused or malformed peer: next */
        if (n == MAX_CONSUMERS) {
          hurray_ipc_close(ch);
          continue;
        }
        memset(&cs[n], 0, sizeof cs[n]);
        cs[n].ch = ch;
        info.size = sizeof info;
        if (hurray_ipc_peer(ch, &info, NULL) == HURRAY_OK) cs[n].pid = info.pid;
        hurray_ipc_set_release_callback(ch, on_release, &cs[n], NULL);
        ++n;
      }
    }
    for (i = 1; i < np; ++i) {
      struct consumer *c = &cs[map[i]];
      if (!p[i].revents || !c->ch) continue;
      if (hurray_ipc_progress(c->ch, 0, NULL, &err) != HURRAY_OK) {
        hurray_ipc_stats s;
        s.size = sizeof s;
        hurray_ipc_get_stats(c->ch, &s, NULL);
        if (s.closed) served += done(c, count, err.message);
      }
    }
    /* send what each consumer has room for, without waiting */
    for (i = 0; i < n; ++i) {
      struct consumer *c = &cs[i];
      while (c->ch && c->next < count) {
        uint64_t id;
        if (hurray_ipc_try_send(c->ch, bufs[c->next], NULL, &id, &err) != HURRAY_OK) {
          served += done(c, count, err.message);
          break;
        }
        if (id == 0) break; /* no room: its descriptor says when there is */
        ++c->next;
      }
      if (c->ch && c->back == count) served += done(c, count, "");
    }
  }
  for (i = 0, np = 0; i < n; ++i)
    if (cs[i].ch) {
      ++np;
      hurray_ipc_close(cs[i].ch);
    }
  printf("poll-producer: %d of %d consumers served; %d channels still open\n", served, want, np);
  hurray_ipc_listener_destroy(l);
  for (i = 0; i < count; ++i) hurray_buffer_unref(bufs[i]);
  free(bufs);
  return served >= want ? 0 : 1;
}
