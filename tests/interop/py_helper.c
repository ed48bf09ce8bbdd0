/* C side of the Python package tests (test_python.py loads it with ctypes):
 * a C producer whose frees are counted, and a C consumer that reads a
 * handoff and releases it, as a library written in C would. */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */
#include <hurray.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int g_frees;
static int g_free_fd = -1;

static void count_free(void *user, void *data) {
  (void)user;
  free(data);
  __atomic_add_fetch(&g_frees, 1, __ATOMIC_SEQ_CST);
  if (g_free_fd >= 0) { /* seen from outside the process, even at its exit */
    const char c = 'C';
    if (write(g_free_fd, &c, 1) != 1) g_free_fd = -1;
  }
}

/* Also write one byte 'C' to fd at each free (test_exit.py counts them from
 * the parent process); -1: stop. */
void helper_set_free_fd(int fd) { g_free_fd = fd; }

/* How many buffers of helper_make_buffer() libhurray has freed so far. */
int helper_free_count(void) { return __atomic_load_n(&g_frees, __ATOMIC_SEQ_CST); }

/* A CPU buffer of n bytes (64-byte aligned) holding (i * 7 + 3) mod 256 at
 * byte i; the caller gets the owner's reference. NULL on failure. */
hurray_buffer *helper_make_buffer(uint64_t n) {
  size_t padded = (size_t)((n + 63) / 64 * 64);
  void *mem = NULL;
  unsigned char *p;
  hurray_buffer_desc d = HURRAY_BUFFER_DESC_INIT;
  hurray_buffer *b = NULL;
  uint64_t i;
  if (posix_memalign(&mem, 64, padded ? padded : 64) != 0) return NULL;
  p = (unsigned char *)mem;
  for (i = 0; i < n; ++i) p[i] = (unsigned char)((i * 7 + 3) & 0xFF);
  d.handle.byte_size = n;
  d.handle.alignment = 64;
  d.data = p;
  d.free_fn = count_free;
  if (hurray_buffer_wrap(NULL, &d, &b, NULL) != HURRAY_OK) {
    free(p);
    return NULL;
  }
  return b;
}

/* A C consumer: checks the handoff, adds up its float64 elements (the whole
 * buffer), releases it. Returns -1.0 when the check fails (not released). */
double helper_consume_f64(hurray_handoff *h) {
  hurray_buffer_handle hd;
  const double *x;
  double sum = 0;
  uint64_t i;
  if (hurray_handoff_check(h, NULL, NULL) != HURRAY_OK) return -1.0;
  if (hurray_handle_decode(h->handle, sizeof h->handle, &hd, NULL) != HURRAY_OK) return -1.0;
  x = (const double *)h->data;
  for (i = 0; i < hd.byte_size / sizeof(double); ++i) sum += x[i];
  h->release(h); /* exactly once, through the function pointer */
  return sum;
}
