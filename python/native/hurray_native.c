/*
 * hurray._native: the per-tensor path of the Python package in C (issue 34).
 *
 * What runs once per tensor -- Buffer.tensor(), __dlpack__ and
 * __dlpack_device__ on the producer side, hurray.from_dlpack() and
 * Handoff.release() on the consumer side, the capsules and their
 * destructors -- is here; everything else stays in Python (python/hurray),
 * which also keeps a ctypes path for interpreters without this module.
 *
 * The module never links libhurray: hurray._lib loads the library with
 * ctypes and hands the addresses of the few functions used here to
 * _setup(), so both sides always call the same library. The fast paths
 * take only the common, well-formed requests; any other request is handed
 * to the Python methods (the *_slow ones), which raise the errors the
 * package always raised.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <stdint.h>
#include <string.h>

#include "hurray.h"
#include "hurray_dlpack.h"

#include "hurray_native.h"

/* ---- what _setup() gave us ------------------------------------------------ */
struct hurray_native_api hn_api;
struct hurray_native_py hn_py;

static const char CAP_LEGACY[] = "dltensor";
static const char CAP_VERSIONED[] = "dltensor_versioned";
static Py_ssize_t live_capsules;

/* Raise the package's exception (HurrayError or DLPackError) for `err`. */
PyObject *hn_raise(const hurray_error *err, int dlpack, int importing) {
  PyObject *exc = PyObject_CallFunction(
      hn_py.error, "iiiy#y#LL", dlpack, importing, (int)err->status, err->rule_id,
      (Py_ssize_t)strnlen(err->rule_id, sizeof err->rule_id), err->message,
      (Py_ssize_t)strnlen(err->message, sizeof err->message), (long long)err->buffer_index,
      (long long)err->byte_offset);
  if (exc != NULL) {
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
  }
  return NULL;
}

/* ---- capsules ----------------------------------------------------------- */
/* A name that starts with "used_" (read byte by byte: it may be shorter). */
static inline int used_name(const char *n) {
  return n[0] == 'u' && n[1] == 's' && n[2] == 'e' && n[3] == 'd' && n[4] == '_';
}

/* The destructor deletes the tensor of a capsule nobody consumed (a
 * consumer renames it "used_..."), at once: numpy dropping a capsule it
 * refuses, a capsule going out of scope, the interpreter's teardown. It may
 * run with an exception set, and the deleter may call back into Python
 * (on_free of a wrapped buffer): the exception is kept aside meanwhile. */
static void capsule_destructor(PyObject *cap) {
  /* A consumed capsule (renamed "used_...", the common case) has nothing
   * to delete: no exception to keep aside, no full name compared. */
  const char *name = PyCapsule_GetName(cap);  /* cannot fail: cap is a capsule */
  if (name != CAP_VERSIONED && name != CAP_LEGACY && name != NULL && used_name(name)) {
    live_capsules--;
    return;
  }
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  if (PyCapsule_IsValid(cap, CAP_VERSIONED)) {
    hurray_dl_managed_tensor_versioned *t = PyCapsule_GetPointer(cap, CAP_VERSIONED);
    if (t->deleter) t->deleter(t);
  } else if (PyCapsule_IsValid(cap, CAP_LEGACY)) {
    hurray_dl_managed_tensor *t = PyCapsule_GetPointer(cap, CAP_LEGACY);
    if (t->deleter) t->deleter(t);
  }
  live_capsules--;
  PyErr_Restore(type, value, tb);
}

/* A capsule owning `tensor`; on failure the tensor is deleted here. */
PyObject *hn_capsule(void *tensor, int versioned) {
  PyObject *cap = PyCapsule_New(tensor, versioned ? CAP_VERSIONED : CAP_LEGACY,
                                capsule_destructor);
  if (cap == NULL) {
    if (versioned) {
      hurray_dl_managed_tensor_versioned *t = tensor;
      t->deleter(t);
    } else {
      hurray_dl_managed_tensor *t = tensor;
      t->deleter(t);
    }
    return NULL;
  }
  live_capsules++;
  return cap;
}

