/* hurray_dlpack.h is strict C99 and self-contained. */
#include <hurray_dlpack.h>

int hurray_interop_header_c99_probe(void);
int hurray_interop_header_c99_probe(void) {
  hurray_dl_managed_tensor_versioned t;
  t.version.major = HURRAY_DLPACK_MAJOR_VERSION;
  return (int)sizeof t + (int)t.version.major;
}
