"""hurray: Python bindings for libhurray, the Hurray buffer protocol.

Over libhurray.so.1: the per-tensor path in C (hurray._native, built by CMake;
hurray.native says whether it is loaded), the rest on ctypes. What it offers:

- Handle, decode(), validate(), diagnose(), inspect(): the 16-byte handle and
  buffer tables, checked against every rule of the protocol;
- Buffer.alloc(), Buffer.wrap(), Buffer.adopt(): a producer's buffer, with
  __dlpack__ / __dlpack_device__ (array API 2023.12) so that
  numpy.from_dlpack(buf) or torch.from_dlpack(buf) is a zero-copy view,
  released exactly once; numpy() and memoryview() for writable host views;
- from_dlpack(obj): any DLPack producer's tensor (a numpy array, a torch
  tensor) taken over as a Handoff that a C consumer reads and releases, or
  that is handed on to another framework;
- hurray.ipc: buffers and arrays to another process, zero-copy;
- hurray.net: PUT and GET across machines (libhurray-net.so.1, UCX),
  imported on demand (import hurray.net).

Everything is safe at interpreter exit: whatever is still alive (views,
capsules, handoffs, buffers with on_free) is released at most once, with
no crash and no message.

The library is found through HURRAY_LIBRARY, then next to this package, then
/usr/local/lib and /usr/lib, then the loader's path and pkg-config (see _lib.py).
"""
from . import _lib, ipc  # noqa: F401 (hurray.ipc)
from ._buffer import Buffer, Tensor
from ._capsules import live_count as _live_capsules  # noqa: F401 (tests)
from ._constants import *  # noqa: F401,F403
from ._constants import DLPACK_FLAG_READ_ONLY, DLPACK_VERSION  # noqa: F401
from ._dtypes import DTypeError
from ._errors import DLPackError, HurrayError
from ._handles import (Context, Diagnostic, Handle, Policy, decode, decode_table, diagnose,
                       inspect, validate)
from ._handoff import Handoff, aligned_empty, from_dlpack
from ._lifetime import pending_count as _pending_frees  # noqa: F401 (tests)
from . import _fast, _handoff

if _fast.native is not None:
    _fast.setup(Tensor, Handoff, _handoff._from_dlpack_py, Buffer)
native = _fast.native is not None  # True: the compiled per-tensor path (hurray._native)

__all__ = [
    "HurrayError", "DLPackError", "DTypeError", "Handle", "Diagnostic", "Policy", "Context",
    "Buffer", "Tensor", "Handoff", "decode", "decode_table", "validate", "diagnose", "inspect",
    "from_dlpack", "aligned_empty", "version", "library_path", "devices", "device_info", "device_native",
    "ipc",
]

library_path = _lib.path


def version():
    """The loaded library's version, e.g. "1.0.0"."""
    return _lib.lib.hurray_version_string().decode()


def devices(ctx=None):
    """{device tag name: number of devices} for every device tag whose backend
    reports at least one (loading the backends; the CPU is always there)."""
    import ctypes
    from ._handles import ctx_of
    out = {}
    for tag in range(0x00, 0x09):
        n, err = ctypes.c_int32(), _lib.Error()
        if _lib.lib.hurray_device_count(ctx_of(ctx), tag, ctypes.byref(n), ctypes.byref(err)) == 0 \
                and n.value > 0:
            out[_lib.lib.hurray_device_tag_name(tag).decode()] = n.value
    return out


def device_native(device_tag, ordinal=0, ctx=None):
    """The backend's native handles of one device, 8 ints (0: unused slot),
    for callers that submit their own work on it; docs/backends/<name>.md
    says what each slot holds (Vulkan: slot 3 is the plugin's VkQueue, the
    kind of stream its __dlpack__(stream=) and acquire(stream) take)."""
    import ctypes
    from ._errors import check
    from ._handles import ctx_of
    out, err = (ctypes.c_void_p * 8)(), _lib.Error()
    check(_lib.lib.hurray_device_native(ctx_of(ctx), device_tag, ordinal, ctypes.byref(out),
                                        ctypes.byref(err)), err)
    return tuple(h or 0 for h in out)


def device_info(device_tag, ordinal=0, ctx=None):
    """What the backend says of one device: {"name", "memory_classes" (bit n:
    class n), "ipc" (HURRAY_BACKEND_IPC_* bits), "min_alignment", "detail"}.
    HurrayError (E_DEVICE_UNAVAILABLE) when there is no such device."""
    import ctypes
    from ._errors import check
    from ._handles import ctx_of
    info, err = _lib.DeviceInfo(), _lib.Error()
    check(_lib.lib.hurray_device_info(ctx_of(ctx), device_tag, ordinal, ctypes.byref(info),
                                      ctypes.byref(err)), err)
    return {"name": info.name.decode(errors="replace"), "memory_classes": info.memory_classes,
            "ipc": info.ipc, "min_alignment": info.min_alignment,
            "detail": info.detail.decode(errors="replace")}
