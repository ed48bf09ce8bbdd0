"""Handoff (one hurray_handoff owned by Python) and from_dlpack() (DLPack
consumer side, array API 2023.12)."""
from __future__ import annotations

import ctypes
from typing import Any, Optional

from . import _capsules, _lib
from ._constants import (DL_CPU, DLPACK_MAX_NDIM, DLPACK_VERSION, E_ALREADY_RELEASED,
                         E_INVALID_ARGUMENT, E_SYNC, HANDOFF_OPAQUE_DATA, HANDOFF_QPARAM,
                         HANDOFF_READ_ONLY,
                         SYNC_CONSUMER_STREAM, SYNC_EVENT, U64_MAX)
from ._dtypes import describe, itemsize
from ._errors import DLPackError, check, import_error
from ._fast import native
from ._export import check_stream, refuse_device, to_capsule, wants_versioned
from ._handles import Handle, ctx_of, policy_of
from ._views import host_view


class Handoff(native.HandoffBase if native else object):
    """One hurray_handoff owned by Python: pass it to a C consumer as
    ctypes.byref(h.struct) (or just h, whose _as_parameter_ is that), which
    reads it and calls its release exactly once. Released here otherwise, when
    the object goes (or by release()).

    A handoff from from_dlpack() remembers the tensor's layout (dtype, shape,
    strides in elements, element_offset: bytes from address to element 0), and
    can be handed on with __dlpack__ (numpy.from_dlpack(h), torch.from_dlpack(h)):
    that moves it into the new tensor, leaving this object released."""

    def __init__(self):
        if native is None:
            self.struct = _lib.Handoff()
        self.dtype = _lib.DLDataType(1, 8, 1)  # uint8
        self.shape = None  # None: 1-D, nbytes elements
        self.strides = None
        self.element_offset = 0

    if native is not None:
        @property
        def struct(self):
            """The hurray_handoff (a _lib.Handoff over this object's memory)."""
            return _lib.Handoff.from_buffer(self)

    @property
    def _as_parameter_(self):
        return ctypes.byref(self.struct)

    @property
    def handle(self) -> Handle:
        """The handle (Handle) the handoff carries."""
        return Handle.decode(bytes(self.struct.handle))

    @property
    def address(self) -> int:
        """The data pointer as an int; 0 once released (the memory may be gone)."""
        return 0 if self.released else (self.struct.data or 0)

    @property
    def nbytes(self) -> int:
        return self.handle.byte_size

    @property
    def read_only(self) -> bool:
        return bool(self.struct.flags & (HANDOFF_READ_ONLY | HANDOFF_QPARAM))

    if native is None:  # else hurray._native's HandoffBase.released
        @property
        def released(self) -> bool:
            return not self.struct.release

    @property
    def stream(self) -> Optional[int]:
        """CONSUMER_STREAM: the stream the producer synchronised to (an int); else None."""
        if self.handle.sync_mode == SYNC_CONSUMER_STREAM:
            return self.struct.sync_object or 0
        return None

    def _layout(self):
        shape = self.shape if self.shape is not None else (self.nbytes // itemsize(self.dtype),)
        return shape, self.strides

    def check(self, policy: Any = None, **kwargs: Any) -> None:
        """hurray_handoff_check: rules, payload, address. Raises HurrayError."""
        p = policy_of(policy, kwargs) if (policy is not None or kwargs) else None
        err = _lib.Error()
        check(_lib.lib.hurray_handoff_check(ctypes.byref(self.struct), p._p if p else None,
                                            ctypes.byref(err)), err)

    def acquire(self, stream: Optional[int] = None, ctx: Any = None) -> None:
        """Make the memory safe to touch as the sync mode says: for EVENT,
        `stream` (None: the host) waits on the event through the backend,
        which is then released once; for CONSUMER_STREAM, `stream` must be
        the declared one (BP-SYNC-STREAM); nothing for PRODUCER_SYNCED."""
        err = _lib.Error()
        check(_lib.lib.hurray_handoff_acquire(ctx_of(ctx), ctypes.byref(self.struct), stream,
                                              ctypes.byref(err)), err)

    def release_event(self) -> None:
        """Release an EVENT handoff's event without waiting, exactly once
        (BP-EVREL-ONCE)."""
        err = _lib.Error()
        check(_lib.lib.hurray_handoff_release_event(ctypes.byref(self.struct),
                                                    ctypes.byref(err)), err)

    if native is None:  # else hurray._native's HandoffBase (release, and at dealloc)
        def release(self) -> None:
            """Release exactly once (BP-REL-ONCE): a second call raises
            HurrayError (HURRAY_E_ALREADY_RELEASED)."""
            err = _lib.Error()
            check(_lib.lib.hurray_handoff_release(ctypes.byref(self.struct), ctypes.byref(err)),
                  err)

        def __del__(self, _release=_lib.lib.hurray_handoff_release, _byref=ctypes.byref):
            try:
                if self.struct.release:
                    _release(_byref(self.struct), None)
            except Exception:  # __init__ never ran
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if not self.released:
            self.release()

    # ---- DLPack producer: hand it on ----
    def __dlpack_device__(self) -> tuple:
        """(DLDeviceType, device_id) of the handoff's device."""
        h = self.handle
        dl, err = ctypes.c_int32(), _lib.Error()
        check(_lib.lib.hurray_dlpack_device_to_dl(h.device_tag, h.memory_class,
                                                  ctypes.byref(dl), ctypes.byref(err)),
              err, DLPackError)
        return (dl.value, 0 if dl.value == DL_CPU else self.struct.device_ordinal)

    def __dlpack__(self, stream: Optional[int] = None, max_version: Any = None,
                   dl_device: Any = None, copy: Optional[bool] = None) -> Any:
        """Move the handoff into a DLPack tensor of its own layout (zero-copy
        only: copy=True and other devices are refused). An EVENT handoff on a
        device is first acquired on the consumer's `stream` (that stream is
        made to wait on the event through the backend, and the event is
        released once), since DLPack carries no event; with stream=-1 (no
        synchronisation) it is refused (BP-SYNC-WAIT) until acquired."""
        if self.released:
            raise DLPackError(E_ALREADY_RELEASED, "BP-REL-ONCE", "BP-REL-ONCE: the handoff "
                              "was released (or handed on) already")
        device = self.__dlpack_device__()
        check_stream(device, stream)
        if dl_device is not None and tuple(dl_device) != device:
            raise refuse_device(device, dl_device)
        if copy:
            raise DLPackError(E_INVALID_ARGUMENT, "BP-ZC-NOCOPY", "BP-ZC-NOCOPY: a handoff is "
                              "handed on without a copy only (copy=True)")
        if (device[0] != DL_CPU and stream != -1 and self.handle.sync_mode == SYNC_EVENT
                and self.struct.release_event):
            self.acquire(stream)  # the consumer's stream waits through the backend
        shape, strides = self._layout()
        return to_capsule(self.struct, self.dtype, shape, strides, self.element_offset,
                          wants_versioned(max_version))

    def numpy(self) -> Any:
        """A numpy view (writable unless READ_ONLY) of a host handoff, in its
        layout; it keeps this handoff (so the memory) alive."""
        if self.released:
            raise DLPackError(E_ALREADY_RELEASED, "BP-REL-ONCE", "BP-REL-ONCE: released")
        h = self.handle
        shape, strides = self._layout()
        return host_view(self, self.struct.data or 0, h, self.struct.flags, self.dtype, shape,
                         strides, self.element_offset, self.read_only)

    def __repr__(self):
        if self.released:
            return "<hurray.Handoff released>"
        shape, _ = self._layout()
        return "<hurray.Handoff %s, %s %s>" % (self.handle, describe(self.dtype), shape)


def _producer_capsule(obj, device, stream, dl_device, copy):
    """Ask a producer for its capsule per the array API: max_version,
    and the stream the standard says for its device."""
    kwargs = {"stream": stream, "max_version": DLPACK_VERSION}
    if dl_device is not None:
        kwargs["dl_device"] = tuple(dl_device)
    if copy is not None:
        kwargs["copy"] = copy
    try:
        return obj.__dlpack__(**kwargs)
    except TypeError:
        # A pre-2023 producer (numpy 1.x, torch 1.x): stream only.
        if copy or (dl_device is not None and tuple(dl_device) != device):
            raise DLPackError(E_INVALID_ARGUMENT, "", "hurray.from_dlpack: %s.__dlpack__ "
                              "takes no copy= or dl_device= (an older producer); copy "
                              "it yourself" % type(obj).__name__) from None
        return obj.__dlpack__(stream=stream) if stream is not None else obj.__dlpack__()


def _capsule_device(capsule):
    """The (device_type, device_id) of an unconsumed capsule's tensor."""
    if _capsules.IsValid(capsule, _capsules.VERSIONED):
        t = ctypes.cast(_capsules.GetPointer(capsule, _capsules.VERSIONED),
                        ctypes.POINTER(_lib.DLManagedTensorVersioned)).contents.dl_tensor
    else:
        t = ctypes.cast(_capsules.GetPointer(capsule, _capsules.LEGACY),
                        ctypes.POINTER(_lib.DLManagedTensor)).contents.dl_tensor
    return (t.device.device_type, t.device.device_id), t


def _from_dlpack_py(obj: Any, *, device: Any = None, copy: Optional[bool] = None,
                stream: Optional[int] = None, ctx: Any = None) -> Handoff:
    """Take a DLPack tensor over as a Handoff, zero-copy unless copy=True: obj
    is a producer (anything with __dlpack__: a numpy array, a torch tensor) or
    an unconsumed capsule. Its deleter runs exactly once, when the handoff is
    released (by a C consumer or here).

    As the array API says: the producer's __dlpack_device__ is asked first;
    on the CPU stream must be None and the handoff is PRODUCER_SYNCED; on a
    device, `stream` is the consumer's stream (an int: the stream the C
    consumer will use), passed to the producer's __dlpack__ so that it makes
    that stream wait for its work, and the handoff is CONSUMER_STREAM on that
    stream (never PRODUCER_SYNCED: nothing says the data is ready for another
    stream). stream=None or -1 on a device is refused (BufferError).
    device: ask the producer for the tensor on that DLPack device (its copy).
    copy=True on the CPU: the bytes are copied into a new 64-byte aligned
    hurray buffer (any numpy array can then be handed over).
    Raises DLPackError (a BufferError) naming the rule when the tensor cannot
    be a hurray buffer (e.g. BP-ALIGN-MIN: numpy's own allocations are often
    only 16-byte aligned; see aligned_empty() and copy=True)."""
    if stream is not None and (isinstance(stream, bool) or not isinstance(stream, int)
                               or not -1 <= stream <= U64_MAX):
        raise TypeError("hurray.from_dlpack: stream must be None or an int, not %r" % (stream,))
    if type(obj).__name__ == "PyCapsule":
        capsule = obj
        if not _capsules.unconsumed(capsule):
            raise DLPackError(E_INVALID_ARGUMENT, "", "hurray.from_dlpack: not an unconsumed "
                              "DLPack capsule (\"dltensor\" or \"dltensor_versioned\")")
        dev, _ = _capsule_device(capsule)
    elif hasattr(obj, "__dlpack__"):
        dev = tuple(obj.__dlpack_device__()) if hasattr(obj, "__dlpack_device__") else None
        on_cpu = dev is None or dev[0] == DL_CPU
        want = tuple(device) if device is not None else dev
        if want is not None and want[0] == DL_CPU:
            on_cpu = True
        _check_consumer_stream(on_cpu, stream, want)
        own_copy = bool(copy) and on_cpu and (dev is None or dev[0] == DL_CPU)
        capsule = _producer_capsule(obj, dev, None if on_cpu else stream, device,
                                    None if own_copy else copy)
        if not _capsules.unconsumed(capsule):
            raise DLPackError(E_INVALID_ARGUMENT, "", "hurray.from_dlpack: %s.__dlpack__ "
                              "returned no unconsumed DLPack capsule" % type(obj).__name__)
        dev, _ = _capsule_device(capsule)
    else:
        raise TypeError("hurray.from_dlpack: %s has no __dlpack__" % type(obj).__name__)
    _check_consumer_stream(dev[0] == DL_CPU, stream, dev)
    if copy and dev[0] == DL_CPU:
        return _copied(capsule, ctx)
    return _import(capsule, None if dev[0] == DL_CPU else stream, ctx)


def _copied(capsule, ctx):
    """copy=True on the CPU: the bytes the tensor spans copied into a new
    64-byte aligned hurray buffer (so an array numpy aligned to 16 bytes can
    be handed over), in the same layout; the producer's tensor is deleted
    at once."""
    from ._buffer import Buffer
    _, t = _capsule_device(capsule)
    ndim = t.ndim
    if not 0 <= ndim <= DLPACK_MAX_NDIM or (ndim and not t.shape) or not t.dtype.bits \
            or not t.dtype.lanes:
        raise DLPackError(E_INVALID_ARGUMENT, "", "hurray.from_dlpack: a malformed DLPack "
                          "tensor (ndim %d) cannot be copied" % ndim)
    dtype = _lib.DLDataType(t.dtype.code, t.dtype.bits, t.dtype.lanes)
    size = itemsize(dtype)
    shape = tuple(t.shape[i] for i in range(ndim))
    strides = tuple(t.strides[i] for i in range(ndim)) if t.strides else None
    lo = hi = 0
    for n, st in zip(shape, strides or ()):
        lo, hi = (lo + (n - 1) * st, hi) if st < 0 else (lo, hi + (n - 1) * st)
    if strides is None:
        hi = 1
        for n in shape:
            hi *= n
        hi -= 1
    nbytes = 0 if 0 in shape else (hi - lo + 1) * size
    buf = Buffer.alloc(nbytes, alignment=64, ctx=ctx)
    if nbytes:
        ctypes.memmove(buf.address, (t.data or 0) + t.byte_offset + lo * size, nbytes)
    h = buf.export()
    buf.close()
    _capsules.consume(capsule)  # the producer's tensor is no longer needed
    h.dtype, h.shape, h.strides, h.element_offset = dtype, shape, strides, -lo * size
    return h


def _check_consumer_stream(on_cpu, stream, dev):
    if on_cpu:
        if stream is not None:
            raise DLPackError(E_SYNC, "BP-SYNC-CPU", "BP-SYNC-CPU: stream=%r for a CPU tensor; "
                              "on the CPU the stream is None" % (stream,))
    elif stream is None or stream == -1:
        raise DLPackError(E_SYNC, "BP-SYNC-WAIT", "BP-SYNC-WAIT: a tensor on DLPack device %s "
                          "needs stream= (the stream its consumer will use, as an int): "
                          "without one the producer does not synchronise, and its pending "
                          "work would be declared done" % (dev,))


def _import(capsule, stream, ctx):
    versioned = bool(_capsules.IsValid(capsule, _capsules.VERSIONED))
    name = _capsules.VERSIONED if versioned else _capsules.LEGACY
    ptr = _capsules.GetPointer(capsule, name)
    _, t = _capsule_device(capsule)
    h, err = Handoff(), _lib.Error()
    # The layout, read before the import (the tensor is the producer's until then).
    ndim = t.ndim
    if 0 <= ndim <= 64 and (ndim == 0 or t.shape):
        h.dtype = _lib.DLDataType(t.dtype.code, t.dtype.bits, t.dtype.lanes)
        h.shape = tuple(t.shape[i] for i in range(ndim))
        h.strides = tuple(t.strides[i] for i in range(ndim)) if t.strides else None
    opts = None
    if stream is not None:
        opts = _lib.DLPackImportOptions(ctypes.sizeof(_lib.DLPackImportOptions), 0,
                                        SYNC_CONSUMER_STREAM, 0, stream)
    fn = (_lib.lib.hurray_dlpack_import_versioned_opts if versioned
          else _lib.lib.hurray_dlpack_import_legacy_opts)
    st = fn(ctx_of(ctx), ptr, ctypes.byref(opts) if opts is not None else None,
            ctypes.byref(h.struct), ctypes.byref(err))
    if st != 0:
        raise import_error(err)
    _capsules.SetName(capsule, _capsules.USED_VERSIONED if versioned else _capsules.USED_LEGACY)
    if h.shape is not None and not (h.struct.flags & HANDOFF_OPAQUE_DATA):
        first = (t.data or 0) + t.byte_offset  # element 0
        h.element_offset = first - (h.struct.data or 0)
    elif h.shape is not None:
        h.element_offset = t.byte_offset
    return h


def aligned_empty(shape: Any, dtype: Any = "float64", alignment: int = 64) -> Any:
    """A numpy array whose data starts on an `alignment` boundary (numpy's
    own allocations are often only 16-byte aligned; the protocol asks for 64,
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




# hurray._native's from_dlpack takes a CPU producer without options in C and
# hands everything else to _from_dlpack_py; both follow the rules above.
from_dlpack = native.from_dlpack if native is not None else _from_dlpack_py
