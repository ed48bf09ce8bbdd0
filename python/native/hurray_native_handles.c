/*
 * Handle encode/decode/validate for hurray._native (issue 34): the 16 wire
 * bytes to a tuple of fields and back, and a table validated under a policy
 * (an address, or None: the default), without ctypes structs. A request
 * the fast path does not take returns None and Python does it (and raises
 * the errors the package always raised).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

#include "hurray_native.h"

/* handle_decode(data) -> (byte_size, alignment, device_tag, sync_mode,
 * memory_class, reserved); raises HurrayError (BP-SIZE) as the library says. */
static PyObject *handle_decode(PyObject *self, PyObject *data) {
  (void)self;
  Py_buffer view;
  if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) return NULL;
  hurray_buffer_handle h;
  hurray_error err;
  hurray_status st = hn_api.handle_decode(view.buf, (size_t)view.len, &h, &err);
  PyBuffer_Release(&view);
  if (st != HURRAY_OK) return hn_raise(&err, 0, 0);
  return Py_BuildValue("(KkBBBB)", (unsigned long long)h.byte_size, (unsigned long)h.alignment,
                       h.device_tag, h.sync_mode, h.memory_class, h.reserved);
}

static int field(PyObject *o, uint64_t max, uint64_t *out) {
  if (!PyLong_CheckExact(o)) return 0;
  unsigned long long v = PyLong_AsUnsignedLongLong(o);
  if (v == (unsigned long long)-1 && PyErr_Occurred()) {
    PyErr_Clear();
    return 0;
  }
  *out = v;
  return v <= max;
}

/* handle_encode(byte_size, alignment, device_tag, sync_mode, memory_class,
 * reserved) -> 16 bytes, or None when a field is not an int in its range. */
static PyObject *handle_encode(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  static const uint64_t max[6] = {UINT64_MAX, UINT32_MAX, 0xFF, 0xFF, 0xFF, 0xFF};
  uint64_t v[6];
  if (nargs != 6) Py_RETURN_NONE;
  for (int i = 0; i < 6; i++)
    if (!field(args[i], max[i], &v[i])) Py_RETURN_NONE;
  hurray_buffer_handle h;
  h.byte_size = v[0];
  h.alignment = (uint32_t)v[1];
  h.device_tag = (uint8_t)v[2];
  h.sync_mode = (uint8_t)v[3];
  h.memory_class = (uint8_t)v[4];
  h.reserved = (uint8_t)v[5];
  uint8_t out[HURRAY_HANDLE_SIZE];
  hurray_error err;
  if (hn_api.handle_encode(&h, out, sizeof out, &err) != HURRAY_OK) return hn_raise(&err, 0, 0);
  return PyBytes_FromStringAndSize((const char *)out, sizeof out);
}

/* table_validate(data, policy address or None): None, or HurrayError naming
 * the first broken rule. */
static PyObject *table_validate(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "table_validate(data, policy)");
    return NULL;
  }
  const hurray_policy *policy = NULL;
  if (args[1] != Py_None) {
    policy = PyLong_AsVoidPtr(args[1]);
    if (policy == NULL && PyErr_Occurred()) return NULL;
  }
  Py_buffer view;
  if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
  hurray_error err;
  hurray_status st = hn_api.table_validate(view.buf, (size_t)view.len, policy, &err);
  PyBuffer_Release(&view);
  if (st != HURRAY_OK) return hn_raise(&err, 0, 0);
  Py_RETURN_NONE;
}

PyMethodDef hn_handle_methods[] = {
    {"handle_decode", handle_decode, METH_O, "16 wire bytes -> the handle's six fields."},
    {"handle_encode", (PyCFunction)(void (*)(void))handle_encode, METH_FASTCALL,
     "The six fields -> 16 wire bytes (None: a field out of range)."},
    {"table_validate", (PyCFunction)(void (*)(void))table_validate, METH_FASTCALL,
     "Validate a handle or table under a policy (an address; None: the default)."},
    {NULL, NULL, 0, NULL}};
