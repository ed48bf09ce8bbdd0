"""hurray: Python bindings for libhurray, the Hurray buffer protocol.

ctypes over libhurray.so.1, no compiled extension. What it offers:

- Handle, decode(), validate(), diagnose(), inspect(): the 16-byte handle and
  buffer tables, checked against every rule of the protocol;
- Buffer.alloc(), Buffer.wrap(), Buffer.adopt(): a producer's buffer, with
  __dlpack__ / __dlpack_device__ so that numpy.from_dlpack(buf) (or
  torch.from_dlpack, ...) is a zero-copy view, released exactly once;
- from_dlpack(obj): any DLPack producer's tensor (a numpy array, say) taken
  over as a Handoff that a C consumer reads and releases.

The library is found through HURRAY_LIBRARY, then next to this package, then
ctypes.util.find_library("hurray"), then the loader's path (see _lib.py).
"""
import atexit
import ctypes
import gc
import itertools
import sys
import threading
from dataclasses import dataclass

from . import _lib

__all__ = [
    "HurrayError", "DLPackError", "Handle", "Diagnostic", "Policy", "Context", "Buffer",
    "Tensor", "Handoff", "decode", "decode_table", "validate", "diagnose", "inspect",
    "from_dlpack", "aligned_empty", "version", "library_path",
]

# ---------------------------------------------------------------- constants --
DEVICE_CPU, DEVICE_CUDA, DEVICE_ROCM, DEVICE_METAL = 0x00, 0x01, 0x02, 0x03
DEVICE_VULKAN, DEVICE_WEBGPU, DEVICE_HEXAGON, DEVICE_LEVEL_ZERO = 0x04, 0x05, 0x06, 0x07
DEVICE_OPENCL = 0x08
MEMORY_STANDARD, MEMORY_HOST_PINNED, MEMORY_UNIFIED, MEMORY_PEER = 0x00, 0x01, 0x02, 0x03
SYNC_PRODUCER_SYNCED, SYNC_EVENT, SYNC_CONSUMER_STREAM = 0x00, 0x01, 0x02
TRANSPORTS = {"in-process": 0, "ipc": 1, "rdma": 2, "cross-machine": 3}
HANDOFF_READ_ONLY, HANDOFF_OPAQUE_DATA, HANDOFF_QPARAM = 0x1, 0x2, 0x4
HANDLE_SIZE = 16
DLPACK_FLAG_READ_ONLY = 0x1

# DLDataTypeCode
DL_INT, DL_UINT, DL_FLOAT, DL_BFLOAT, DL_COMPLEX, DL_BOOL = 0, 1, 2, 4, 5, 6

library_path = _lib.path


def version():
    """The loaded library's version, e.g. "1.0.0"."""
    return _lib.lib.hurray_version_string().decode()


# ------------------------------------------------------------------- errors --
class HurrayError(Exception):
    """A libhurray call failed: status (int), status_name ("HURRAY_E_ALIGNMENT"),
    rule_id ("BP-ALIGN-MIN" or ""), message (English, starts with the rule ID)."""

    def __init__(self, status, rule_id, message, buffer_index=-1, byte_offset=-1):
        self.status = status
        self.status_name = _lib.lib.hurray_status_name(status).decode()
        self.rule_id = rule_id
        self.message = message
        self.buffer_index = buffer_index
        self.byte_offset = byte_offset
        super().__init__("%s (%s)" % (message, self.status_name))


class DLPackError(HurrayError, BufferError):
    """A DLPack exchange was refused (also a BufferError, as the DLPack
    protocol's consumers expect)."""


def _error(err, cls=HurrayError):
    return cls(err.status, err.rule_id.decode(), err.message.decode(), err.buffer_index,
               err.byte_offset)


def _check(status, err, cls=HurrayError):
    if status != 0:
        raise _error(err, cls)


