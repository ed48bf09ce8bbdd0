"""Buffer (a producer's hurray_buffer) and Tensor (a typed view of one for
DLPack consumers and numpy)."""
from __future__ import annotations

import ctypes
from typing import Any, Optional, Sequence

from . import _lib, _lifetime
from ._constants import (DEVICE_CPU, DL_CPU, E_INVALID_ARGUMENT, E_UNSUPPORTED,
                         HANDOFF_OPAQUE_DATA, HANDOFF_READ_ONLY, I32_MAX, I32_MIN,
                         MEMORY_STANDARD, SYNC_PRODUCER_SYNCED, U32_MAX, U64_MAX, U8_MAX,
                         check_int)
from ._dtypes import dl_dtype, itemsize
from ._errors import DLPackError, HurrayError, check, error
from ._fast import native
from ._export import check_stream, layout, refuse_device, to_capsule, wants_versioned
from ._handles import Handle, ctx_of
from ._handoff import Handoff
from ._views import host_view, memory_view


class _Ref:
    """The owner's reference of one hurray_buffer. Buffer and every Tensor
    (and host view) of it hold this object; the reference is dropped when
    the last of them goes, so a Tensor keeps its Buffer's memory alive."""
    __slots__ = ("ptr", "__weakref__")

    def __init__(self, ptr):
        self.ptr = ptr

    def __del__(self, _unref=_lib.lib.hurray_buffer_unref):
        p, self.ptr = self.ptr, None
        if p:
            _unref(p)


def _closed():
    return DLPackError(E_INVALID_ARGUMENT, "", "hurray: the Buffer is closed (its Tensors and "
                       "views made before close() still work)")


def _export_struct(ref, read_only, h=None):
    """An export of the buffer into `h` (a _lib.Handoff; a new one if None)."""
    e = _lib.ExportDesc(ctypes.sizeof(_lib.ExportDesc), HANDOFF_READ_ONLY if read_only else 0)
    h = _lib.Handoff() if h is None else h
    err = _lib.Error()
    check(_lib.lib.hurray_buffer_export(ref.ptr, ctypes.byref(e), ctypes.byref(h),
                                        ctypes.byref(err)), err)
    return h


def _dl_device(handle, ordinal):
    """(DLDeviceType, device_id) of a buffer, by TABLES.md section 6."""
    dl, err = ctypes.c_int32(), _lib.Error()
    check(_lib.lib.hurray_dlpack_device_to_dl(handle.device_tag, handle.memory_class,
                                              ctypes.byref(dl), ctypes.byref(err)), err,
          DLPackError)
    return (dl.value, 0 if handle.device_tag == DEVICE_CPU else ordinal)


def _dl_device_or_none(handle, ordinal):
    try:
        return _dl_device(handle, ordinal)
    except DLPackError:
        return None  # asked later, the Python path raises it