/* Export `h` (moved in on success; released here on failure) as a tensor in *out. */
int hn_export_raw(hurray_handoff *h, hurray_dl_data_type dtype, int32_t ndim,
                  const int64_t *shape, const int64_t *strides, uint64_t byte_offset,
                  int versioned, void **out) {
  hurray_error err;
  hurray_status st =
      versioned ? hn_api.export_versioned(h, dtype, ndim, shape, strides, byte_offset,
                                          (hurray_dl_managed_tensor_versioned **)out, &err)
                : hn_api.export_legacy(h, dtype, ndim, shape, strides, byte_offset,
                                       (hurray_dl_managed_tensor **)out, &err);
  if (st != HURRAY_OK) {
    if (h->release) hn_api.handoff_release(h, NULL);
    hn_raise(&err, 1, 0);
    return -1;
  }
  return 0;
}

/* ---- small parsers -------------------------------------------------------- */
/* 1: versioned, 0: legacy, -1: not a form the fast path knows (no error set). */
int hn_wants_versioned(PyObject *max_version) {
  if (max_version == NULL || max_version == Py_None) return 0;
  if (!PyTuple_CheckExact(max_version) || PyTuple_GET_SIZE(max_version) != 2) return -1;
  PyObject *major = PyTuple_GET_ITEM(max_version, 0);
  if (!PyLong_CheckExact(major) || !PyLong_CheckExact(PyTuple_GET_ITEM(max_version, 1)))
    return -1;
  long m = PyLong_AsLong(major);
  if (m == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return -1;
  }
  return m >= 1;
}

/* An exact int in [lo, hi] into *out; 0 when it is not one (no error set). */
int hn_int64(PyObject *o, int64_t lo, int64_t hi, int64_t *out) {
  if (!PyLong_CheckExact(o)) return 0;
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow || (v == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    return 0;
  }
  if (v < lo || v > hi) return 0;
  *out = v;
  return 1;
}

/* ---- from_dlpack (consumer side) --------------------------------------- */
/* type -> the address of its DLPackExchangeAPI (DLPack 1.3), or 0: none. */
static PyObject *exchange_apis;

static const hurray_dl_exchange_api *exchange_api_of(PyTypeObject *type) {
  PyObject *v = PyDict_GetItemWithError(exchange_apis, (PyObject *)type);
  if (v == NULL) {
    if (PyErr_Occurred()) return NULL;
    /* DLPack 1.3 publishes a PyCapsule named "dlpack_exchange_api" as
     * __dlpack_c_exchange_api__; producers from before the rename publish the
     * table's address as an int under __c_dlpack_exchange_api__. */
    PyObject *a = PyObject_GetAttr((PyObject *)type, hn_py.s_exchange);
    if (a == NULL) {
      PyErr_Clear();
      a = PyObject_GetAttr((PyObject *)type, hn_py.s_exchange_legacy);
    }
    void *p = NULL;
    if (a == NULL) {
      PyErr_Clear();
    } else {
      if (PyCapsule_IsValid(a, HN_EXCHANGE_CAPSULE))
        p = PyCapsule_GetPointer(a, HN_EXCHANGE_CAPSULE);
      else if (PyLong_Check(a))
        p = PyLong_AsVoidPtr(a);
      Py_DECREF(a);
      if (p == NULL) PyErr_Clear();
      /* a table of another major version is not ours to read */
      if (p != NULL && ((const hurray_dl_exchange_api *)p)->header.version.major !=
                           HURRAY_DLPACK_MAJOR_VERSION)
        p = NULL;
    }
    v = PyLong_FromVoidPtr(p);
    if (v == NULL || PyDict_SetItem(exchange_apis, (PyObject *)type, v) < 0) {
      Py_XDECREF(v);
      PyErr_Clear();
      return NULL;
    }
    Py_DECREF(v);
  }
  return (const hurray_dl_exchange_api *)PyLong_AsVoidPtr(v);
}

