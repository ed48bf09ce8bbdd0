/*
 * hurray._native's three base classes: BufferBase (hurray.Buffer's),
 * TensorBase (hurray.Tensor's) and HandoffBase (hurray.Handoff's), and the
 * import of a DLPack capsule as a Handoff. The Python classes subclass them
 * and keep every method that does not run once per tensor.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <stdint.h>
#include <string.h>

#include "hurray_native.h"

#define MAX_NDIM HURRAY_DLPACK_MAX_NDIM

/* ---- HandoffBase ---------------------------------------------------------- */

static void handoff_dealloc(PyObject *self) {
  HandoffObject *o = (HandoffObject *)self;
  if (o->h.release) {  /* released here otherwise, exactly once */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    hn_api.handoff_release(&o->h, NULL);
    PyErr_Restore(type, value, tb);
  }
  Py_CLEAR(o->shape);
  Py_CLEAR(o->strides);
  Py_TYPE(self)->tp_free(self);
}

static PyObject *handoff_release(PyObject *self, PyObject *unused) {
  (void)unused;
  hurray_error err;
  if (hn_api.handoff_release(&((HandoffObject *)self)->h, &err) != HURRAY_OK)
    return hn_raise(&err, 0, 0);
  Py_RETURN_NONE;
}

static PyObject *dtype_get(hurray_dl_data_type d) {
  return PyObject_CallFunction(hn_py.dtype_class, "iii", d.code, d.bits, d.lanes);
}

static int dtype_set(PyObject *v, hurray_dl_data_type *d) {
  if (v == NULL) {
    PyErr_SetString(PyExc_AttributeError, "dtype cannot be deleted");
    return -1;
  }
  long f[3];
  const char *names[3] = {"code", "bits", "lanes"};
  for (int i = 0; i < 3; i++) {
    PyObject *x = PyObject_GetAttrString(v, names[i]);
    if (x == NULL) return -1;
    f[i] = PyLong_AsLong(x);
    Py_DECREF(x);
    if (f[i] == -1 && PyErr_Occurred()) return -1;
  }
  d->code = (uint8_t)f[0];
  d->bits = (uint8_t)f[1];
  d->lanes = (uint16_t)f[2];
  return 0;
}

static PyObject *handoff_dtype_get(PyObject *self, void *c) {
  (void)c;
  return dtype_get(((HandoffObject *)self)->dtype);
}

static int handoff_dtype_set(PyObject *self, PyObject *v, void *c) {
  (void)c;
  return dtype_set(v, &((HandoffObject *)self)->dtype);
}

static PyObject *handoff_released(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(((HandoffObject *)self)->h.release == NULL);
}

/* The struct's bytes (writable), for _lib.Handoff.from_buffer(h): h.struct. */
static int handoff_getbuffer(PyObject *self, Py_buffer *view, int flags) {
  HandoffObject *o = (HandoffObject *)self;
  return PyBuffer_FillInfo(view, self, &o->h, sizeof o->h, 0, flags);
}

static PyBufferProcs handoff_as_buffer = {handoff_getbuffer, NULL};

static PyMemberDef handoff_members[] = {
    {"shape", T_OBJECT, offsetof(HandoffObject, shape), 0, "extents, or None: 1-D bytes"},
    {"strides", T_OBJECT, offsetof(HandoffObject, strides), 0, "strides in elements, or None"},
    {"element_offset", T_LONGLONG, offsetof(HandoffObject, element_offset), 0,
     "bytes from address to element 0"},
    {NULL, 0, 0, 0, NULL}};

