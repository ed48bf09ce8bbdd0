"""Host views: a numpy array or memoryview of host-addressable memory that
keeps its owner (a Buffer's reference, a Handoff) alive, on numpy 1.x too
(whose from_dlpack cannot make a writable array)."""
import ctypes

from ._constants import (DEVICE_CPU, E_UNSUPPORTED, HANDOFF_OPAQUE_DATA, MEMORY_HOST_PINNED,
                         MEMORY_UNIFIED)
from ._dtypes import itemsize, typestr
from ._errors import DLPackError


def host_addressable(handle, flags):
    """True when the CPU can read the buffer's bytes at its address."""
    if flags & HANDOFF_OPAQUE_DATA:
        return False
    return handle.device_tag == DEVICE_CPU or handle.memory_class in (MEMORY_HOST_PINNED,
                                                                     MEMORY_UNIFIED)


def _refuse(handle):
    return DLPackError(E_UNSUPPORTED, "", "hurray: a %s buffer (memory %s) is not host-"
                       "addressable; copy it to the host first (Tensor.__dlpack__(dl_device="
                       "(1, 0)))" % (handle.device, handle.memory))


class _ArrayInterface:
    """What numpy.asarray() reads; numpy keeps it (so `keep`) as the array's base."""
    __slots__ = ("__array_interface__", "keep")

    def __init__(self, iface, keep):
        self.__array_interface__ = iface
        self.keep = keep


def host_view(keep, base, handle, flags, dtype, shape, strides, element_offset, read_only):
    import numpy
    if not host_addressable(handle, flags):
        raise _refuse(handle)
    size = itemsize(dtype)
    n = 1
    for d in shape:
        n *= d
    if n == 0 or handle.byte_size == 0:
        return numpy.empty(shape, dtype=numpy.dtype(typestr(dtype)))
    iface = {"version": 3, "shape": tuple(shape), "typestr": typestr(dtype),
             "data": (base + element_offset, bool(read_only)),
             "strides": None if strides is None else tuple(s * size for s in strides)}
    return numpy.asarray(_ArrayInterface(iface, keep))


def memory_view(keep, base, handle, flags, read_only):
    """A 1-D unsigned-byte memoryview of all the buffer's bytes."""
    if not host_addressable(handle, flags):
        raise _refuse(handle)
    n = handle.byte_size
    if n == 0:
        return memoryview(b"") if read_only else memoryview(bytearray())
    arr = (ctypes.c_ubyte * n).from_address(base)
    arr._hurray_keep = keep  # the memoryview holds arr, arr holds the owner
    mv = memoryview(arr).cast("B")
    return mv.toreadonly() if read_only else mv