# ------------------------------------------------------------------ handles --
@dataclass
class Handle:
    """The fields of one 16-byte buffer handle (any byte values)."""
    byte_size: int
    alignment: int
    device_tag: int = DEVICE_CPU
    sync_mode: int = SYNC_PRODUCER_SYNCED
    memory_class: int = MEMORY_STANDARD
    reserved: int = 0

    @classmethod
    def decode(cls, data):
        """Decode exactly 16 little-endian bytes (BP-SIZE otherwise)."""
        data = bytes(data)
        h, err = _lib.BufferHandle(), _lib.Error()
        _check(_lib.lib.hurray_handle_decode(data, len(data), ctypes.byref(h), ctypes.byref(err)),
               err)
        return cls._from_struct(h)

    @classmethod
    def _from_struct(cls, h):
        return cls(h.byte_size, h.alignment, h.device_tag, h.sync_mode, h.memory_class,
                   h.reserved)

    def _struct(self):
        return _lib.BufferHandle(self.byte_size, self.alignment, self.device_tag,
                                 self.sync_mode, self.memory_class, self.reserved)

    def encode(self):
        """The 16 little-endian bytes."""
        out, err = (ctypes.c_uint8 * 16)(), _lib.Error()
        h = self._struct()
        _check(_lib.lib.hurray_handle_encode(ctypes.byref(h), out, 16, ctypes.byref(err)), err)
        return bytes(out)

    @property
    def device(self):
        return _lib.lib.hurray_device_tag_name(self.device_tag).decode()

    @property
    def memory(self):
        return _lib.lib.hurray_memory_class_name(self.memory_class).decode()

    @property
    def sync(self):
        return _lib.lib.hurray_sync_mode_name(self.sync_mode).decode()

    def __str__(self):
        return ("%d bytes, alignment %d, device %s (0x%02X), sync %s, memory %s, reserved 0x%02X"
                % (self.byte_size, self.alignment, self.device, self.device_tag, self.sync,
                   self.memory, self.reserved))


def decode(data):
    """One handle from exactly 16 bytes."""
    return Handle.decode(data)


def decode_table(data):
    """Every handle of a buffer table (a whole number of 16-byte handles)."""
    data = bytes(data)
    if not data or len(data) % HANDLE_SIZE:
        raise HurrayError(2, "BP-SIZE", "BP-SIZE: a buffer table is a whole, non-empty number "
                          "of 16-byte handles; got %d bytes" % len(data))
    return [Handle.decode(data[i:i + HANDLE_SIZE]) for i in range(0, len(data), HANDLE_SIZE)]


class Policy:
    """Which rules apply: transport ("in-process", "ipc", "rdma",
    "cross-machine"), agreed private device tags, SHOULDs as errors."""

    def __init__(self, transport="in-process", private_tags=(), warnings_as_errors=False):
        self._p = ctypes.c_void_p()
        err = _lib.Error()
        _check(_lib.lib.hurray_policy_create(ctypes.byref(self._p), ctypes.byref(err)), err)
        try:
            if transport not in TRANSPORTS:
                raise ValueError("unknown transport %r (one of %s)" % (transport,
                                                                       ", ".join(TRANSPORTS)))
            _check(_lib.lib.hurray_policy_set_transport(self._p, TRANSPORTS[transport],
                                                        ctypes.byref(err)), err)
            for tag in private_tags:
                _check(_lib.lib.hurray_policy_allow_private_tag(self._p, tag, 1,
                                                                ctypes.byref(err)), err)
            _check(_lib.lib.hurray_policy_set_warnings_as_errors(
                self._p, 1 if warnings_as_errors else 0, ctypes.byref(err)), err)
        except Exception:
            self.close()
            raise

    def close(self):
        if self._p:
            _lib.lib.hurray_policy_destroy(self._p)
            self._p = ctypes.c_void_p()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown, or __init__ failed
            pass


def _policy(policy, kwargs):
    return policy if policy is not None else Policy(**kwargs)


def validate(data, policy=None, **kwargs):
    """Check a handle or buffer table (bytes); raise HurrayError naming the
    first broken rule. kwargs make a Policy (transport=..., ...)."""
    data = bytes(data)
    p = _policy(policy, kwargs)
    err = _lib.Error()
    _check(_lib.lib.hurray_table_validate(data, len(data), p._p, ctypes.byref(err)), err)


@dataclass
class Diagnostic:
    """One error or warning of diagnose()."""
    severity: str  # "error" or "warning"
    rule_id: str
    message: str
    buffer_index: int
    byte_offset: int