static PyGetSetDef handoff_getset[] = {
    {"dtype", handoff_dtype_get, handoff_dtype_set, "the element type (DLDataType)", NULL},
    {"released", handoff_released, NULL, "True once released (or handed on)", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef handoff_methods[] = {
    {"release", handoff_release, METH_NOARGS,
     "Release exactly once (BP-REL-ONCE): a second call raises HurrayError "
     "(HURRAY_E_ALREADY_RELEASED)."},
    {NULL, NULL, 0, NULL}};

static int handoff_init_base(PyObject *self, PyObject *args, PyObject *kw) {
  (void)args;
  (void)kw;
  HandoffObject *o = (HandoffObject *)self;
  o->dtype.code = HURRAY_DL_UINT;
  o->dtype.bits = 8;
  o->dtype.lanes = 1;
  return 0;
}

PyTypeObject HandoffBase = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hurray._native.HandoffBase",
    .tp_basicsize = sizeof(HandoffObject),
    .tp_dealloc = handoff_dealloc,
    .tp_as_buffer = &handoff_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "The C half of hurray.Handoff: one hurray_handoff, released once.",
    .tp_methods = handoff_methods,
    .tp_members = handoff_members,
    .tp_getset = handoff_getset,
    .tp_init = handoff_init_base,
    .tp_new = PyType_GenericNew,
};

static PyObject *refusal(int status, const char *rule, const char *message) {
  hurray_error err;
  memset(&err, 0, sizeof err);
  err.status = status;
  err.buffer_index = -1;
  err.byte_offset = -1;
  snprintf(err.rule_id, sizeof err.rule_id, "%s", rule);
  snprintf(err.message, sizeof err.message, "%s", message);
  return hn_raise(&err, 1, 0);
}

static PyObject *int64_tuple(const int64_t *v, int32_t n) {
  PyObject *t = PyTuple_New(n);
  for (int32_t i = 0; t != NULL && i < n; i++) {
    PyObject *x = PyLong_FromLongLong(v[i]);
    if (x == NULL) Py_CLEAR(t);
    else PyTuple_SET_ITEM(t, i, x);
  }
  return t;
}

/* A CPU tensor taken over as a Handoff; on failure it is still the caller's. */
PyObject *hn_import_raw(void *p, int versioned) {
  hurray_dl_tensor *t = versioned ? &((hurray_dl_managed_tensor_versioned *)p)->dl_tensor
                                  : &((hurray_dl_managed_tensor *)p)->dl_tensor;
  if (t->device.device_type != HURRAY_DL_CPU)
    return refusal(8, "BP-SYNC-WAIT", "BP-SYNC-WAIT: the producer said CPU but its tensor "
                                      "is on another DLPack device; pass stream=");
  HandoffObject *h = (HandoffObject *)((PyTypeObject *)hn_py.handoff_class)
                         ->tp_alloc((PyTypeObject *)hn_py.handoff_class, 0);
  if (h == NULL) return NULL;
  h->dtype.code = HURRAY_DL_UINT;
  h->dtype.bits = 8;
  h->dtype.lanes = 1;
  int32_t ndim = t->ndim;
  int layout = ndim >= 0 && ndim <= MAX_NDIM && (ndim == 0 || t->shape != NULL);
  if (layout) {  /* read before the import: the tensor is the producer's until then */
    h->dtype = t->dtype;
    h->shape = int64_tuple(t->shape, ndim);
    if (h->shape == NULL) goto fail;
    if (t->strides != NULL) {
      h->strides = int64_tuple(t->strides, ndim);
      if (h->strides == NULL) goto fail;
    }
  }
  hurray_error err;
  hurray_status st = versioned ? hn_api.import_versioned(NULL, p, NULL, &h->h, &err)
                               : hn_api.import_legacy(NULL, p, NULL, &h->h, &err);
  if (st != HURRAY_OK) {
    Py_DECREF(h);
    return hn_raise(&err, 1, 1);
  }
  if (layout && !(h->h.flags & HURRAY_HANDOFF_OPAQUE_DATA))
    h->element_offset = (long long)((uintptr_t)t->data + t->byte_offset - (uintptr_t)h->h.data);
  else if (layout)
    h->element_offset = (long long)t->byte_offset;
  return (PyObject *)h;
fail:
  Py_DECREF(h);
  return NULL;
}

/* An unconsumed capsule of a CPU producer taken over as a Handoff. */
PyObject *hn_import_capsule(PyObject *cap) {
  int versioned = PyCapsule_IsValid(cap, "dltensor_versioned");
  if (!versioned && !PyCapsule_IsValid(cap, "dltensor"))
    return refusal(1, "", "hurray.from_dlpack: __dlpack__ returned no unconsumed DLPack "
                          "capsule");
  PyObject *h =
      hn_import_raw(PyCapsule_GetPointer(cap, versioned ? "dltensor_versioned" : "dltensor"),
                    versioned);
  if (h != NULL &&
      PyCapsule_SetName(cap, versioned ? "used_dltensor_versioned" : "used_dltensor") < 0)
    Py_CLEAR(h);  /* releases the handoff: the tensor's deleter runs once */
  return h;
}

/* ---- TensorBase ----------------------------------------------------------- */

/* A few hurray.Tensor objects kept for reuse: buf.tensor() makes and drops
 * one per tensor, and each is a heap-type instance with a GC header
 * (allocation, tracking, freeing). Only exact hurray.Tensor objects come
 * here, after their dealloc cleared every reference; a reused one is set up
 * as PyType_GenericAlloc would set up a new one, less the GC tracking.
 * Guarded by the GIL. */
#define TENSOR_FREELIST 4
static PyObject *tensor_free[TENSOR_FREELIST];
static int tensor_nfree;

/* A type whose instances the freelist can hold: TensorBase's size, GC. */
static int reusable(PyTypeObject *type) {
  return type->tp_basicsize == (Py_ssize_t)sizeof(TensorObject) && type->tp_itemsize == 0 &&
         PyType_IS_GC(type);
}

static PyObject *tensor_alloc(void) {
  PyTypeObject *type = (PyTypeObject *)hn_py.tensor_class;
  if (tensor_nfree == 0 || !reusable(type)) return type->tp_alloc(type, 0);
  PyObject *t = tensor_free[--tensor_nfree];
  /* The type (a heap type) gets its reference back. Left untracked by the
   * cyclic GC: a Tensor does not traverse what it holds, so the collector
   * could not see a cycle through one anyway, and tracking touches the
   * young generation's list on every tensor. */
  PyObject_Init(t, type);
  return t;
}

static void tensor_dealloc(PyObject *self) {
  TensorObject *o = (TensorObject *)self;
  if (o->dims != o->inline_dims) PyMem_Free(o->dims);
  o->dims = o->inline_dims;
  Py_CLEAR(o->buffer);
  Py_CLEAR(o->ref);
  Py_CLEAR(o->shape);
  Py_CLEAR(o->strides);
  /* untracked by the caller (tensor_heap_dealloc or subtype_dealloc), which
   * drops the instance's reference on its type after this */
  if ((PyObject *)Py_TYPE(self) == hn_py.tensor_class && tensor_nfree < TENSOR_FREELIST &&
      reusable(Py_TYPE(self)) && !PyObject_GC_IsTracked(self)) {
    tensor_free[tensor_nfree++] = self;
    return;
  }
  Py_TYPE(self)->tp_free(self);
}

/* hurray.Tensor's own tp_dealloc (hn_tensor_class_ready), in place of
 * CPython's subtype_dealloc, which looks for a __dict__, weak references,
 * slots and finalizers that hurray.Tensor does not have: untrack, clear,
 * free (or keep), and drop the reference an instance holds on its heap type.
 * Subclasses of hurray.Tensor keep subtype_dealloc, which calls this. */
static void tensor_heap_dealloc(PyObject *self) {
  PyTypeObject *type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  tensor_dealloc(self);
  Py_DECREF(type);
}

/* Installs tensor_heap_dealloc on the package's Tensor class when it is what
 * the package defines: a heap type subclassing TensorBase directly with no
 * instance __dict__, __weakref__, slots or finalizer; else nothing. */
void hn_tensor_class_ready(PyObject *cls) {
  PyTypeObject *t = (PyTypeObject *)cls;
  unsigned long managed = 0;  /* a dict or weak references kept by CPython itself */
#ifdef Py_TPFLAGS_MANAGED_DICT
  managed |= Py_TPFLAGS_MANAGED_DICT;
#endif
#ifdef Py_TPFLAGS_MANAGED_WEAKREF
  managed |= Py_TPFLAGS_MANAGED_WEAKREF;
#endif
  if (PyType_Check(cls) && (t->tp_flags & Py_TPFLAGS_HEAPTYPE) && !(t->tp_flags & managed) &&
      t->tp_base == &TensorBase &&
      reusable(t) && t->tp_dictoffset == 0 && t->tp_weaklistoffset == 0 &&
      t->tp_finalize == NULL && t->tp_del == NULL && Py_SIZE(t) == 0)
    t->tp_dealloc = tensor_heap_dealloc;
}

/* Fills a tensor's C fields; shape (and strides) are tuples of checked ints. */
static inline __attribute__((always_inline)) int tensor_fill(
    TensorObject *o, PyObject *buffer, PyObject *ref, hurray_buffer *ptr,
    hurray_dl_data_type dtype, PyObject *shape, PyObject *strides, unsigned long long byte_offset,
    int has_dev, int32_t dev_type, int32_t dev_id, const int64_t *values) {
  Py_ssize_t n = PyTuple_GET_SIZE(shape);
  if (o->dims != o->inline_dims) PyMem_Free(o->dims);
  o->dims = 2 * n <= 8 ? o->inline_dims : PyMem_Malloc(sizeof(int64_t) * (size_t)(2 * n));
  if (o->dims == NULL) {
    o->dims = o->inline_dims;
    PyErr_NoMemory();
    return -1;
  }
  int64_t row = 1;  /* row-major strides when none are given (DLPack 1.2: never NULL) */
  for (Py_ssize_t i = n - 1; i >= 0; i--) {
    /* values: shape then strides, already read from the tuples (buffer_tensor) */
    o->dims[i] = values ? values[i] : PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i));
    o->dims[n + i] = strides == Py_None ? row
                     : values          ? values[n + i]
                                       : PyLong_AsLongLong(PyTuple_GET_ITEM(strides, i));
    row = (int64_t)((uint64_t)row * (uint64_t)o->dims[i]);  /* wraps only when empty */
  }
  if (!values && PyErr_Occurred()) return -1;
  Py_INCREF(buffer);
  Py_XSETREF(o->buffer, buffer);
  Py_INCREF(ref);
  Py_XSETREF(o->ref, ref);
  Py_INCREF(shape);
  Py_XSETREF(o->shape, shape);
  Py_INCREF(strides);
  Py_XSETREF(o->strides, strides);
  o->ptr = ptr;
  o->dtype = dtype;
  o->ndim = (int32_t)n;
  o->has_strides = strides != Py_None;
  o->byte_offset = byte_offset;
  o->has_dev = has_dev;
  o->dev_type = dev_type;
  o->dev_id = dev_id;
  return 0;
}