/* Types whose __dlpack__ takes no max_version (numpy 1.x, torch 1.x): asked
 * without it from the second time on, as the array API's fallback says. */
static PyObject *legacy_producers;

static PyObject *ask_capsule(PyObject *obj) {
  PyObject *meth = PyObject_GetAttr(obj, hn_py.s_dlpack);
  if (meth == NULL) return NULL;
  PyObject *type = (PyObject *)Py_TYPE(obj);
  int legacy = PySet_Contains(legacy_producers, type);
  PyObject *cap = NULL;
  if (legacy == 0) {
    cap = PyObject_Call(meth, hn_py.empty_tuple, hn_py.dlpack_kwargs);
    if (cap == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear();
      cap = PyObject_Call(meth, hn_py.empty_tuple, NULL);
      if (cap != NULL && PySet_Add(legacy_producers, type) < 0) Py_CLEAR(cap);
    }
  } else if (legacy == 1) {
    cap = PyObject_Call(meth, hn_py.empty_tuple, NULL);
  }
  Py_DECREF(meth);
  return cap;
}

/* numpy.ndarray, once an object of that type was seen (numpy is not
 * imported here): its __dlpack_device__ is always (kDLCPU, 0), so the fast
 * path does not ask. Subclasses are asked. */
static PyTypeObject *ndarray_type;

static int is_ndarray(PyTypeObject *type) {
  if (ndarray_type != NULL) return type == ndarray_type;
  if (strcmp(type->tp_name, "numpy.ndarray") != 0) return 0;
  PyObject *numpy = PyImport_GetModule(hn_py.s_numpy);  /* loaded: type came from it */
  PyObject *nd = numpy ? PyObject_GetAttrString(numpy, "ndarray") : NULL;
  Py_XDECREF(numpy);
  if (nd == NULL) {
    PyErr_Clear();
    return 0;
  }
  if (nd == (PyObject *)type) ndarray_type = type;  /* kept: nd's reference */
  else Py_DECREF(nd);
  return ndarray_type != NULL;
}

/* The fast path of hurray.from_dlpack(obj): a CPU producer, no options. */
static PyObject *hn_from_dlpack(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  if (PyTuple_GET_SIZE(args) != 1 || kwargs != NULL ||
      PyCapsule_CheckExact(PyTuple_GET_ITEM(args, 0)))
    return PyObject_Call(hn_py.from_dlpack_slow, args, kwargs);
  PyObject *obj = PyTuple_GET_ITEM(args, 0);
  const hurray_dl_exchange_api *api = exchange_api_of(Py_TYPE(obj));
  if (api != NULL) {  /* DLPack 1.3: no capsule, no Python call */
    PyObject *h = hn_exchange_import(obj, api);
    if (h != NULL || PyErr_Occurred()) return h;
  }
  if (is_ndarray(Py_TYPE(obj))) {  /* a numpy array is always on the CPU */
    PyObject *cap = ask_capsule(obj);
    if (cap == NULL) return NULL;
    PyObject *h = hn_import_capsule(cap);
    Py_DECREF(cap);
    return h;
  }
  PyObject *dev = PyObject_CallMethodNoArgs(obj, hn_py.s_dlpack_device);
  if (dev == NULL) {
    PyErr_Clear();  /* no __dlpack_device__, or one that fails: the slow path says why */
    return PyObject_Call(hn_py.from_dlpack_slow, args, kwargs);
  }
  int64_t dtype_ = 0;
  int cpu = PyTuple_Check(dev) && PyTuple_GET_SIZE(dev) == 2 &&
            PyLong_Check(PyTuple_GET_ITEM(dev, 0));  /* torch: an IntEnum */
  if (cpu) {
    dtype_ = PyLong_AsLongLong(PyTuple_GET_ITEM(dev, 0));
    if (dtype_ == -1 && PyErr_Occurred()) PyErr_Clear();
    cpu = dtype_ == HURRAY_DL_CPU;
  }
  Py_DECREF(dev);
  if (!cpu) return PyObject_Call(hn_py.from_dlpack_slow, args, kwargs);
  PyObject *cap = ask_capsule(obj);
  if (cap == NULL) return NULL;
  PyObject *h = hn_import_capsule(cap);
  Py_DECREF(cap);
  return h;
}

