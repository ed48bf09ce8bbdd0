/* Decode + validate one handle N times (N from argv): bench/run.py runs it
 * under callgrind for two N and reports the instructions per call, a figure
 * that noisy machines cannot move. */
#include <hurray.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  static const unsigned char b[16] = {0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 1, 0, 0, 0};
  hurray_buffer_handle h;
  long n = argc > 1 ? atol(argv[1]) : 1000, i;
  int bad = 0;
  for (i = 0; i < n; ++i) {
    bad |= hurray_handle_decode(b, sizeof b, &h, NULL) != HURRAY_OK;
    bad |= hurray_handle_validate(&h, NULL, NULL) != HURRAY_OK;
  }
  return bad;
}