/* _set(buffer, ref, ptr, dtype, shape, strides, byte_offset, device or None),
 * from Tensor.__init__ (the Python path, which checked everything). */
static PyObject *tensor_set(PyObject *self, PyObject *args) {
  PyObject *buffer, *ref, *dtype, *shape, *strides, *dev;
  unsigned long long ptr, off;
  if (!PyArg_ParseTuple(args, "OOKOO!OKO", &buffer, &ref, &ptr, &dtype, &PyTuple_Type, &shape,
                        &strides, &off, &dev))
    return NULL;
  hurray_dl_data_type d;
  if (dtype_set(dtype, &d) < 0) return NULL;
  int dt = 0, di = 0;
  if (dev != Py_None && !PyArg_ParseTuple(dev, "ii", &dt, &di)) return NULL;
  if (tensor_fill((TensorObject *)self, buffer, ref, (hurray_buffer *)(uintptr_t)ptr, d, shape,
                  strides, off, dev != Py_None, dt, di, NULL) < 0)
    return NULL;
  ((TensorObject *)self)->native_buffer = PyObject_TypeCheck(buffer, &BufferBase);
  Py_RETURN_NONE;
}

static PyObject *tensor_dlpack_device(PyObject *self, PyObject *unused) {
  (void)unused;
  TensorObject *o = (TensorObject *)self;
  if (!o->has_dev) return PyObject_CallMethod(self, "_dlpack_device_slow", NULL);
  return Py_BuildValue("(ii)", o->dev_type, o->dev_id);
}

