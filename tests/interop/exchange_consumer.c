/*
 * A consumer of DLPack 1.3's C exchange API (DLPackExchangeAPI), written
 * against the struct layout of DLPack 1.3's dlpack.h (declared here from
 * that header's facts, not from hurray_dlpack.h), as another framework
 * would use hurray's. Loaded by test_python.py (ctypes.PyDLL: the GIL is
 * held) and bench/python_bench.py. Python objects pass as void *.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef struct { uint32_t major, minor; } DLPackVersion;
typedef struct { int32_t device_type, device_id; } DLDevice;  /* DLDeviceType is an int enum */
typedef struct { uint8_t code, bits; uint16_t lanes; } DLDataType;
typedef struct {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape, *strides;
  uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned *self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;
typedef struct DLPackExchangeAPIHeader {
  DLPackVersion version;
  struct DLPackExchangeAPIHeader *prev_api;
} DLPackExchangeAPIHeader;
typedef struct DLPackExchangeAPI {
  DLPackExchangeAPIHeader header;
  int (*managed_tensor_allocator)(DLTensor *prototype, DLManagedTensorVersioned **out,
                                  void *error_ctx,
                                  void (*SetError)(void *error_ctx, const char *kind,
                                                   const char *message));
  int (*managed_tensor_from_py_object_no_sync)(void *py_object, DLManagedTensorVersioned **out);
  int (*managed_tensor_to_py_object_no_sync)(DLManagedTensorVersioned *tensor,
                                             void **out_py_object);
  int (*dltensor_from_py_object_no_sync)(void *py_object, DLTensor *out);
  int (*current_work_stream)(int32_t device_type, int32_t device_id, void **out_current_stream);
} DLPackExchangeAPI;

enum { kDLCPU = 1, kDLFloat = 2 };

/* What the last call saw, for the Python side to check. */
typedef struct {
  uint32_t major, minor;
  int32_t ndim, device_type;
  int64_t shape[4], strides[4];
  uint64_t data, borrowed_data, flags;
  int64_t borrowed_strides[4];
  char error[256];
} xc_report;

static void set_error(void *ctx, const char *kind, const char *message) {
  xc_report *r = ctx;
  snprintf(r->error, sizeof r->error, "%s: %s", kind, message);
}

/* 0, or the step that failed (a Python exception may be set). */
int xc_check(const DLPackExchangeAPI *api, void *obj, xc_report *r) {
  memset(r, 0, sizeof *r);
  r->major = api->header.version.major;
  r->minor = api->header.version.minor;
  if (api->header.version.major != 1 || api->header.prev_api != NULL) return 1;
  if (!api->managed_tensor_allocator || !api->managed_tensor_from_py_object_no_sync ||
      !api->managed_tensor_to_py_object_no_sync || !api->current_work_stream)
    return 2;
  DLManagedTensorVersioned *t = NULL;
  if (api->managed_tensor_from_py_object_no_sync(obj, &t) != 0) return 3;
  r->ndim = t->dl_tensor.ndim;
  r->device_type = t->dl_tensor.device.device_type;
  r->data = (uint64_t)(uintptr_t)t->dl_tensor.data + t->dl_tensor.byte_offset;
  r->flags = t->flags;
  if (t->version.major != 1 || (t->dl_tensor.ndim != 0 && t->dl_tensor.strides == NULL)) {
    t->deleter(t);
    return 4;
  }
  for (int i = 0; i < t->dl_tensor.ndim && i < 4; i++) {
    r->shape[i] = t->dl_tensor.shape[i];
    r->strides[i] = t->dl_tensor.strides[i];
  }
  t->deleter(t);
  if (api->dltensor_from_py_object_no_sync) {
    DLTensor dl;
    if (api->dltensor_from_py_object_no_sync(obj, &dl) != 0) return 5;
    r->borrowed_data = (uint64_t)(uintptr_t)dl.data + dl.byte_offset;
    for (int i = 0; i < dl.ndim && i < 4; i++) r->borrowed_strides[i] = dl.strides[i];
  }
  void *stream = (void *)1;
  if (api->current_work_stream(kDLCPU, 0, &stream) != 0 || stream != NULL) return 6;
  return 0;
}

/* A 3x4 float32 CPU tensor from the allocator, filled with 0..11, given back
 * to the producer as its Python object (*out_obj, a new reference). */
int xc_allocate(const DLPackExchangeAPI *api, xc_report *r, void **out_obj) {
  memset(r, 0, sizeof *r);
  int64_t shape[2] = {3, 4};
  DLTensor proto;
  memset(&proto, 0, sizeof proto);
  proto.device.device_type = kDLCPU;
  proto.ndim = 2;
  proto.dtype.code = kDLFloat;
  proto.dtype.bits = 32;
  proto.dtype.lanes = 1;
  proto.shape = shape;
  DLManagedTensorVersioned *t = NULL;
  if (api->managed_tensor_allocator(&proto, &t, r, set_error) != 0) return 1;
  float *f = (float *)((char *)t->dl_tensor.data + t->dl_tensor.byte_offset);
  for (int i = 0; i < 12; i++) f[i] = (float)i;
  r->data = (uint64_t)(uintptr_t)f;
  return api->managed_tensor_to_py_object_no_sync(t, out_obj) != 0 ? 2 : 0;
}

/* A prototype the allocator must refuse (through SetError). */
int xc_allocate_bad(const DLPackExchangeAPI *api, xc_report *r) {
  memset(r, 0, sizeof *r);
  DLTensor proto;
  memset(&proto, 0, sizeof proto);
  proto.device.device_type = 2;  /* kDLCUDA */
  proto.ndim = 0;
  proto.dtype.code = kDLFloat;
  proto.dtype.bits = 32;
  proto.dtype.lanes = 1;
  DLManagedTensorVersioned *t = NULL;
  return api->managed_tensor_allocator(&proto, &t, r, set_error);
}

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ns per tensor: managed_tensor_from_py_object_no_sync + deleter (borrow: 0)
 * or dltensor_from_py_object_no_sync (borrow: 1); < 0 on failure. */
double xc_time_ns(const DLPackExchangeAPI *api, void *obj, int n, int borrow) {
  double t0 = now_ns();
  for (int i = 0; i < n; i++) {
    if (borrow) {
      DLTensor dl;
      if (api->dltensor_from_py_object_no_sync(obj, &dl) != 0) return -1;
    } else {
      DLManagedTensorVersioned *t;
      if (api->managed_tensor_from_py_object_no_sync(obj, &t) != 0) return -1;
      t->deleter(t);
    }
  }
  return (now_ns() - t0) / n;
}
