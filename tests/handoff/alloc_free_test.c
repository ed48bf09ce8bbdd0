/* The wrap path allocates nothing once warm: malloc, calloc and realloc are
 * interposed for the whole process (libhurray included) and counted around
 * 100,000 wrap + check + acquire + release round trips. Not built with
 * sanitizers, which interpose the allocator themselves. */
#define _GNU_SOURCE
#include <hurray.h>
#include <stdio.h>
#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static volatile long allocations = 0;

void *malloc(size_t n) { __atomic_add_fetch(&allocations, 1, __ATOMIC_RELAXED); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { __atomic_add_fetch(&allocations, 1, __ATOMIC_RELAXED); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { __atomic_add_fetch(&allocations, 1, __ATOMIC_RELAXED); return __libc_realloc(p, n); }

static unsigned char mem[4096] __attribute__((aligned(4096)));
static void no_free(void *user, void *data) { (void)user; (void)data; }

static int round_trip(void) {
  hurray_buffer_desc d = HURRAY_BUFFER_DESC_INIT;
  hurray_handoff h;
  d.handle.byte_size = sizeof mem;
  d.handle.alignment = 4096;
  d.data = mem;
  d.free_fn = no_free;
  if (hurray_handoff_wrap(NULL, &d, NULL, &h, NULL) != HURRAY_OK) return 1;
  if (hurray_handoff_check(&h, NULL, NULL) != HURRAY_OK) return 1;
  if (hurray_handoff_acquire(NULL, &h, NULL, NULL) != HURRAY_OK) return 1;
  return hurray_handoff_release(&h, NULL) != HURRAY_OK;
}

int main(void) {
  long before, extra;
  int i;
  if (round_trip()) return 1; /* warm the record pools */
  before = allocations;
  for (i = 0; i < 100000; ++i)
    if (round_trip()) return 1;
  extra = allocations - before; /* before printf, which may allocate */
  printf("%ld heap allocations in 100000 wrap/check/acquire/release round trips\n", extra);
  return extra == 0 ? 0 : 1;
}