static PyObject *hn_capsule_py(PyObject *self, PyObject *args) {
  (void)self;
  unsigned long long ptr;
  int versioned;
  if (!PyArg_ParseTuple(args, "Kp", &ptr, &versioned)) return NULL;
  return hn_capsule((void *)(uintptr_t)ptr, versioned);
}

static PyObject *hn_live(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return PyLong_FromSsize_t(live_capsules);
}

static PyObject *hn_exchange_address(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return PyLong_FromVoidPtr((void *)&hn_exchange_api);
}

/* ---- _setup --------------------------------------------------------------- */
static int fn_ptr(PyObject *fns, const char *name, void **out) {
  PyObject *v = PyDict_GetItemString(fns, name);
  if (v == NULL) {
    PyErr_Format(PyExc_RuntimeError, "hurray._native: no address for %s", name);
    return -1;
  }
  *out = PyLong_AsVoidPtr(v);
  return PyErr_Occurred() ? -1 : 0;
}

static PyObject *hn_setup(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *fns, *py;
  if (!PyArg_ParseTuple(args, "O!O!", &PyDict_Type, &fns, &PyDict_Type, &py)) return NULL;
  if (fn_ptr(fns, "hurray_buffer_export", (void **)&hn_api.buffer_export) < 0 ||
      fn_ptr(fns, "hurray_handoff_release", (void **)&hn_api.handoff_release) < 0 ||
      fn_ptr(fns, "hurray_dlpack_export_versioned", (void **)&hn_api.export_versioned) < 0 ||
      fn_ptr(fns, "hurray_dlpack_export_legacy", (void **)&hn_api.export_legacy) < 0 ||
      fn_ptr(fns, "hurray_dlpack_import_versioned_opts", (void **)&hn_api.import_versioned) < 0 ||
      fn_ptr(fns, "hurray_dlpack_import_legacy_opts", (void **)&hn_api.import_legacy) < 0 ||
      fn_ptr(fns, "hurray_buffer_data", (void **)&hn_api.buffer_data) < 0 ||
      fn_ptr(fns, "hurray_buffer_alloc", (void **)&hn_api.buffer_alloc) < 0 ||
      fn_ptr(fns, "hurray_buffer_unref", (void **)&hn_api.buffer_unref) < 0 ||
      fn_ptr(fns, "hurray_handle_decode", (void **)&hn_api.handle_decode) < 0 ||
      fn_ptr(fns, "hurray_handle_encode", (void **)&hn_api.handle_encode) < 0 ||
      fn_ptr(fns, "hurray_table_validate", (void **)&hn_api.table_validate) < 0)
    return NULL;
  static const char *const names[] = {"error", "dtype_class", "dtype_names", "handoff_class",
                                      "tensor_class", "from_dlpack_slow"};
  PyObject **slots[] = {&hn_py.error, &hn_py.dtype_class, &hn_py.dtype_names,
                        &hn_py.handoff_class, &hn_py.tensor_class, &hn_py.from_dlpack_slow};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    PyObject *v = PyDict_GetItemString(py, names[i]);
    if (v == NULL) return PyErr_Format(PyExc_RuntimeError, "hurray._native: no %s", names[i]);
    Py_INCREF(v);
    Py_XSETREF(*slots[i], v);
  }
  hn_tensor_class_ready(hn_py.tensor_class);
  Py_RETURN_NONE;
}

