"""__dlpack__ (DLPack producer side, array API 2023.12) shared by Tensor and
Handoff: the request's checks, and a handoff made into a capsule."""
import ctypes

from . import _lib
from ._capsules import new_capsule
from ._constants import (DL_CPU, DLPACK_FLAG_IS_COPIED, DLPACK_MAX_NDIM, E_INVALID_ARGUMENT,
                         E_SYNC, E_UNSUPPORTED, I64_MAX, I64_MIN, U64_MAX, check_int)
from ._errors import DLPackError, error


def wants_versioned(max_version):
    """True when the consumer takes DLManagedTensorVersioned (max_version
    (1, x) or later); None or (0, x): the legacy struct."""
    if max_version is None:
        return False
    try:
        major, _minor = (int(v) for v in max_version)
    except (TypeError, ValueError):
        raise DLPackError(E_INVALID_ARGUMENT, "", "hurray: __dlpack__ max_version must be "
                          "a (major, minor) tuple, not %r" % (max_version,)) from None
    return major >= 1


def check_stream(device, stream):
    """The stream rules of the array API's __dlpack__: on the CPU stream is
    None; elsewhere an int (the consumer's stream; -1: no synchronisation).
    A hurray Buffer's exports are PRODUCER_SYNCED (its producer synchronised
    before wrapping or exporting it), so the consumer's stream has nothing of
    ours to wait for: it is checked, not waited on."""
    if device[0] == DL_CPU:
        if stream is not None:
            raise DLPackError(E_SYNC, "", "hurray: __dlpack__(stream=%r) on a CPU tensor; the "
                              "array API allows only stream=None on the CPU" % (stream,))
        return
    if stream is None or isinstance(stream, bool) or not isinstance(stream, int):
        raise DLPackError(E_SYNC, "", "hurray: __dlpack__ on DLPack device %s needs the "
                          "consumer's stream as an int (-1: no synchronisation), got %r"
                          % (device, stream))


def layout(dtype_item, shape, strides, byte_offset):
    """Shape, strides and byte_offset checked for range (ctypes would wrap)."""
    shape = tuple(check_int("shape[%d]" % i, n, 0, I64_MAX) for i, n in enumerate(shape))
    if len(shape) > DLPACK_MAX_NDIM:
        raise ValueError("hurray: %d dimensions; DLPack imports take at most %d"
                         % (len(shape), DLPACK_MAX_NDIM))
    if strides is not None:
        strides = tuple(check_int("strides[%d]" % i, s, I64_MIN, I64_MAX)
                        for i, s in enumerate(strides))
        if len(strides) != len(shape):
            raise ValueError("hurray: %d strides for %d dimensions" % (len(strides), len(shape)))
    byte_offset = check_int("byte_offset", byte_offset, 0, U64_MAX)
    return shape, strides, byte_offset


def to_capsule(handoff, dtype, shape, strides, byte_offset, versioned, copied=False):
    """Move `handoff` (a _lib.Handoff) into a DLPack tensor and wrap it in a
    capsule. On failure the handoff is still the caller's."""
    n = len(shape)
    c_shape = (ctypes.c_int64 * max(n, 1))(*shape)
    c_strides = (ctypes.c_int64 * max(n, 1))(*strides) if strides is not None else None
    err = _lib.Error()
    if versioned:
        out = ctypes.POINTER(_lib.DLManagedTensorVersioned)()
        st = _lib.lib.hurray_dlpack_export_versioned(
            ctypes.byref(handoff), dtype, n, c_shape, c_strides, byte_offset,
            ctypes.byref(out), ctypes.byref(err))
    else:
        out = ctypes.POINTER(_lib.DLManagedTensor)()
        st = _lib.lib.hurray_dlpack_export_legacy(
            ctypes.byref(handoff), dtype, n, c_shape, c_strides, byte_offset,
            ctypes.byref(out), ctypes.byref(err))
    if st != 0:
        raise error(err, DLPackError)
    if versioned and copied:
        out.contents.flags |= DLPACK_FLAG_IS_COPIED
    return new_capsule(ctypes.cast(out, ctypes.c_void_p).value, versioned)


def refuse_device(device, dl_device):
    return DLPackError(E_UNSUPPORTED, "BP-PUT-DEVICE", "BP-PUT-DEVICE: the tensor is on "
                       "DLPack device %s; it can be had there or, copied, on the CPU (1, 0), "
                       "not on %s" % (device, tuple(dl_device)))