def diagnose(data, policy=None, **kwargs):
    """Every error and warning of a handle or buffer table, in order."""
    data = bytes(data)
    p = _policy(policy, kwargs)
    n_err, n_warn, err = ctypes.c_size_t(), ctypes.c_size_t(), _lib.Error()
    cap = 16
    while True:
        out = (_lib.Error * cap)()
        st = _lib.lib.hurray_table_diagnose(data, len(data), p._p, out, cap, ctypes.byref(n_err),
                                            ctypes.byref(n_warn), ctypes.byref(err))
        if st != 0 and n_err.value == 0 and n_warn.value == 0:
            raise _error(err)
        total = n_err.value + n_warn.value
        if total <= cap:
            break
        cap = total
    return [Diagnostic("warning" if e.severity else "error", e.rule_id.decode(),
                       e.message.decode(), e.buffer_index, e.byte_offset) for e in out[:total]]


def inspect(data, policy=None, **kwargs):
    """A human-readable report of a handle or buffer table, as hurray-inspect
    prints it: each handle's fields, then every error and warning."""
    data = bytes(data)
    lines = []
    if data and len(data) % HANDLE_SIZE == 0:
        for i, h in enumerate(decode_table(data)):
            lines.append("buffer %d: %s" % (i, h))
    diags = diagnose(data, policy, **kwargs)
    for d in diags:
        lines.append("%s: %s" % (d.severity, d.message))
    errors = sum(1 for d in diags if d.severity == "error")
    lines.append("valid" if not errors else "invalid: %d error(s)" % errors)
    return "\n".join(lines)


# ------------------------------------------------------------------ context --
class Context:
    """A hurray_context: the policy producers are held to, guard mode."""

    def __init__(self, policy=None, guard=False, **kwargs):
        self._c = ctypes.c_void_p()
        err = _lib.Error()
        _check(_lib.lib.hurray_context_create(ctypes.byref(self._c), ctypes.byref(err)), err)
        if policy is not None or kwargs:
            p = _policy(policy, kwargs)
            _check(_lib.lib.hurray_context_set_policy(self._c, p._p, ctypes.byref(err)), err)
        if guard:
            _check(_lib.lib.hurray_context_set_guard(self._c, 1, ctypes.byref(err)), err)

    def close(self):
        if self._c:
            _lib.lib.hurray_context_destroy(self._c)
            self._c = ctypes.c_void_p()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown, or __init__ failed
            pass


def _ctx(ctx):
    return ctx._c if ctx is not None else None


# ------------------------------------------------------------ free callbacks --
# Python objects that must live until libhurray frees a wrapped buffer (the
# memory's owner, an on_free callable), keyed by the token passed as free_user.
_pending = {}
_pending_lock = threading.Lock()
_tokens = itertools.count(1)


@_lib.FREE_FN
def _free_trampoline(user, data):
    with _pending_lock:
        entry = _pending.pop(user, None)
    if entry is not None and entry[0] is not None:
        entry[0](data)


# ---------------------------------------------------------------- dtypes ----
_DTYPE_NAMES = {
    "bool": (DL_BOOL, 8), "int8": (DL_INT, 8), "int16": (DL_INT, 16), "int32": (DL_INT, 32),
    "int64": (DL_INT, 64), "uint8": (DL_UINT, 8), "uint16": (DL_UINT, 16),
    "uint32": (DL_UINT, 32), "uint64": (DL_UINT, 64), "float16": (DL_FLOAT, 16),
    "float32": (DL_FLOAT, 32), "float64": (DL_FLOAT, 64), "bfloat16": (DL_BFLOAT, 16),
    "complex64": (DL_COMPLEX, 64), "complex128": (DL_COMPLEX, 128),
}
_KINDS = {"b": DL_BOOL, "i": DL_INT, "u": DL_UINT, "f": DL_FLOAT, "c": DL_COMPLEX}


