"""DLPack capsules this package makes, and how their tensors are deleted
exactly once, whatever happens to them and whenever the interpreter exits.

A capsule made here has no destructor: a destructor written in Python
cannot run while an exception is set (numpy drops a capsule it refuses with
its error pending) nor after the interpreter's teardown has cleared this
module ("Error in sys.excepthook"). Instead every capsule is also held in
_capsules, and sweep() deletes the tensor of each one that nobody but
_capsules holds and nobody consumed (a consumer renames the capsule
"used_..." and deletes the tensor itself). sweep() runs after every garbage
collection and before each new capsule. At exit (atexit) the tensors of the
capsules still unconsumed are deleted and the capsules renamed, so that a
late consumer is refused instead of reading freed memory; no capsule is
made after that.
"""
import atexit
import ctypes
import gc
import sys
import threading

from . import _lib
from ._constants import E_UNSUPPORTED
from ._errors import DLPackError
from ._fast import native

_api = ctypes.pythonapi
New = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p,
                        ctypes.c_void_p)(("PyCapsule_New", _api))
IsValid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _api))
GetPointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))
SetName = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_SetName", _api))

# Capsules keep a pointer to their name: these bytes objects live for ever
# (module constants, and also referenced by the capsules' closure below).
LEGACY = b"dltensor"
VERSIONED = b"dltensor_versioned"
USED_LEGACY = b"used_dltensor"
USED_VERSIONED = b"used_dltensor_versioned"
RELEASED = b"hurray_released_dltensor"  # deleted by us at exit: no consumer takes it
_NAMES = (LEGACY, VERSIONED, USED_LEGACY, USED_VERSIONED, RELEASED)
ctypes.pythonapi.Py_IncRef.argtypes = [ctypes.py_object]
for _n in _NAMES:
    ctypes.pythonapi.Py_IncRef(_n)

_capsules = []
_lock = threading.RLock()
_sweeping = [False]
_exiting = [False]


def _refcounts(items):
    return [sys.getrefcount(x) for x in items]


# What sys.getrefcount says of a capsule that only _capsules holds.
_ALONE = _refcounts([New(1, b"hurray_calibration", None)])[0]


def unconsumed(cap):
    return bool(IsValid(cap, LEGACY) or IsValid(cap, VERSIONED))


def _delete_tensor(cap, renamed=RELEASED):
    """Delete the tensor of an unconsumed capsule and rename the capsule so
    that it cannot be consumed (or deleted) again."""
    if IsValid(cap, VERSIONED):
        t = ctypes.cast(GetPointer(cap, VERSIONED), ctypes.POINTER(_lib.DLManagedTensorVersioned))
    elif IsValid(cap, LEGACY):
        t = ctypes.cast(GetPointer(cap, LEGACY), ctypes.POINTER(_lib.DLManagedTensor))
    else:
        return
    SetName(cap, renamed)
    if t.contents.deleter:
        t.contents.deleter(t)


def consume(cap):
    """Delete the tensor of a producer's unconsumed capsule as its consumer
    does (renamed "used_...", so that the producer's destructor skips it)."""
    _delete_tensor(cap, USED_VERSIONED if IsValid(cap, VERSIONED) else USED_LEGACY)


def sweep(*gc_info):
    """Delete the tensors of the capsules only _capsules still holds."""
    if gc_info and gc_info[0] != "stop":
        return
    if not _lock.acquire(blocking=not gc_info):  # a collection never waits
        return
    try:
        if _sweeping[0]:
            return
        _sweeping[0] = True
        try:
            counts = _refcounts(_capsules)
            keep, drop = [], []
            for cap, n in zip(_capsules, counts):
                alive = unconsumed(cap)
                if alive and n > _ALONE:
                    keep.append(cap)
                else:
                    if alive:
                        _delete_tensor(cap)
                    drop.append(cap)
            _capsules[:] = keep
            cap = None  # the loop variable must not keep the last one alive
            drop.clear()
        finally:
            _sweeping[0] = False
    finally:
        _lock.release()


def new_capsule(pointer, versioned):
    """A capsule for a DLManagedTensor(Versioned) made by libhurray (with
    hurray._native: a capsule whose destructor, in C, deletes the tensor of
    an unconsumed capsule at once)."""
    if native is not None and not _exiting[0]:
        return native.capsule(pointer, versioned)
    if _exiting[0]:
        t = ctypes.cast(pointer, ctypes.POINTER(_lib.DLManagedTensorVersioned if versioned
                                                else _lib.DLManagedTensor))
        t.contents.deleter(t)
        raise DLPackError(E_UNSUPPORTED, "", "hurray: the interpreter is exiting; no more "
                          "DLPack capsules are made")
    sweep()
    cap = New(pointer, VERSIONED if versioned else LEGACY, None)
    with _lock:
        _capsules.append(cap)
    return cap


def live_count():
    """Capsules made here whose tensors have not been deleted or consumed."""
    sweep()
    with _lock:
        n = sum(1 for c in _capsules if unconsumed(c))
    return n + (native.live_capsules() if native is not None else 0)


def _at_exit():
    with _lock:
        _exiting[0] = True
        try:
            gc.callbacks.remove(sweep)
        except ValueError:
            pass
        for cap in _capsules:
            if unconsumed(cap):
                _delete_tensor(cap)
        _capsules.clear()


gc.callbacks.append(sweep)
atexit.register(_at_exit)
