"""hurray._native, the compiled per-tensor path (python/native/, built by
the CMake target hurray_python_native), when there is one.

Where it is looked for: HURRAY_NATIVE (a path; "0": none, the ctypes path
only), then next to this package (an installed package), then the build
tree of the libhurray that _lib loaded and the repository's build trees (a
source checkout). Without it the package runs on ctypes alone, slower but
with the same behaviour. The module never links libhurray: setup() hands it
the functions _lib loaded, so both always call the same library."""
import ctypes
import glob
import importlib.machinery
import importlib.util
import os
import sys

from . import _lib

_NEEDED = ("hurray_buffer_export", "hurray_handoff_release", "hurray_dlpack_export_versioned",
           "hurray_dlpack_export_legacy", "hurray_dlpack_import_versioned_opts",
           "hurray_dlpack_import_legacy_opts", "hurray_buffer_data", "hurray_buffer_alloc",
           "hurray_buffer_unref", "hurray_handle_decode", "hurray_handle_encode",
           "hurray_table_validate")


def _load(path):
    spec = importlib.util.spec_from_file_location("hurray._native", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules["hurray._native"] = module
    return module


def _candidates():
    here = os.path.dirname(os.path.abspath(__file__))
    names = ["_native" + s for s in importlib.machinery.EXTENSION_SUFFIXES]
    dirs = [os.path.join(os.path.dirname(os.path.realpath(_lib.path)), "python", "hurray")]
    repo = os.path.dirname(os.path.dirname(here))
    found = glob.glob(os.path.join(repo, "build*", "python", "hurray"))
    found += glob.glob(os.path.join(repo, "build*", "*", "python", "hurray"))
    dirs += sorted(found, key=os.path.getmtime, reverse=True)  # newest first
    for d in dirs:
        for n in names:
            yield os.path.join(d, n)


def _find():
    if not all(hasattr(_lib.lib, n) for n in _NEEDED):
        return None  # an older libhurray: ctypes only
    env = os.environ.get("HURRAY_NATIVE")
    if env == "0":
        return None
    if env:
        return _load(env)  # an explicit choice fails loudly
    try:
        from . import _native  # installed next to the package
        return _native
    except ImportError:
        pass
    for path in _candidates():
        if os.path.exists(path):
            try:
                return _load(path)
            except ImportError:
                continue
    return None


native = _find()


def _bind_methods(cls):
    """Give cls (Buffer, Tensor, Handoff) its own descriptors of the C
    methods it inherits (per tensor: tensor, __dlpack__, __dlpack_device__,
    release), so that a call checks the exact type instead of walking the MRO."""
    base = cls.__mro__[1]
    for name in ("tensor", "__dlpack__", "__dlpack_device__", "release"):
        if name in base.__dict__ and name not in cls.__dict__:
            setattr(cls, name, native._method_for(base.__dict__[name], cls))


def setup(tensor_class, handoff_class, from_dlpack_slow, buffer_class=None):
    """Hand the module the library's functions and the package's classes."""
    from ._dtypes import _NAMES
    from ._errors import native_error
    fns = {n: ctypes.cast(getattr(_lib.lib, n), ctypes.c_void_p).value for n in _NEEDED}
    native._setup(fns, {"error": native_error, "dtype_class": _lib.DLDataType,
                        "dtype_names": dict(_NAMES), "handoff_class": handoff_class,
                        "tensor_class": tensor_class, "from_dlpack_slow": from_dlpack_slow})
    for cls in (tensor_class, buffer_class, handoff_class):
        if cls is not None:
            _bind_methods(cls)