def _dl_dtype(dtype):
    """A DLDataType from "float32", "<f4", "u1", a numpy dtype or scalar type."""
    if isinstance(dtype, type) or (hasattr(dtype, "dtype") and not isinstance(dtype, str)):
        import numpy  # a numpy scalar type or array: let numpy say what it is
        dtype = numpy.dtype(dtype)
    if hasattr(dtype, "kind") and hasattr(dtype, "itemsize"):
        if dtype.kind not in _KINDS:
            raise ValueError("hurray: dtype %s has no DLPack type" % dtype)
        return _lib.DLDataType(_KINDS[dtype.kind], dtype.itemsize * 8, 1)
    s = str(dtype).lstrip("<=|")
    if s in _DTYPE_NAMES:
        code, bits = _DTYPE_NAMES[s]
        return _lib.DLDataType(code, bits, 1)
    if len(s) >= 2 and s[0] in _KINDS and s[1:].isdigit():
        return _lib.DLDataType(_KINDS[s[0]], int(s[1:]) * 8, 1)
    raise ValueError("hurray: unknown dtype %r" % (dtype,))


# --------------------------------------------------------- DLPack capsules --
_api = ctypes.pythonapi
_PyCapsule_New = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p,
                                   ctypes.c_void_p)(("PyCapsule_New", _api))
_PyCapsule_IsValid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _api))
_PyCapsule_GetPointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))
_PyCapsule_SetName = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_SetName", _api))
# The same two, on a capsule being destroyed (a raw pointer: no reference
# may be taken on an object whose count is already zero).
_raw_IsValid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _api))
_raw_GetPointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))

# Capsule names live as long as the module (capsules keep a pointer to them).
_NAME_LEGACY = b"dltensor"
_NAME_VERSIONED = b"dltensor_versioned"
_NAME_USED_LEGACY = b"used_dltensor"
_NAME_USED_VERSIONED = b"used_dltensor_versioned"


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule):
    """Deletes the tensor of a capsule nobody consumed (a consumer renames the
    capsule "used_..." when it takes the tensor over, and then deletes it
    itself, once)."""
    if _raw_IsValid(capsule, _NAME_VERSIONED):
        t = ctypes.cast(_raw_GetPointer(capsule, _NAME_VERSIONED),
                        ctypes.POINTER(_lib.DLManagedTensorVersioned))
    elif _raw_IsValid(capsule, _NAME_LEGACY):
        t = ctypes.cast(_raw_GetPointer(capsule, _NAME_LEGACY),
                        ctypes.POINTER(_lib.DLManagedTensor))
    else:
        return
    if t.contents.deleter:
        t.contents.deleter(t)


_DESTRUCTOR_ADDR = ctypes.cast(_capsule_destructor, ctypes.c_void_p).value


# Every capsule __dlpack__ returns is also held here until nobody else holds
# it. Why: a consumer that refuses a tensor (numpy: "Unsupported device")
# drops the capsule with its exception already set, and a destructor written
# in Python cannot run then (every ctypes call sees the pending exception).
# Held here, the capsule dies in _sweep() instead, in a clean state: its
# destructor deletes the tensor of a capsule nobody consumed, exactly once.
# _sweep runs after every garbage collection, before each new capsule, and
# at exit.
_capsules = []
_capsules_lock = threading.RLock()
_sweeping = [False]


def _refcounts(items):
    return [sys.getrefcount(x) for x in items]


# What sys.getrefcount says of a capsule that only _capsules holds.
_ALONE = _refcounts([_PyCapsule_New(1, b"hurray_calibration", None)])[0]


def _sweep(*_gc_info):
    if _gc_info and _gc_info[0] != "stop":
        return
    with _capsules_lock:
        if _sweeping[0]:
            return
        _sweeping[0] = True
        try:
            counts = _refcounts(_capsules)
            keep, drop = [], []
            for cap, n in zip(_capsules, counts):
                unconsumed = (_PyCapsule_IsValid(cap, _NAME_LEGACY) or
                              _PyCapsule_IsValid(cap, _NAME_VERSIONED))
                (keep if unconsumed and n > _ALONE else drop).append(cap)
            _capsules[:] = keep
            cap = None  # the loop variable must not keep the last one alive
            drop.clear()  # destructors run here
        finally:
            _sweeping[0] = False


gc.callbacks.append(_sweep)
atexit.register(_sweep)


def _new_capsule(pointer, versioned):
    _sweep()
    cap = _PyCapsule_New(pointer, _NAME_VERSIONED if versioned else _NAME_LEGACY,
                         _DESTRUCTOR_ADDR)
    with _capsules_lock:
        _capsules.append(cap)
    return cap


