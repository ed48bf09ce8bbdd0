/* hurray._native's internal declarations (see hurray_native.c). */
#ifndef HURRAY_NATIVE_H
#define HURRAY_NATIVE_H

#include <Python.h>

#include "hurray.h"
#include "hurray_dlpack.h"

/* The library's functions, as hurray._lib loaded them (same library). */
struct hurray_native_api {
  __typeof__(&hurray_buffer_export) buffer_export;
  __typeof__(&hurray_handoff_release) handoff_release;
  __typeof__(&hurray_dlpack_export_versioned) export_versioned;
  __typeof__(&hurray_dlpack_export_legacy) export_legacy;
  __typeof__(&hurray_dlpack_import_versioned_opts) import_versioned;
  __typeof__(&hurray_dlpack_import_legacy_opts) import_legacy;
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
      *s_dlpack_slow;
};

extern struct hurray_native_api hn_api;
extern struct hurray_native_py hn_py;

PyObject *hn_raise(const hurray_error *err, int dlpack, int importing);
PyObject *hn_capsule(void *tensor, int versioned);
PyObject *hn_export(hurray_handoff *h, hurray_dl_data_type dtype, int32_t ndim,
                    const int64_t *shape, const int64_t *strides, uint64_t byte_offset,
                    int versioned, int copied);
int hn_wants_versioned(PyObject *max_version);
int hn_int64(PyObject *o, int64_t lo, int64_t hi, int64_t *out);

/* hurray_native_types.c */
PyObject *hn_import_capsule(PyObject *capsule);
int hn_types_init(PyObject *module);

#endif
