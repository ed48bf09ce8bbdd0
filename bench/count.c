/* Run one path N times (N from argv): bench/run.py runs each under callgrind
 * for two N and reports the instructions per run of the path, figures that
 * noisy machines cannot move. Paths come in pairs, libhurray and a baseline
 * doing the same work:
 *
 *   hurray_count validate N        decode + validate one handle
 *   hurray_count handoff N         wrap + check + acquire + release a CPU handoff
 *   hurray_count dlpack N          the same round trip the DLPack way (malloc a
 *                                  managed tensor, check it, call its deleter)
 *   hurray_count opencl N          hurray_buffer_alloc + unref of 1 MiB (OpenCL)
 *   hurray_count opencl-raw N      clCreateBuffer + clReleaseMemObject of 1 MiB
 *
 * Exit status 77 when the path's device is absent. */
#include <hurray.h>
#include <hurray_backend.h>

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static unsigned char g_mem[4096] __attribute__((aligned(4096)));
static void no_free(void *user, void *data) { (void)user; (void)data; }

/* DLManagedTensorVersioned's layout (dlpack.h 1.x), with room for the shape. */
typedef struct { int32_t device_type, device_id; } dl_device;
typedef struct { uint8_t code, bits; uint16_t lanes; } dl_dtype;
typedef struct {
  void *data;
  dl_device device;
  int32_t ndim;
  dl_dtype dtype;
  int64_t *shape, *strides;
  uint64_t byte_offset;
} dl_tensor;
typedef struct dl_managed {
  struct { uint32_t major, minor; } version;
  void *manager_ctx;
  void (*deleter)(struct dl_managed *self);
  uint64_t flags;
  dl_tensor tensor;
  int64_t shape[1];
} dl_managed;

static void dl_delete(dl_managed *m) {
  no_free(m->manager_ctx, m->tensor.data);
  free(m);
}

/* Out of line, as a producer library's export would be. */
__attribute__((noinline)) static dl_managed *dl_export(void *data, int64_t n) {
  dl_managed *m = malloc(sizeof *m);
  if (!m) return NULL;
  m->version.major = 1;
  m->version.minor = 0;
  m->manager_ctx = NULL;
  m->deleter = dl_delete;
  m->flags = 0;
  m->shape[0] = n;
  m->tensor.data = data;
  m->tensor.device.device_type = 1; /* kDLCPU */
  m->tensor.device.device_id = 0;
  m->tensor.ndim = 1;
  m->tensor.dtype.code = 1;
  m->tensor.dtype.bits = 8;
  m->tensor.dtype.lanes = 1;
  m->tensor.shape = m->shape;
  m->tensor.strides = NULL;
  m->tensor.byte_offset = 0;
  return m;
}

int main(int argc, char **argv) {
  const char *what = argc > 1 ? argv[1] : "validate";
  const long n = argc > 2 ? atol(argv[2]) : 1000;
  int bad = 0;
  long i;
  if (strcmp(what, "validate") == 0) {
    static const unsigned char b[16] = {0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 1, 0, 0, 0};
    hurray_buffer_handle h;
    for (i = 0; i < n; ++i) {
      bad |= hurray_handle_decode(b, sizeof b, &h, NULL) != HURRAY_OK;
      bad |= hurray_handle_validate(&h, NULL, NULL) != HURRAY_OK;
    }
  } else if (strcmp(what, "handoff") == 0) {
    hurray_buffer_desc d = HURRAY_BUFFER_DESC_INIT;
    d.handle.byte_size = sizeof g_mem;
    d.handle.alignment = 4096;
    d.data = g_mem;
    d.free_fn = no_free;
    for (i = 0; i < n; ++i) {
      hurray_handoff h;
      if (hurray_handoff_wrap(NULL, &d, NULL, &h, NULL) != HURRAY_OK ||
          hurray_handoff_check(&h, NULL, NULL) != HURRAY_OK ||
          hurray_handoff_acquire(NULL, &h, NULL, NULL) != HURRAY_OK)
        return 1;
      h.release(&h);
    }
  } else if (strcmp(what, "dlpack") == 0) {
    for (i = 0; i < n; ++i) {
      dl_managed *volatile m = dl_export(g_mem, sizeof g_mem);
      if (!m || m->version.major != 1 || m->tensor.device.device_type != 1 ||
          (uintptr_t)m->tensor.data % 64 != 0)
        return 1;
      m->deleter(m);
    }
  } else if (strcmp(what, "opencl") == 0 || strcmp(what, "opencl-raw") == 0) {
    hurray_backend_native nat;
    if (hurray_device_native(NULL, HURRAY_DEVICE_OPENCL, 0, &nat, NULL) != HURRAY_OK) return 77;
    /* cl_context, cl_mem and CL_MEM_READ_WRITE (1) without the OpenCL headers */
    void *(*create)(void *, uint64_t, size_t, void *, int32_t *);
    int32_t (*release)(void *);
    *(void **)&create = dlsym(nat.handles[4], "clCreateBuffer");
    *(void **)&release = dlsym(nat.handles[4], "clReleaseMemObject");
    if (!create || !release) return 77;
    hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
    a.byte_size = 1 << 20;
    a.alignment = 4096;
    a.device_tag = HURRAY_DEVICE_OPENCL;
    const int raw = strcmp(what, "opencl-raw") == 0;
    for (i = 0; i < n; ++i) {
      if (raw) {
        int32_t e = 0;
        void *m = create(nat.handles[2], 1, 1 << 20, NULL, &e);
        if (!m || e != 0) return 1;
        release(m);
      } else {
        hurray_buffer *b;
        if (hurray_buffer_alloc(NULL, &a, &b, NULL) != HURRAY_OK) return 1;
        hurray_buffer_unref(b);
      }
    }
  } else {
    return 2;
  }
  return bad;
}