# ----------------------------------------------------------------- handoff --
class Handoff:
    """One hurray_handoff owned by Python: pass it to a C consumer as
    ctypes.byref(h.struct) (or just h, whose _as_parameter_ is that), which
    reads it and calls its release exactly once. Released here otherwise, when
    the object goes (or by release())."""

    def __init__(self):
        self.struct = _lib.Handoff()

    @property
    def _as_parameter_(self):
        return ctypes.byref(self.struct)

    @property
    def handle(self):
        return Handle.decode(bytes(self.struct.handle))

    @property
    def address(self):
        return self.struct.data or 0

    @property
    def nbytes(self):
        return self.handle.byte_size

    @property
    def read_only(self):
        return bool(self.struct.flags & (HANDOFF_READ_ONLY | HANDOFF_QPARAM))

    @property
    def released(self):
        return not self.struct.release

    def check(self, policy=None, **kwargs):
        """hurray_handoff_check: rules, payload, address. Raises HurrayError."""
        p = _policy(policy, kwargs) if (policy is not None or kwargs) else None
        err = _lib.Error()
        _check(_lib.lib.hurray_handoff_check(ctypes.byref(self.struct), p._p if p else None,
                                             ctypes.byref(err)), err)

    def release(self):
        """Release exactly once (BP-REL-ONCE): a second call raises
        HurrayError (HURRAY_E_ALREADY_RELEASED)."""
        err = _lib.Error()
        _check(_lib.lib.hurray_handoff_release(ctypes.byref(self.struct), ctypes.byref(err)), err)

    def __del__(self):
        try:
            if self.struct.release:
                _lib.lib.hurray_handoff_release(ctypes.byref(self.struct), None)
        except Exception:  # interpreter shutdown, or __init__ never ran
            pass

    def __repr__(self):
        return "<hurray.Handoff %s%s>" % (self.handle, ", released" if self.released else "")


def _dlpack_capsule(obj):
    if type(obj).__name__ == "PyCapsule":
        return obj
    if not hasattr(obj, "__dlpack__"):
        raise TypeError("hurray.from_dlpack: %s has no __dlpack__" % type(obj).__name__)
    try:
        return obj.__dlpack__(max_version=(1, 0))
    except TypeError:  # a pre-1.0 producer (numpy 1.x): no max_version argument
        return obj.__dlpack__()


def aligned_empty(shape, dtype="float64", alignment=64):
    """A numpy array whose data starts on an `alignment` boundary (numpy's own
    allocations are often only 16-byte aligned; the protocol asks for 64,
    BP-ALIGN-MIN), for handing to from_dlpack()."""
    import numpy
    dt = numpy.dtype(dtype)
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (int(shape),)
    n = dt.itemsize
    for d in shape:
        n *= d
    raw = numpy.empty(n + alignment, dtype=numpy.uint8)
    off = (-raw.ctypes.data) % alignment
    return raw[off:off + n].view(dt).reshape(shape)


def from_dlpack(obj, ctx=None):
    """Take a DLPack tensor over as a Handoff, zero-copy: obj is a producer
    (anything with __dlpack__, e.g. a numpy array) or an unconsumed capsule.
    Its deleter runs exactly once, when the handoff is released (by a C
    consumer or here). Raises DLPackError naming the rule when the tensor
    cannot be a hurray buffer (e.g. BP-ALIGN-MIN: numpy's own allocations are
    often only 16-byte aligned)."""
    capsule = _dlpack_capsule(obj)
    h, err = Handoff(), _lib.Error()
    if _PyCapsule_IsValid(capsule, _NAME_VERSIONED):
        ptr = _PyCapsule_GetPointer(capsule, _NAME_VERSIONED)
        _check(_lib.lib.hurray_dlpack_import_versioned(_ctx(ctx), ptr, ctypes.byref(h.struct),
                                                       ctypes.byref(err)), err, DLPackError)
        _PyCapsule_SetName(capsule, _NAME_USED_VERSIONED)
    elif _PyCapsule_IsValid(capsule, _NAME_LEGACY):
        ptr = _PyCapsule_GetPointer(capsule, _NAME_LEGACY)
        _check(_lib.lib.hurray_dlpack_import_legacy(_ctx(ctx), ptr, ctypes.byref(h.struct),
                                                    ctypes.byref(err)), err, DLPackError)
        _PyCapsule_SetName(capsule, _NAME_USED_LEGACY)
    else:
        raise DLPackError(1, "", "hurray.from_dlpack: not an unconsumed DLPack capsule "
                          "(\"dltensor\" or \"dltensor_versioned\")")
    return h