static PyObject *slow(PyObject *self, PyObject *name, PyObject *const *args, size_t nargsf,
                      PyObject *kwnames) {
  PyObject *m = PyObject_GetAttr(self, name);
  if (m == NULL) return NULL;
  PyObject *r = PyObject_Vectorcall(m, args, nargsf, kwnames);
  Py_DECREF(m);
  return r;
}

/* Arguments by position or name into out[n] (NULL: not given); -1: unknown. */
static inline int parse(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                        const char *const *names, int n, PyObject **out) {
  if (nargs > n) return -1;
  for (int i = 0; i < n; i++) out[i] = NULL;
  for (Py_ssize_t i = 0; i < nargs; i++) out[i] = args[i];
  if (kwnames == NULL) return 0;
  Py_ssize_t nk = PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t k = 0; k < nk; k++) {
    int found = 0;
    for (int i = 0; i < n && !found; i++) {
      if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, k), names[i]) == 0) {
        if (out[i] != NULL) return -1;
        out[i] = args[nargs + k];
        found = 1;
      }
    }
    if (!found) return -1;
  }
  return 0;
}

static const char *const dlpack_args[] = {"stream", "max_version", "dl_device", "copy"};

static PyObject *tensor_dlpack(PyObject *self, PyObject *const *args, size_t nargsf,
                               PyObject *kwnames) {
  TensorObject *o = (TensorObject *)self;
  PyObject *a[4];
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  int versioned = -1;
  if (parse(args, nargs, kwnames, dlpack_args, 4, a) == 0 && o->has_dev &&
      o->dev_type == HURRAY_DL_CPU && (a[0] == NULL || a[0] == Py_None) &&
      (a[2] == NULL || a[2] == Py_None) &&
      (a[3] == NULL || a[3] == Py_None || a[3] == Py_False))
    versioned = hn_wants_versioned(a[1]);
  if (versioned < 0) return slow(self, hn_py.s_dlpack_slow, args, nargsf, kwnames);
  void *out;
  if (hn_tensor_export(o, versioned, &out) < 0) return NULL;
  return hn_capsule(out, versioned);
}