class Buffer(native.BufferBase if native else object):
    """A producer's buffer (hurray_buffer), reference counted: this object
    (and each Tensor of it) holds the owner's reference and every export
    (handoff, DLPack tensor) one more; the memory is freed when the last one
    goes.

    __dlpack__ / __dlpack_device__ present it as a 1-D uint8 tensor; use
    tensor(dtype, shape, strides, byte_offset) for another view, numpy() or
    memoryview() for a writable host view (numpy 1.x included)."""

    def __init__(self, _pointer, read_only=False):
        if not _pointer:
            raise ValueError("hurray.Buffer: NULL hurray_buffer")
        self._ref = _Ref(_pointer)
        self.read_only = bool(read_only)
        h, err = _lib.BufferHandle(), _lib.Error()
        check(_lib.lib.hurray_buffer_get_handle(_pointer, ctypes.byref(h), ctypes.byref(err)),
              err)
        self.handle = Handle._from_struct(h)
        probe = _export_struct(self._ref, False)  # the export carries ordinal and flags
        self.device_ordinal = probe.device_ordinal
        self._flags = probe.flags
        _lib.lib.hurray_handoff_release(ctypes.byref(probe), None)
        if native is not None:
            self._set_fast(_pointer, self.handle.byte_size,
                           _dl_device_or_none(self.handle, self.device_ordinal))

    @classmethod
    def adopt(cls, pointer: Any, read_only: bool = False) -> "Buffer":
        """Take over the owner's reference of a hurray_buffer * made in C."""
        return cls(pointer if isinstance(pointer, int) else
                   ctypes.cast(pointer, ctypes.c_void_p).value, read_only)

    @classmethod
    def alloc(cls, nbytes: int, alignment: int = 64, device_tag: int = DEVICE_CPU,
              memory_class: int = MEMORY_STANDARD, device_ordinal: int = 0, ctx: Any = None,
              read_only: bool = False, shareable: bool = False) -> "Buffer":
        """Allocate through the device's backend (CPU is built in).
        shareable: memory another process can map (CPU: a memfd), for
        hurray.ipc (which also wants alignment=4096, BP-ALIGN-IPC)."""
        d = _lib.AllocDesc(ctypes.sizeof(_lib.AllocDesc), 1 if shareable else 0,
                           check_int("nbytes", nbytes, 0, U64_MAX),
                           check_int("alignment", alignment, 0, U32_MAX),
                           check_int("device_tag", device_tag, 0, U8_MAX),
                           check_int("memory_class", memory_class, 0, U8_MAX))
        d.device_ordinal = check_int("device_ordinal", device_ordinal, I32_MIN, I32_MAX)
        out, err = ctypes.c_void_p(), _lib.Error()
        check(_lib.lib.hurray_buffer_alloc(ctx_of(ctx), ctypes.byref(d), ctypes.byref(out),
                                           ctypes.byref(err)), err)
        return cls(out.value, read_only)

    @classmethod
    def wrap(cls, address: int, nbytes: int, alignment: int = 64, device_tag: int = DEVICE_CPU,
             memory_class: int = MEMORY_STANDARD, device_ordinal: int = 0, opaque: bool = False,
             on_free: Any = None, keep: Any = None, ctx: Any = None,
             read_only: bool = False) -> "Buffer":
        """Wrap memory the caller owns, zero-copy. on_free(address) is called
        exactly once when the owner and every consumer are done; `keep` (the
        memory's owner, e.g. a bytearray) is kept alive until then. Both stay
        safe at interpreter exit (the memory may then be freed during the
        teardown; an on_free that raises there is silent)."""
        d = _lib.BufferDesc()
        d.size = ctypes.sizeof(_lib.BufferDesc)
        d.flags = HANDOFF_OPAQUE_DATA if opaque else 0
        d.handle = _lib.BufferHandle(check_int("nbytes", nbytes, 0, U64_MAX),
                                     check_int("alignment", alignment, 0, U32_MAX),
                                     check_int("device_tag", device_tag, 0, U8_MAX),
                                     SYNC_PRODUCER_SYNCED,
                                     check_int("memory_class", memory_class, 0, U8_MAX), 0)
        d.data = check_int("address", address, 0, U64_MAX)
        d.device_ordinal = check_int("device_ordinal", device_ordinal, I32_MIN, I32_MAX)
        token = None
        if on_free is not None or keep is not None:
            token = _lifetime.register(on_free, keep)
            d.free_fn = _lifetime.free_trampoline
            d.free_user = token
        out, err = ctypes.c_void_p(), _lib.Error()
        st = _lib.lib.hurray_buffer_wrap(ctx_of(ctx), ctypes.byref(d), ctypes.byref(out),
                                         ctypes.byref(err))
        if st != 0:
            if token is not None:
                _lifetime.forget(token)
            raise error(err)
        return cls(out.value, read_only)

    def _live(self):
        ref = self._ref
        if ref is None:
            raise _closed()
        return ref

    @property
    def closed(self) -> bool:
        return self._ref is None

    @property
    def address(self) -> int:
        """The data pointer as an int (0 for an empty or closed buffer)."""
        ref = self._ref
        return (_lib.lib.hurray_buffer_data(ref.ptr) or 0) if ref is not None else 0

    @property
    def nbytes(self) -> int:
        return self.handle.byte_size

    @property
    def opaque(self):
        return bool(self._flags & HANDOFF_OPAQUE_DATA)

    def export(self, read_only: Optional[bool] = None, event: bool = False,
               stream: Optional[int] = None, ctx: Any = None) -> Handoff:
        """A Handoff of its own for one more consumer (BP-REFCOUNT).
        event=True: an EVENT handoff, the event recorded on the device's
        `stream` (None: its default stream) through the backend
        (hurray_event_record); the consumer acquires it (Handoff.acquire)."""
        ro = self.read_only if read_only is None else read_only
        ref = self._live()
        h = Handoff()
        if not event:
            _export_struct(ref, ro, h.struct)
            return h
        e = _lib.ExportDesc(ctypes.sizeof(_lib.ExportDesc), HANDOFF_READ_ONLY if ro else 0)
        err = _lib.Error()
        check(_lib.lib.hurray_event_record(ctx_of(ctx), self.handle.device_tag,
                                           self.device_ordinal, stream, ctypes.byref(e),
                                           ctypes.byref(err)), err)
        st = _lib.lib.hurray_buffer_export(ref.ptr, ctypes.byref(e), ctypes.byref(h.struct),
                                           ctypes.byref(err))
        if st != 0:
            if e.event_free_fn:  # the export failed: the event is still ours
                _lib.EVENT_FREE_FN(e.event_free_fn)(e.event_user, e.sync_object)
            raise error(err)
        return h

    def view(self, offset: int, length: int) -> "Buffer":
        """A Buffer of `length` bytes of this one at `offset`
        (hurray_buffer_view): its own handle (alignment derived from the offset
        and this buffer's; refused outside it, BP-VIEW-BOUNDS), zero-copy,
        keeping this buffer's memory alive past close()."""
        ref = self._live()
        fn = getattr(_lib.lib, "hurray_buffer_view", None)
        if fn is None:
            raise HurrayError(E_UNSUPPORTED, "", "hurray: this libhurray has no "
                              "hurray_buffer_view (older than issue 26)")
        out, err = ctypes.c_void_p(), _lib.Error()
        check(fn(ref.ptr, check_int("offset", offset, 0, U64_MAX),
                 check_int("length", length, 0, U64_MAX), ctypes.byref(out),
                 ctypes.byref(err)), err)
        return Buffer(out.value, self.read_only)

    def _tensor_slow(self, dtype: Any = "uint8", shape: Optional[Sequence[int]] = None,
               strides: Optional[Sequence[int]] = None, byte_offset: int = 0) -> "Tensor":
        """A typed view for DLPack and numpy: shape None = as many elements as
        fit; strides in elements (None: row-major); dtype a name ("float32"),
        a numpy dtype, type or character code ("f"), or a torch dtype."""
        return Tensor(self, dtype, shape, strides, byte_offset)

    if native is None:  # else hurray._native's BufferBase.tensor (same rules)
        tensor = _tensor_slow

    def numpy(self, dtype: Any = "uint8", shape: Optional[Sequence[int]] = None,
              strides: Optional[Sequence[int]] = None, byte_offset: int = 0) -> Any:
        """A numpy array of the buffer's bytes (writable unless read_only),
        zero-copy, on numpy 1.x too; it keeps the memory alive."""
        return self.tensor(dtype, shape, strides, byte_offset).numpy()

    def memoryview(self) -> memoryview:
        """A memoryview of the buffer's bytes (writable unless read_only),
        zero-copy; it keeps the memory alive."""
        ref = self._live()
        return memory_view(ref, self.address, self.handle, self._flags, self.read_only)

    def __array__(self, dtype=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    if native is None:  # else hurray._native's BufferBase (same rules)
        def __dlpack__(self, stream: Optional[int] = None, max_version: Any = None,
                       dl_device: Any = None, copy: Optional[bool] = None) -> Any:
            return self.tensor().__dlpack__(stream=stream, max_version=max_version,
                                            dl_device=dl_device, copy=copy)

        def __dlpack_device__(self) -> tuple:
            return self.tensor().__dlpack_device__()

    def close(self) -> None:
        """Drop this object's hold on the owner's reference (Tensors, views
        and exports keep the memory alive)."""
        self._ref = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<hurray.Buffer %s at 0x%x%s>" % (self.handle, self.address,
                                                 ", closed" if self.closed else "")