/* _method_for(descriptor, cls): the C method of `descriptor` (a method of
 * BufferBase, TensorBase or HandoffBase) as a method descriptor of `cls`, a
 * subclass. Set in the subclass's own dict, a call on an exact instance
 * passes the descriptor's type check without walking the MRO, and CPython's
 * specialised call of a method descriptor (which asks for the exact type)
 * applies. */
static PyObject *hn_method_for(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *descr;
  PyTypeObject *cls;
  if (!PyArg_ParseTuple(args, "O!O!", &PyMethodDescr_Type, &descr, &PyType_Type, &cls))
    return NULL;
  PyMethodDescrObject *d = (PyMethodDescrObject *)descr;
  PyTypeObject *base = PyDescr_TYPE(d);
  if ((base != &BufferBase && base != &TensorBase && base != &HandoffBase) ||
      !PyType_IsSubtype(cls, base)) {
    PyErr_SetString(PyExc_TypeError, "_method_for: a method of a hurray._native base class "
                                     "and a subclass of that base");
    return NULL;
  }
  return PyDescr_NewMethod(cls, d->d_method);
}

static PyMethodDef module_methods[] = {
    {"_method_for", hn_method_for, METH_VARARGS,
     "_method_for(descriptor, cls): a base class's C method as cls's own descriptor."},
    {"_setup", hn_setup, METH_VARARGS,
     "Hand over the library's functions and the package's classes."},
    {"from_dlpack", (PyCFunction)(void (*)(void))hn_from_dlpack, METH_VARARGS | METH_KEYWORDS,
     "hurray.from_dlpack (see hurray._handoff.from_dlpack)."},
    {"capsule", hn_capsule_py, METH_VARARGS,
     "capsule(address, versioned): a DLPack capsule owning the tensor at address."},
    {"live_capsules", hn_live, METH_NOARGS, "Capsules made here and not yet destroyed."},
    {"exchange_api", hn_exchange_address, METH_NOARGS,
     "The address of hurray's DLPackExchangeAPI (DLPack 1.3)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_native",
                                        "libhurray's per-tensor path in C.", -1,
                                        module_methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__native(void) {
  PyObject *m = PyModule_Create(&module_def);
  if (m == NULL) return NULL;
  legacy_producers = PySet_New(NULL);
  exchange_apis = PyDict_New();
  hn_py.s_exchange = PyUnicode_InternFromString("__dlpack_c_exchange_api__");
  hn_py.s_exchange_legacy = PyUnicode_InternFromString("__c_dlpack_exchange_api__");
  hn_py.empty_tuple = PyTuple_New(0);
  hn_py.s_dlpack = PyUnicode_InternFromString("__dlpack__");
  hn_py.s_dlpack_device = PyUnicode_InternFromString("__dlpack_device__");
  hn_py.s_ref = PyUnicode_InternFromString("_ref");
  hn_py.s_numpy = PyUnicode_InternFromString("numpy");
  hn_py.s_ptr = PyUnicode_InternFromString("ptr");
  hn_py.s_read_only = PyUnicode_InternFromString("read_only");
  hn_py.s_tensor_slow = PyUnicode_InternFromString("_tensor_slow");
  hn_py.s_dlpack_slow = PyUnicode_InternFromString("_dlpack_slow");
  hn_py.dlpack_kwargs = Py_BuildValue("{s:O,s:(ii)}", "stream", Py_None, "max_version",
                                      HURRAY_DLPACK_MAJOR_VERSION, HURRAY_DLPACK_MINOR_VERSION);
  if (legacy_producers == NULL || exchange_apis == NULL || hn_py.dlpack_kwargs == NULL ||
      hn_types_init(m) < 0 || PyModule_AddFunctions(m, hn_handle_methods) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