/* buffer.read_only now (it may change after a tensor is made): 1, 0, or
 * -1 with an exception set. A Buffer keeps it in its C half. */
int hn_read_only(PyObject *buffer) {
  if (PyObject_TypeCheck(buffer, &BufferBase)) return ((BufferObject *)buffer)->read_only;
  PyObject *ro_obj = PyObject_GetAttr(buffer, hn_py.s_read_only);
  if (ro_obj == NULL) return -1;
  int ro = PyObject_IsTrue(ro_obj);
  Py_DECREF(ro_obj);
  return ro;
}

/* The tensor exported as a DLPack tensor (versioned or legacy) in *out. */
int hn_tensor_export(TensorObject *o, int versioned, void **out) {
  int ro = hn_tensor_read_only(o);
  if (ro < 0) return -1;
  hurray_export_desc d = HURRAY_EXPORT_DESC_INIT;
  d.flags = ro ? HURRAY_HANDOFF_READ_ONLY : 0;
  hurray_handoff h;
  hurray_error err;
  if (hn_api.buffer_export(o->ptr, &d, &h, &err) != HURRAY_OK) {
    hn_raise(&err, 0, 0);
    return -1;
  }
  return hn_export_raw(&h, o->dtype, o->ndim, o->dims, o->has_strides ? o->dims + o->ndim : NULL,
                       o->byte_offset, versioned, out);
}

static PyObject *tensor_dtype_get(PyObject *self, void *c) {
  (void)c;
  return dtype_get(((TensorObject *)self)->dtype);
}

static PyMemberDef tensor_members[] = {
    {"buffer", T_OBJECT, offsetof(TensorObject, buffer), READONLY, "the Buffer"},
    {"_ref", T_OBJECT, offsetof(TensorObject, ref), READONLY, "the owner's reference"},
    {"shape", T_OBJECT, offsetof(TensorObject, shape), READONLY, "extents"},
    {"strides", T_OBJECT, offsetof(TensorObject, strides), READONLY, "strides or None"},
    {"byte_offset", T_ULONGLONG, offsetof(TensorObject, byte_offset), READONLY,
     "bytes to element 0"},
    {NULL, 0, 0, 0, NULL}};

