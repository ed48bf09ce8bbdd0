/*
 * DLPack 1.3's C exchange API (DLPackExchangeAPI) for libhurray tensors:
 * hurray.Tensor and hurray.Buffer publish it as `__dlpack_c_exchange_api__`
 * on their types, and hurray.from_dlpack() uses a producer's when its type
 * offers one. Every function is called with the GIL held and returns 0, or
 * -1 with a Python exception set (the allocator: set_error instead).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdio.h>

#include "hurray_native.h"

static TensorObject *as_tensor(PyObject *obj, PyObject **owned) {
  *owned = NULL;
  if (PyObject_TypeCheck(obj, &TensorBase)) return (TensorObject *)obj;
  if (PyObject_TypeCheck(obj, &BufferBase)) {
    *owned = hn_buffer_tensor(obj);
    return (TensorObject *)*owned;
  }
  PyErr_Format(PyExc_BufferError, "hurray: the DLPack exchange API takes hurray.Tensor and "
               "hurray.Buffer objects, not %.100s", Py_TYPE(obj)->tp_name);
  return NULL;
}

static int from_py(void *py_object, hurray_dl_managed_tensor_versioned **out) {
  PyObject *owned;
  TensorObject *t = as_tensor((PyObject *)py_object, &owned);
  if (t == NULL) return -1;
  int rc = hn_tensor_export(t, 1, (void **)out);
  Py_XDECREF(owned);
  return rc;
}

static int dltensor_from_py(void *py_object, hurray_dl_tensor *out) {
  PyObject *owned;
  TensorObject *t = as_tensor((PyObject *)py_object, &owned);
  if (t == NULL) return -1;
  /* Borrowed: shape and strides are the object's own arrays, so a Buffer
   * (whose tensor would be a temporary) cannot lend one. */
  if (owned != NULL || !t->has_dev || t->dev_type != HURRAY_DL_CPU) {
    Py_XDECREF(owned);
    PyErr_SetString(PyExc_BufferError, "hurray: dltensor_from_py_object_no_sync lends CPU "
                    "hurray.Tensor objects only (use managed_tensor_from_py_object_no_sync)");
    return -1;
  }
  /* A DLTensor has no flags: a read-only buffer is lent only as a managed
   * tensor, whose flags say READ_ONLY (BP-ZC-NOMUT). */
  int ro = hn_tensor_read_only(t);
  if (ro != 0) {
    if (ro > 0)
      PyErr_SetString(PyExc_BufferError, "BP-ZC-NOMUT: a read-only hurray buffer is not lent "
                      "as a DLTensor, which cannot say so (use "
                      "managed_tensor_from_py_object_no_sync: its flags do)");
    return -1;
  }
  out->data = (char *)hn_api.buffer_data(t->ptr) + t->byte_offset;
  out->device.device_type = HURRAY_DL_CPU;
  out->device.device_id = 0;
  out->ndim = t->ndim;
  out->dtype = t->dtype;
  out->shape = t->ndim ? t->dims : NULL;
  out->strides = t->ndim ? t->dims + t->ndim : NULL;  /* never NULL when ndim != 0 */
  out->byte_offset = 0;
  return 0;
}

static int to_py(hurray_dl_managed_tensor_versioned *tensor, void **out_py_object) {
  PyObject *h = hn_import_raw(tensor, 1);
  if (h == NULL) {  /* ownership was given to us: the tensor goes now */
    if (tensor->deleter) tensor->deleter(tensor);
    return -1;
  }
  *out_py_object = h;
  return 0;
}

static int allocate(hurray_dl_tensor *prototype, hurray_dl_managed_tensor_versioned **out,
                    void *error_ctx, void (*set_error)(void *, const char *, const char *)) {
  char msg[256];
  if (prototype->device.device_type != HURRAY_DL_CPU || prototype->ndim < 0 ||
      prototype->ndim > HURRAY_DLPACK_MAX_NDIM || (prototype->ndim && !prototype->shape) ||
      prototype->dtype.bits == 0 || prototype->dtype.lanes == 0) {
    set_error(error_ctx, "BufferError", "hurray: the allocator makes CPU tensors of a "
              "well-formed prototype (device kDLCPU, 0 <= ndim <= 64, a dtype)");
    return -1;
  }
  uint64_t n = ((uint64_t)prototype->dtype.bits * prototype->dtype.lanes + 7) / 8;
  for (int32_t i = 0; i < prototype->ndim; i++) {
    if (prototype->shape[i] < 0 ||
        __builtin_mul_overflow(n, (uint64_t)prototype->shape[i], &n)) {
      set_error(error_ctx, "BufferError", "hurray: a negative extent or a size over 64 bits");
      return -1;
    }
  }
  hurray_alloc_desc d = HURRAY_ALLOC_DESC_INIT;
  d.byte_size = n;
  d.alignment = 64;
  hurray_buffer *buf;
  hurray_error err;
  hurray_handoff h;
  hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
  if (hn_api.buffer_alloc(NULL, &d, &buf, &err) != HURRAY_OK) goto fail;
  hurray_status st = hn_api.buffer_export(buf, &e, &h, &err);
  hn_api.buffer_unref(buf);  /* the export holds the memory */
  if (st != HURRAY_OK) goto fail;
  st = hn_api.export_versioned(&h, prototype->dtype, prototype->ndim, prototype->shape, NULL, 0,
                               out, &err);
  if (st == HURRAY_OK) return 0;
  hn_api.handoff_release(&h, NULL);
fail:
  snprintf(msg, sizeof msg, "%s", err.message);
  set_error(error_ctx, err.status == HURRAY_E_OUT_OF_MEMORY ? "MemoryError" : "BufferError",
            msg);
  return -1;
}

static int work_stream(int32_t device_type, int32_t device_id, void **out) {
  (void)device_type;
  (void)device_id;
  *out = NULL;  /* exports are PRODUCER_SYNCED: nothing to order after */
  return 0;
}

const hurray_dl_exchange_api hn_exchange_api = {
    {{HURRAY_DLPACK_MAJOR_VERSION, HURRAY_DLPACK_MINOR_VERSION}, NULL},
    allocate,
    from_py,
    to_py,
    dltensor_from_py,
    work_stream,
};

/* hurray.from_dlpack(obj) through obj's exchange API: a CPU tensor as a
 * Handoff; NULL without an error set when the tensor is elsewhere (the
 * caller takes the Python path, which handles streams). */
PyObject *hn_exchange_import(PyObject *obj, const hurray_dl_exchange_api *api) {
  hurray_dl_managed_tensor_versioned *t = NULL;
  if (api->managed_tensor_from_py_object_no_sync(obj, &t) != 0) return NULL;
  if (t->dl_tensor.device.device_type != HURRAY_DL_CPU) {
    if (t->deleter) t->deleter(t);
    return NULL;
  }
  PyObject *h = hn_import_raw(t, 1);
  if (h == NULL && t->deleter) t->deleter(t);
  return h;
}
