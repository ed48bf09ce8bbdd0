"""What must outlive the interpreter's teardown.

libhurray calls back into Python when it frees a wrapped buffer (on_free,
`keep`), and that can happen while the interpreter exits: a torch tensor
of a Buffer.wrap() buffer still alive in __main__ is freed after this
package's modules have been cleared. So:

- the one free callback (a ctypes thunk) and the registry it reads (on_free,
  keep per buffer) are immortal: C may call it after every module is
  gone, and its code and state must still be there;
- an immortal object's referents are never collected, so a module whose
  on_free is pending would keep its buffers for ever if the teardown only
  collected it; but it clears (in the order names were bound, those with
  one underscore first) each module still alive once sys.modules is
  emptied. At exit __main__ is kept alive for that (through sys), so the
  buffers of __main__ and of the modules it imported are freed while the
  interpreter still runs, and get their on_free, exactly once;
- once the interpreter is exiting (atexit), an exception from an on_free
  callable is swallowed: nobody could print it any more.
"""
import atexit
import itertools
import sys
import threading

from . import _lib

state = {"exiting": False}


class _Registry:
    __slots__ = ("pending", "lock", "__weakref__")

    def __init__(self):
        self.pending = {}  # token -> (on_free, keep)
        self.lock = threading.Lock()


_registry = _Registry()
_tokens = itertools.count(1)

# Compiled with no builtins: the immortal function must reach nothing else.
_SOURCE = """
def make(reg, st, base_exception):
    def trampoline(user, data):
        try:
            with reg.lock:
                entry = reg.pending.pop(user, None)
            if entry is not None and entry[0] is not None:
                entry[0](data or 0)
        except base_exception:
            if not st["exiting"]:
                raise  # ctypes reports it ("Exception ignored on calling ctypes callback")
    return trampoline
"""
_ns = {"__builtins__": {}}
exec(compile(_SOURCE, __file__, "exec"), _ns)
free_trampoline = _lib.FREE_FN(_ns.pop("make")(_registry, state, BaseException))
del _ns
_lib.ctypes.pythonapi.Py_IncRef.argtypes = [_lib.ctypes.py_object]
_lib.ctypes.pythonapi.Py_IncRef(free_trampoline)  # never freed


def register(on_free, keep):
    """A token for free_user: on_free(address) runs once when libhurray frees
    the memory, and `keep` lives until then."""
    token = next(_tokens)
    with _registry.lock:
        _registry.pending[token] = (on_free, keep)
    return token


def forget(token):
    with _registry.lock:
        _registry.pending.pop(token, None)


def pending_count():
    """How many wrapped buffers libhurray has not freed yet."""
    with _registry.lock:
        return len(_registry.pending)


def _at_exit():
    state["exiting"] = True
    main = sys.modules.get("__main__")
    if main is not None:
        # Cleared, not only collected (see above).
        sys._hurray_main_module = main


atexit.register(_at_exit)
