/* hurray._native's internal declarations (see hurray_native.c). */
#ifndef HURRAY_NATIVE_H
#define HURRAY_NATIVE_H

#include <Python.h>

#include "hurray.h"
#include "hurray_dlpack.h"

/* The name of the PyCapsule that holds a type's DLPackExchangeAPI (DLPack 1.3). */
#define HN_EXCHANGE_CAPSULE "dlpack_exchange_api"

/* The library's functions, as hurray._lib loaded them (same library). */
struct hurray_native_api {
  __typeof__(&hurray_buffer_export) buffer_export;
  __typeof__(&hurray_handoff_release) handoff_release;
  __typeof__(&hurray_dlpack_export_versioned) export_versioned;
  __typeof__(&hurray_dlpack_export_legacy) export_legacy;
  __typeof__(&hurray_dlpack_import_versioned_opts) import_versioned;
  __typeof__(&hurray_dlpack_import_legacy_opts) import_legacy;
  __typeof__(&hurray_buffer_data) buffer_data;
  __typeof__(&hurray_buffer_alloc) buffer_alloc;
  __typeof__(&hurray_buffer_unref) buffer_unref;
  __typeof__(&hurray_handle_decode) handle_decode;
  __typeof__(&hurray_handle_encode) handle_encode;
  __typeof__(&hurray_table_validate) table_validate;
};

/* The package's Python objects, and interned names. */
struct hurray_native_py {
  PyObject *error;            /* error(dlpack, importing, status, rule, message, index, offset) */
  PyObject *dtype_class;      /* _lib.DLDataType */
  PyObject *dtype_names;      /* {"float32": (code, bits), ...} */
  PyObject *handoff_class;    /* hurray.Handoff */
  PyObject *tensor_class;     /* hurray.Tensor */
  PyObject *from_dlpack_slow; /* hurray._handoff._from_dlpack_py */
  PyObject *empty_tuple, *dlpack_kwargs;
  PyObject *s_dlpack, *s_dlpack_device, *s_ref, *s_ptr, *s_read_only, *s_tensor_slow,
      *s_dlpack_slow, *s_exchange, *s_exchange_legacy, *s_numpy;
};

extern struct hurray_native_api hn_api;
extern struct hurray_native_py hn_py;

PyObject *hn_raise(const hurray_error *err, int dlpack, int importing);
PyObject *hn_capsule(void *tensor, int versioned);
int hn_export_raw(hurray_handoff *h, hurray_dl_data_type dtype, int32_t ndim,
                  const int64_t *shape, const int64_t *strides, uint64_t byte_offset,
                  int versioned, void **out);
int hn_wants_versioned(PyObject *max_version);
int hn_int64(PyObject *o, int64_t lo, int64_t hi, int64_t *out);

/* The C halves of hurray.Handoff, hurray.Tensor and hurray.Buffer. */
typedef struct {
  PyObject_HEAD hurray_handoff h;
  hurray_dl_data_type dtype;
  PyObject *shape, *strides;
  long long element_offset;
} HandoffObject;

typedef struct {
  PyObject_HEAD PyObject *buffer, *ref, *shape, *strides;
  hurray_buffer *ptr;
  hurray_dl_data_type dtype;
  int32_t ndim;
  int has_dev, has_strides;
  int native_buffer;  /* buffer is a BufferBase: read_only is read from its C half */
  int32_t dev_type, dev_id;
  unsigned long long byte_offset;
  int64_t *dims;  /* shape[ndim], then strides[ndim] */
  int64_t inline_dims[8];
} TensorObject;

typedef struct {
  PyObject_HEAD hurray_buffer *ptr;
  PyObject *ref;  /* Buffer._ref: the _Ref, or None/NULL once closed */
  int read_only;  /* Buffer.read_only */
  unsigned long long nbytes;
  int has_dev;
  int32_t dev_type, dev_id;
} BufferObject;

extern PyTypeObject HandoffBase, TensorBase, BufferBase;

/* The tensor's buffer's read_only now: 1, 0, or -1 with an exception set. */
int hn_read_only(PyObject *buffer);
static inline int hn_tensor_read_only(const TensorObject *o) {
  return o->native_buffer ? ((const BufferObject *)o->buffer)->read_only
                          : hn_read_only(o->buffer);
}

/* hurray_native_types.c */
PyObject *hn_import_capsule(PyObject *capsule);
PyObject *hn_import_raw(void *tensor, int versioned);
int hn_tensor_export(TensorObject *o, int versioned, void **out);
PyObject *hn_buffer_tensor(PyObject *buffer);
void hn_tensor_class_ready(PyObject *cls);

/* hurray_native_handles.c: Handle encode/decode, validate */
extern PyMethodDef hn_handle_methods[];

/* hurray_native_exchange.c: DLPack 1.3's DLPackExchangeAPI */
extern const hurray_dl_exchange_api hn_exchange_api;
PyObject *hn_exchange_import(PyObject *obj, const hurray_dl_exchange_api *api);
int hn_types_init(PyObject *module);

#endif