# ------------------------------------------------------------------ buffer --
class Buffer:
    """A producer's buffer (hurray_buffer), reference counted: this object
    holds the owner's reference and every export (handoff, DLPack tensor)
    one more; the memory is freed when the last one goes.

    __dlpack__ / __dlpack_device__ present it as a 1-D uint8 tensor; use
    tensor(dtype, shape, strides, byte_offset) for another view."""

    def __init__(self, _pointer, read_only=False):
        if not _pointer:
            raise ValueError("hurray.Buffer: NULL hurray_buffer")
        self._b = ctypes.c_void_p(_pointer)
        self.read_only = read_only
        h, err = _lib.BufferHandle(), _lib.Error()
        _check(_lib.lib.hurray_buffer_get_handle(self._b, ctypes.byref(h), ctypes.byref(err)), err)
        self.handle = Handle._from_struct(h)

    @classmethod
    def adopt(cls, pointer, read_only=False):
        """Take over the owner's reference of a hurray_buffer * made in C."""
        return cls(pointer if isinstance(pointer, int) else ctypes.cast(pointer, ctypes.c_void_p).value,
                   read_only)

    @classmethod
    def alloc(cls, nbytes, alignment=64, device_tag=DEVICE_CPU, memory_class=MEMORY_STANDARD,
              device_ordinal=0, ctx=None, read_only=False):
        """Allocate through the device's backend (CPU is built in)."""
        d = _lib.AllocDesc(ctypes.sizeof(_lib.AllocDesc), 0, nbytes, alignment, device_tag,
                           memory_class)
        d.device_ordinal = device_ordinal
        out, err = ctypes.c_void_p(), _lib.Error()
        _check(_lib.lib.hurray_buffer_alloc(_ctx(ctx), ctypes.byref(d), ctypes.byref(out),
                                            ctypes.byref(err)), err)
        return cls(out.value, read_only)

    @classmethod
    def wrap(cls, address, nbytes, alignment=64, device_tag=DEVICE_CPU,
             memory_class=MEMORY_STANDARD, device_ordinal=0, opaque=False, on_free=None,
             keep=None, ctx=None, read_only=False):
        """Wrap memory the caller owns, zero-copy. on_free(address) is called
        exactly once when the owner and every consumer are done; `keep` (the
        memory's owner, e.g. a bytearray) is kept alive until then."""
        d = _lib.BufferDesc()
        d.size = ctypes.sizeof(_lib.BufferDesc)
        d.flags = HANDOFF_OPAQUE_DATA if opaque else 0
        d.handle = _lib.BufferHandle(nbytes, alignment, device_tag, SYNC_PRODUCER_SYNCED,
                                     memory_class, 0)
        d.data = address
        d.device_ordinal = device_ordinal
        token = None
        if on_free is not None or keep is not None:
            token = next(_tokens)
            with _pending_lock:
                _pending[token] = (on_free, keep)
            d.free_fn = _free_trampoline
            d.free_user = token
        out, err = ctypes.c_void_p(), _lib.Error()
        st = _lib.lib.hurray_buffer_wrap(_ctx(ctx), ctypes.byref(d), ctypes.byref(out),
                                         ctypes.byref(err))
        if st != 0:
            with _pending_lock:
                _pending.pop(token, None)
            raise _error(err)
        return cls(out.value, read_only)

    @property
    def address(self):
        """The data pointer as an int (0 for an empty buffer)."""
        return _lib.lib.hurray_buffer_data(self._b) or 0

    @property
    def nbytes(self):
        return self.handle.byte_size

    def export(self, read_only=None):
        """A Handoff of its own for one more consumer (BP-REFCOUNT)."""
        ro = self.read_only if read_only is None else read_only
        e = _lib.ExportDesc(ctypes.sizeof(_lib.ExportDesc), HANDOFF_READ_ONLY if ro else 0)
        h, err = Handoff(), _lib.Error()
        _check(_lib.lib.hurray_buffer_export(self._b, ctypes.byref(e), ctypes.byref(h.struct),
                                             ctypes.byref(err)), err)
        return h

    def tensor(self, dtype="uint8", shape=None, strides=None, byte_offset=0):
        """A typed view for DLPack: shape None = as many elements as fit;
        strides in elements (None: row-major)."""
        return Tensor(self, dtype, shape, strides, byte_offset)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        return self.tensor().__dlpack__(stream=stream, max_version=max_version,
                                        dl_device=dl_device, copy=copy)

    def __dlpack_device__(self):
        return self.tensor().__dlpack_device__()

    def close(self):
        """Drop the owner's reference (exports keep the memory alive)."""
        if self._b:
            _lib.lib.hurray_buffer_unref(self._b)
            self._b = ctypes.c_void_p()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown, or __init__ failed
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<hurray.Buffer %s at 0x%x>" % (self.handle, self.address)


