"""What must outlive the interpreter's teardown.

libhurray calls back into Python when it frees a wrapped buffer (on_free,
`keep`), and that can happen while the interpreter exits: a torch tensor
of a Buffer.wrap() buffer still alive in __main__ is freed after this
package's modules have been cleared. So:

- the one free callback (a ctypes thunk) is made immortal: C may call it
  after every module is gone, and its code must still be there;
- it reaches its state through its closure, not module globals (which the
  teardown sets to None);
- once the interpreter is exiting (atexit), an exception from an on_free
  callable is swallowed: nobody could print it any more.
"""
import atexit
import ctypes
import itertools
import threading

from . import _lib

state = {"exiting": False}
_pending = {}  # token -> (on_free, keep)
_pending_lock = threading.Lock()
_tokens = itertools.count(1)


def _make_trampoline(pending, lock, st):
    def trampoline(user, data):
        try:
            with lock:
                entry = pending.pop(user, None)
            if entry is not None and entry[0] is not None:
                entry[0](data or 0)
        except BaseException:
            if not st["exiting"]:
                raise  # ctypes reports it ("Exception ignored on calling ctypes callback")
    return _lib.FREE_FN(trampoline)


free_trampoline = _make_trampoline(_pending, _pending_lock, state)
# Never freed: one reference no one will drop.
ctypes.pythonapi.Py_IncRef.argtypes = [ctypes.py_object]
ctypes.pythonapi.Py_IncRef(free_trampoline)


def register(on_free, keep):
    """A token for free_user: on_free(address) runs once when libhurray frees
    the memory, and `keep` lives until then."""
    token = next(_tokens)
    with _pending_lock:
        _pending[token] = (on_free, keep)
    return token


def forget(token):
    with _pending_lock:
        _pending.pop(token, None)


def pending_count():
    """How many wrapped buffers libhurray has not freed yet."""
    with _pending_lock:
        return len(_pending)


def _at_exit():
    state["exiting"] = True


atexit.register(_at_exit)