class Tensor(native.TensorBase if native else object):
    """A typed view of a Buffer for DLPack consumers (numpy.from_dlpack,
    torch.from_dlpack, ...) and numpy (numpy()). It keeps the buffer's memory
    alive, even past Buffer.close()."""

    if native is not None:  # no __dict__: made and dropped once per tensor
        __slots__ = ()

    def __init__(self, buffer: Buffer, dtype: Any = "uint8",
                 shape: Optional[Sequence[int]] = None, strides: Optional[Sequence[int]] = None,
                 byte_offset: int = 0):
        ref = buffer._live()
        dt = dl_dtype(dtype)
        size = itemsize(dt)
        byte_offset = check_int("byte_offset", byte_offset, 0, U64_MAX)
        if shape is None:
            shape = (max(buffer.nbytes - byte_offset, 0) // size,)
        shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        shape, strides, byte_offset = layout(size, shape, strides, byte_offset)
        if native is not None:
            self._set(buffer, ref, ref.ptr, dt, shape, strides, byte_offset,
                      _dl_device_or_none(buffer.handle, buffer.device_ordinal))
        else:
            self.buffer, self._ref, self.dtype = buffer, ref, dt
            self.shape, self.strides, self.byte_offset = shape, strides, byte_offset

    def _dlpack_device_slow(self) -> tuple:
        """(DLDeviceType, device_id), by TABLES.md section 6."""
        return _dl_device(self.buffer.handle, self.buffer.device_ordinal)

    def _dlpack_slow(self, stream: Optional[int] = None, max_version: Any = None,
                   dl_device: Any = None, copy: Optional[bool] = None) -> Any:
        """A DLPack capsule, per the array API (2023.12):
        "dltensor_versioned" (DLPack 1.3) when max_version allows 1.x, else
        "dltensor" (the legacy struct numpy 1.x and torch 1.x take).
        stream: None on the CPU; on a device the consumer's stream as an int
        (our exports are PRODUCER_SYNCED: nothing to wait for). copy=True, or
        dl_device=(kDLCPU, 0) for a device buffer, copies through the
        backend and sets IS_COPIED; copy=False never copies."""
        device = self.__dlpack_device__()
        versioned = wants_versioned(max_version)
        target = device if dl_device is None else tuple(int(x) for x in dl_device)
        if target != device and target != (DL_CPU, 0):
            raise refuse_device(device, target)
        check_stream(target, stream)  # the stream is on the device the consumer gets
        if target != device and copy is False:
            raise DLPackError(E_UNSUPPORTED, "BP-ZC-NOCOPY", "BP-ZC-NOCOPY: dl_device=%s "
                              "needs a copy and copy=False was asked" % (target,))
        copied = bool(copy) or target != device
        ref = self._copy(target) if copied else self._ref
        h = _export_struct(ref, self.buffer.read_only and not copied)
        try:
            return to_capsule(h, self.dtype, self.shape, self.strides, self.byte_offset,
                              versioned, copied)
        except BaseException:
            _lib.lib.hurray_handoff_release(ctypes.byref(h), None)  # still ours on failure
            raise

    if native is None:  # else hurray._native's TensorBase: these, fast, for the common case
        __dlpack__ = _dlpack_slow
        __dlpack_device__ = _dlpack_device_slow

    def _copy(self, target):
        """A new buffer on `target` holding a copy of all the buffer's bytes."""
        src, h = self.buffer, self.buffer.handle
        if target[0] == DL_CPU:
            dst = Buffer.alloc(src.nbytes, alignment=max(64, min(h.alignment, 4096)))
        else:
            dst = Buffer.alloc(src.nbytes, alignment=h.alignment, device_tag=h.device_tag,
                               memory_class=h.memory_class, device_ordinal=src.device_ordinal)
        n = src.nbytes
        if n:
            err = _lib.Error()
            if h.device_tag == DEVICE_CPU and target[0] == DL_CPU:
                ctypes.memmove(dst.address, _lib.lib.hurray_buffer_data(self._ref.ptr), n)
            elif target[0] == DL_CPU:
                check(_lib.lib.hurray_buffer_copy_to_host(self._ref.ptr, 0, dst.address, n,
                                                          ctypes.byref(err)), err, DLPackError)
            else:  # the same device: through the host
                tmp = ctypes.create_string_buffer(n)
                check(_lib.lib.hurray_buffer_copy_to_host(self._ref.ptr, 0, tmp, n,
                                                          ctypes.byref(err)), err, DLPackError)
                check(_lib.lib.hurray_buffer_copy_from_host(dst._ref.ptr, 0, tmp, n,
                                                            ctypes.byref(err)), err, DLPackError)
        return dst._live()

    def numpy(self) -> Any:
        """A numpy array of this view (writable unless the buffer is
        read_only), zero-copy; it keeps the memory alive."""
        b = self.buffer
        return host_view(self._ref, _lib.lib.hurray_buffer_data(self._ref.ptr) or 0, b.handle,
                         b._flags, self.dtype, self.shape, self.strides, self.byte_offset,
                         b.read_only)

    def __array__(self, dtype=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def __repr__(self):
        return "<hurray.Tensor %s of %r>" % (self.shape, self.buffer)