class Tensor:
    """A typed view of a Buffer for DLPack consumers (numpy.from_dlpack,
    torch.from_dlpack, ...)."""

    def __init__(self, buffer, dtype="uint8", shape=None, strides=None, byte_offset=0):
        self.buffer = buffer
        self.dtype = _dl_dtype(dtype)
        itemsize = self.dtype.bits * self.dtype.lanes // 8
        if shape is None:
            shape = ((buffer.nbytes - byte_offset) // itemsize,)
        self.shape = tuple(int(n) for n in (shape if isinstance(shape, (tuple, list)) else (shape,)))
        self.strides = None if strides is None else tuple(int(s) for s in strides)
        if self.strides is not None and len(self.strides) != len(self.shape):
            raise ValueError("hurray.Tensor: %d strides for %d dimensions"
                             % (len(self.strides), len(self.shape)))
        self.byte_offset = byte_offset

    def __dlpack_device__(self):
        """(DLDeviceType, device_id), by TABLES.md section 6."""
        h = self.buffer.handle
        dl, err = ctypes.c_int32(), _lib.Error()
        _check(_lib.lib.hurray_dlpack_device_to_dl(h.device_tag, h.memory_class, ctypes.byref(dl),
                                                   ctypes.byref(err)), err, DLPackError)
        return (dl.value, 0 if h.device_tag == DEVICE_CPU else self._ordinal())

    def _ordinal(self):
        h = self.buffer.export()
        try:
            return h.struct.device_ordinal
        finally:
            h.release()

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule: "dltensor_versioned" (DLManagedTensorVersioned)
        when max_version allows 1.x, else "dltensor" (the legacy struct numpy
        1.x takes). Zero-copy only (copy=True is refused); the buffer's
        exports are PRODUCER_SYNCED, so no stream work is needed."""
        if copy:
            raise DLPackError(12, "BP-ZC-NOCOPY", "BP-ZC-NOCOPY: copy=True was requested; a "
                              "hurray Buffer is handed over without a copy only")
        device = self.__dlpack_device__()
        if dl_device is not None and tuple(dl_device) != device:
            raise DLPackError(12, "BP-PUT-DEVICE", "BP-PUT-DEVICE: the buffer is on DLPack "
                              "device %s, not %s; hurray never moves it" % (device,
                                                                            tuple(dl_device)))
        versioned = max_version is not None and int(max_version[0]) >= 1
        h = self.buffer.export()
        n = len(self.shape)
        shape = (ctypes.c_int64 * max(n, 1))(*self.shape)
        strides = (ctypes.c_int64 * max(n, 1))(*self.strides) if self.strides else None
        err = _lib.Error()
        if versioned:
            out = ctypes.POINTER(_lib.DLManagedTensorVersioned)()
            st = _lib.lib.hurray_dlpack_export_versioned(
                ctypes.byref(h.struct), self.dtype, n, shape, strides, self.byte_offset,
                ctypes.byref(out), ctypes.byref(err))
        else:
            out = ctypes.POINTER(_lib.DLManagedTensor)()
            st = _lib.lib.hurray_dlpack_export_legacy(
                ctypes.byref(h.struct), self.dtype, n, shape, strides, self.byte_offset,
                ctypes.byref(out), ctypes.byref(err))
        if st != 0:
            h.release()  # the export stays ours on failure
            raise _error(err, DLPackError)
        return _new_capsule(ctypes.cast(out, ctypes.c_void_p).value, versioned)
