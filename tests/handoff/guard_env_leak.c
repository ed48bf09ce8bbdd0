/* Run with HURRAY_GUARD=1: the default context's guard reports, at exit, the
 * handoff this program never releases (BP-REL-ONCE leak). */
#include <hurray.h>

static void noop_free(void *user, void *data) { (void)user; (void)data; }

static unsigned char mem[64] __attribute__((aligned(64)));

int main(void) {
  hurray_buffer_desc d = HURRAY_BUFFER_DESC_INIT;
  hurray_handoff h;
  d.handle.byte_size = 64;
  d.handle.alignment = 64;
  d.data = mem;
  d.free_fn = noop_free;
  if (hurray_handoff_wrap(NULL, &d, NULL, &h, NULL) != HURRAY_OK) return 1;
  return 0; /* h is never released: a leak */
}