static PyGetSetDef tensor_getset[] = {
    {"dtype", tensor_dtype_get, NULL, "the element type (DLDataType)", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef tensor_methods[] = {
    {"_set", tensor_set, METH_VARARGS, "Fill the C fields (Tensor.__init__)."},
    {"__dlpack__", (PyCFunction)(void (*)(void))tensor_dlpack, METH_FASTCALL | METH_KEYWORDS,
     "A DLPack capsule (see hurray.Tensor._dlpack_slow for every rule)."},
    {"__dlpack_device__", tensor_dlpack_device, METH_NOARGS, "(DLDeviceType, device_id)"},
    {NULL, NULL, 0, NULL}};

PyTypeObject TensorBase = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hurray._native.TensorBase",
    .tp_basicsize = sizeof(TensorObject),
    .tp_dealloc = tensor_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "The C half of hurray.Tensor.",
    .tp_methods = tensor_methods,
    .tp_members = tensor_members,
    .tp_getset = tensor_getset,
    .tp_new = PyType_GenericNew,
};

/* ---- BufferBase ----------------------------------------------------------- */

/* _ref and read_only live here (C), so that the per-tensor path reads them
 * without an attribute lookup; Python sets and reads them as before. */
static void buffer_dealloc(PyObject *self) {
  Py_CLEAR(((BufferObject *)self)->ref);  /* the _Ref drops the owner's reference */
  Py_TYPE(self)->tp_free(self);
}

static PyObject *buffer_read_only_get(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(((BufferObject *)self)->read_only);
}

static int buffer_read_only_set(PyObject *self, PyObject *v, void *c) {
  (void)c;
  if (v == NULL) {
    PyErr_SetString(PyExc_AttributeError, "read_only cannot be deleted");
    return -1;
  }
  int ro = PyObject_IsTrue(v);
  if (ro < 0) return -1;
  ((BufferObject *)self)->read_only = ro;
  return 0;
}

static PyMemberDef buffer_members[] = {
    {"_ref", T_OBJECT, offsetof(BufferObject, ref), 0,
     "the owner's reference (_Ref), None once closed"},
    {NULL, 0, 0, 0, NULL}};

static PyGetSetDef buffer_getset[] = {
    {"read_only", buffer_read_only_get, buffer_read_only_set,
     "exports are read-only (BP-ZC-NOMUT)", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

/* _set_fast(ptr, nbytes, device or None), from Buffer.__init__. */
static PyObject *buffer_set_fast(PyObject *self, PyObject *args) {
  BufferObject *o = (BufferObject *)self;
  unsigned long long ptr, n;
  PyObject *dev;
  if (!PyArg_ParseTuple(args, "KKO", &ptr, &n, &dev)) return NULL;
  int dt = 0, di = 0;
  if (dev != Py_None && !PyArg_ParseTuple(dev, "ii", &dt, &di)) return NULL;
  o->ptr = (hurray_buffer *)(uintptr_t)ptr;
  o->nbytes = n;
  o->has_dev = dev != Py_None;
  o->dev_type = dt;
  o->dev_id = di;
  Py_RETURN_NONE;
}

static const char *const tensor_args[] = {"dtype", "shape", "strides", "byte_offset"};

/* A checked tuple of exact ints in [lo, I64_MAX] of length n (or any
 * length when n < 0) from a tuple or list; NULL without an error when the
 * fast path cannot take it. */
static PyObject *int_tuple(PyObject *seq, Py_ssize_t n, int64_t lo, int64_t *values) {
  if (!PyTuple_CheckExact(seq) && !PyList_CheckExact(seq)) return NULL;
  Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
  if ((n >= 0 && len != n) || len > MAX_NDIM) return NULL;
  PyObject **items = PySequence_Fast_ITEMS(seq);
  for (Py_ssize_t i = 0; i < len; i++)
    if (!hn_int64(items[i], lo, INT64_MAX, &values[i])) return NULL;
  if (PyTuple_CheckExact(seq)) {
    Py_INCREF(seq);
    return seq;
  }
  return PyList_AsTuple(seq);
}

/* The dtype name of the last tensor() call and what it named: code passes
 * the same str constant each time, so its identity answers the lookup. */
static PyObject *last_dtype_name;
static hurray_dl_data_type last_dtype;

/* Likewise the shape of the last call, when it was a tuple (immutable, of
 * exact ints: int_tuple checked them): held, so that its address names it. */
static PyObject *last_shape;
static int64_t last_shape_values[MAX_NDIM];

static PyObject *buffer_tensor(PyObject *self, PyObject *const *args, size_t nargsf,
                               PyObject *kwnames) {
  BufferObject *b = (BufferObject *)self;
  PyObject *a[4], *ref = NULL, *shape = NULL, *strides = NULL, *t = NULL;
  hurray_dl_data_type dtype = {HURRAY_DL_UINT, 8, 1};
  int64_t off = 0;
  int64_t values[2 * MAX_NDIM];  /* shape, then strides, as read from the arguments */
  if (parse(args, PyVectorcall_NARGS(nargsf), kwnames, tensor_args, 4, a) < 0) goto slow;
  ref = b->ref;
  if (ref == NULL || ref == Py_None) {  /* closed: the slow path says so */
    ref = NULL;
    goto slow;
  }
  Py_INCREF(b->ref);  /* ref's: dropped below */
  if (a[0] != NULL && a[0] == last_dtype_name) {  /* the same str object as last time */
    dtype = last_dtype;
  } else if (a[0] != NULL) {
    if (!PyUnicode_CheckExact(a[0])) goto slow;
    PyObject *cb = PyDict_GetItemWithError(hn_py.dtype_names, a[0]);
    if (cb == NULL) {
      if (PyErr_Occurred()) goto fail;
      goto slow;
    }
    dtype.code = (uint8_t)PyLong_AsLong(PyTuple_GET_ITEM(cb, 0));
    dtype.bits = (uint8_t)PyLong_AsLong(PyTuple_GET_ITEM(cb, 1));
    Py_INCREF(a[0]);  /* held, so that its address names this str while cached */
    Py_XSETREF(last_dtype_name, a[0]);
    last_dtype = dtype;
  }
  if (a[3] != NULL && !hn_int64(a[3], 0, INT64_MAX, &off)) goto slow;
  if (a[1] == NULL || a[1] == Py_None) {
    unsigned long long size = (dtype.bits * dtype.lanes + 7u) / 8u;
    unsigned long long n = b->nbytes > (unsigned long long)off ? b->nbytes - off : 0;
    if (n / size > INT64_MAX) goto slow;  /* the slow path explains */
    values[0] = (int64_t)(n / size);
    PyObject *x = PyLong_FromUnsignedLongLong(n / size);
    shape = x ? PyTuple_Pack(1, x) : NULL;
    Py_XDECREF(x);
    if (shape == NULL) goto fail;
  } else if (PyLong_CheckExact(a[1])) {
    int64_t v;
    if (!hn_int64(a[1], 0, INT64_MAX, &v)) goto slow;
    values[0] = v;
    shape = PyTuple_Pack(1, a[1]);
    if (shape == NULL) goto fail;
  } else if (a[1] == last_shape) {  /* the same tuple object as last time */
    shape = a[1];
    Py_INCREF(shape);
    memcpy(values, last_shape_values, sizeof(int64_t) * (size_t)PyTuple_GET_SIZE(shape));
  } else if ((shape = int_tuple(a[1], -1, 0, values)) == NULL) {
    if (PyErr_Occurred()) goto fail;
    goto slow;
  } else if (shape == a[1]) {  /* a tuple: remembered */
    Py_INCREF(shape);
    Py_XSETREF(last_shape, shape);
    memcpy(last_shape_values, values, sizeof(int64_t) * (size_t)PyTuple_GET_SIZE(shape));
  }
  if (a[2] == NULL || a[2] == Py_None) {
    strides = Py_None;
    Py_INCREF(strides);
  } else if ((strides = int_tuple(a[2], PyTuple_GET_SIZE(shape), INT64_MIN,
                                   values + PyTuple_GET_SIZE(shape))) == NULL) {
    if (PyErr_Occurred()) goto fail;
    goto slow;
  }
  t = tensor_alloc();
  if (t == NULL) goto fail;
  if (tensor_fill((TensorObject *)t, self, ref, b->ptr, dtype, shape, strides,
                  (unsigned long long)off, b->has_dev, b->dev_type, b->dev_id, values) < 0)
    Py_CLEAR(t);
  else
    ((TensorObject *)t)->native_buffer = 1;  /* self: this method is BufferBase's */
  Py_DECREF(ref);
  Py_DECREF(shape);
  Py_DECREF(strides);
  return t;
slow:
  Py_XDECREF(ref);
  Py_XDECREF(shape);
  Py_XDECREF(strides);
  return slow(self, hn_py.s_tensor_slow, args, nargsf, kwnames);
fail:
  Py_XDECREF(ref);
  Py_XDECREF(shape);
  Py_XDECREF(strides);
  return NULL;
}

static PyObject *buffer_dlpack(PyObject *self, PyObject *const *args, size_t nargsf,
                               PyObject *kwnames) {
  PyObject *t = buffer_tensor(self, NULL, 0, NULL);
  if (t == NULL) return NULL;
  PyObject *r = tensor_dlpack(t, args, nargsf, kwnames);
  Py_DECREF(t);
  return r;
}

static PyObject *buffer_dlpack_device(PyObject *self, PyObject *unused) {
  (void)unused;
  BufferObject *o = (BufferObject *)self;
  if (o->has_dev) return Py_BuildValue("(ii)", o->dev_type, o->dev_id);
  PyObject *t = buffer_tensor(self, NULL, 0, NULL);
  if (t == NULL) return NULL;
  PyObject *r = tensor_dlpack_device(t, NULL);
  Py_DECREF(t);
  return r;
}

static PyMethodDef buffer_methods[] = {
    {"_set_fast", buffer_set_fast, METH_VARARGS, "Fill the C fields (Buffer.__init__)."},
    {"tensor", (PyCFunction)(void (*)(void))buffer_tensor, METH_FASTCALL | METH_KEYWORDS,
     "tensor(dtype='uint8', shape=None, strides=None, byte_offset=0): a typed view for "
     "DLPack and numpy: shape None = as many elements as fit; strides in elements (None: "
     "row-major); dtype a name ('float32'), a numpy dtype, type or character code ('f'), "
     "or a torch dtype."},
    {"__dlpack__", (PyCFunction)(void (*)(void))buffer_dlpack, METH_FASTCALL | METH_KEYWORDS,
     "The buffer as a 1-D uint8 DLPack tensor (see Tensor.__dlpack__)."},
    {"__dlpack_device__", buffer_dlpack_device, METH_NOARGS, "(DLDeviceType, device_id)"},
    {NULL, NULL, 0, NULL}};

PyTypeObject BufferBase = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hurray._native.BufferBase",
    .tp_basicsize = sizeof(BufferObject),
    .tp_dealloc = buffer_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "The C half of hurray.Buffer.",
    .tp_methods = buffer_methods,
    .tp_members = buffer_members,
    .tp_getset = buffer_getset,
    .tp_new = PyType_GenericNew,
};

int hn_types_init(PyObject *m) {
  PyTypeObject *types[] = {&HandoffBase, &TensorBase, &BufferBase};
  const char *names[] = {"HandoffBase", "TensorBase", "BufferBase"};
  for (int i = 0; i < 3; i++) {
    if (PyType_Ready(types[i]) < 0) return -1;
    if (i > 0) {  /* DLPack 1.3: the exchange API, on the type (Tensor, Buffer) */
      /* a capsule under the 1.3 name; the bare address under the name used
       * before it (tvm-ffi and PyTorch builds of 2025 read that one) */
      PyObject *api = PyCapsule_New((void *)&hn_exchange_api, HN_EXCHANGE_CAPSULE, NULL);
      PyObject *legacy = PyLong_FromVoidPtr((void *)&hn_exchange_api);
      if (api == NULL || legacy == NULL ||
          PyDict_SetItem(types[i]->tp_dict, hn_py.s_exchange, api) < 0 ||
          PyDict_SetItem(types[i]->tp_dict, hn_py.s_exchange_legacy, legacy) < 0) {
        Py_XDECREF(api);
        Py_XDECREF(legacy);
        return -1;
      }
      Py_DECREF(api);
      Py_DECREF(legacy);
      PyType_Modified(types[i]);
    }
    Py_INCREF(types[i]);
    if (PyModule_AddObject(m, names[i], (PyObject *)types[i]) < 0) return -1;
  }
  return 0;
}

/* buffer.tensor() with no arguments: the 1-D uint8 view. */
PyObject *hn_buffer_tensor(PyObject *buffer) { return buffer_tensor(buffer, NULL, 0, NULL); }
