"""Buffers and arrays to another process, zero-copy (hurray_ipc.h).

A channel is a Unix domain socket between two processes. The producer
allocates a shareable buffer (Buffer.alloc(n, alignment=4096,
shareable=True): its memory is a memfd), fills it (buf.numpy(...)) and
sends it; the consumer receives a Handoff whose memory is the same pages,
mapped (h.numpy() is a view of them), and releases it when done, which
tells the producer. Everything here is a context manager, closed or
released when the object goes (at interpreter exit too).

    with hurray.ipc.listen(path) as server:       # producer
        ch = server.accept(timeout_ms=10000)
        ch.send(buf)
        ch.wait_released()

    with hurray.ipc.connect(path) as ch:         # consumer
        with ch.receive(dtype="float64", shape=(1000,)) as h:
            a = h.numpy()                          # the producer's pages
            ...; del a
"""
from __future__ import annotations

import ctypes
from typing import Any, Optional
from dataclasses import dataclass

from . import _lib
from ._closing import Closeable
from ._constants import HANDOFF_READ_ONLY, I32_MAX, I32_MIN, check_int
from ._dtypes import dl_dtype
from ._errors import HurrayError, check, error
from ._handoff import Handoff

__all__ = ["listen", "connect", "Listener", "Channel", "Stats", "PeerInfo"]


def _lib_ipc():
    if not _lib.has_ipc:
        raise HurrayError(12, "", "hurray.ipc: this libhurray has no IPC transport")
    return _lib.lib


def _options(hello_timeout_ms):
    o = _lib.IPCOptions()  # zero: the defaults of every later field
    o.size = ctypes.sizeof(_lib.IPCOptions)
    o.hello_timeout_ms = check_int("hello_timeout_ms", hello_timeout_ms, I32_MIN, I32_MAX)
    return o


def _timeout(ms):
    return check_int("timeout_ms", -1 if ms is None else ms, I32_MIN, I32_MAX)


@dataclass
class Stats:
    """A channel's counters (hurray_ipc_stats)."""
    closed: bool
    sent: int
    released: int
    reclaimed: int
    outstanding: int
    received: int
    releases_sent: int
    releases_failed: int
    releases_refused: int
    messages_rejected: int


@dataclass
class PeerInfo:
    """The other side: what it announced (protocol version, devices as (tag, memory
    class bits)) and what the kernel says of it (pid, effective uid and gid)."""
    protocol_version: int
    pid: int
    devices: list
    uid: int
    gid: int


class Channel(Closeable):
    """One connected channel: send() buffers, receive() handoffs."""

    def __init__(self, pointer):
        self._c = ctypes.c_void_p(pointer)

    def _live(self):
        if not self._c:
            raise HurrayError(1, "", "hurray.ipc: the channel is closed")
        return self._c

    def send(self, buffer: Any, read_only: bool = False) -> int:
        """Hand `buffer` (a shareable hurray.Buffer) to the peer without a
        copy; the channel holds a reference until the peer releases it.
        Returns the handoff's id."""
        desc = _lib.ExportDesc(ctypes.sizeof(_lib.ExportDesc),
                               HANDOFF_READ_ONLY if read_only else 0)
        hid, err = ctypes.c_uint64(), _lib.Error()
        check(_lib_ipc().hurray_ipc_send(self._live(), buffer._live().ptr, ctypes.byref(desc),
                                         ctypes.byref(hid), ctypes.byref(err)), err)
        return hid.value

    def progress(self, timeout_ms: Optional[int] = 0) -> int:
        """Read what the peer sent (releases, handoffs for receive()); the
        number of messages handled. HurrayError (E_IO) once the peer is gone."""
        n, err = ctypes.c_uint32(), _lib.Error()
        check(_lib_ipc().hurray_ipc_progress(self._live(), _timeout(timeout_ms),
                                             ctypes.byref(n), ctypes.byref(err)), err)
        return n.value

    def wait_released(self, timeout_ms: int = 10000, step_ms: int = 100) -> Stats:
        """progress() until nothing sent is outstanding, at most timeout_ms
        (then TimeoutError). Returns the stats."""
        waited = 0
        while True:
            s = self.stats()
            if s.outstanding == 0:
                return s
            if waited >= timeout_ms:
                raise TimeoutError("hurray.ipc: %d buffer(s) still outstanding after %d ms"
                                   % (s.outstanding, timeout_ms))
            try:
                self.progress(step_ms)
            except HurrayError:
                return self.stats()  # the peer is gone: everything was reclaimed
            waited += step_ms

    def receive(self, timeout_ms: Optional[int] = None, dtype: Any = None, shape: Any = None,
                strides: Any = None) -> Handoff:
        """The next buffer the peer sent, as a Handoff whose memory is mapped
        here (timeout_ms None: wait for ever; nothing in time: HurrayError
        E_IO). dtype/shape/strides (elements) give its layout for numpy()
        and __dlpack__ (default: the bytes). Release it when its views are
        gone (it is released when the object goes, too)."""
        h, hid, err = Handoff(), ctypes.c_uint64(), _lib.Error()
        check(_lib_ipc().hurray_ipc_receive(self._live(), _timeout(timeout_ms),
                                            ctypes.byref(h.struct), ctypes.byref(hid),
                                            ctypes.byref(err)), err)
        h.id = hid.value
        if dtype is not None:
            h.dtype = dl_dtype(dtype)
        if shape is not None:
            h.shape = tuple(int(n) for n in (shape if isinstance(shape, (tuple, list))
                                             else (shape,)))
            h.strides = None if strides is None else tuple(int(s) for s in strides)
        return h

    def stats(self) -> Stats:
        s, err = _lib.IPCStats(), _lib.Error()
        s.size = ctypes.sizeof(s)
        check(_lib_ipc().hurray_ipc_get_stats(self._live(), ctypes.byref(s), ctypes.byref(err)),
              err)
        return Stats(bool(s.closed), s.sent, s.released, s.reclaimed, s.outstanding, s.received,
                     s.releases_sent, s.releases_failed, s.releases_refused, s.messages_rejected)

    def peer(self) -> PeerInfo:
        p, err = _lib.IPCPeerInfo(), _lib.Error()
        p.size = ctypes.sizeof(p)
        check(_lib_ipc().hurray_ipc_peer(self._live(), ctypes.byref(p), ctypes.byref(err)), err)
        return PeerInfo(p.protocol_version, p.pid,
                        [(d.device_tag, d.memory_classes) for d in p.devices[:p.device_count]],
                        p.uid, p.gid)

    def close(self, _close=getattr(_lib.lib, "hurray_ipc_close", None)):
        """Close the channel (sent buffers not yet released are reclaimed)."""
        c, self._c = self._c, ctypes.c_void_p()
        if c and _close is not None:
            _close(c)


class Listener(Closeable):
    """A listening Unix socket; accept() gives a Channel per connection."""

    def __init__(self, path, hello_timeout_ms=0):
        self._l = ctypes.c_void_p()
        o, err = _options(hello_timeout_ms), _lib.Error()
        check(_lib_ipc().hurray_ipc_listen(str(path).encode(), ctypes.byref(o),
                                           ctypes.byref(self._l), ctypes.byref(err)), err)

    def accept(self, timeout_ms: Optional[int] = None) -> Channel:
        """Wait (None: for ever) for a connection and its HELLO."""
        if not self._l:
            raise HurrayError(1, "", "hurray.ipc: the listener is closed")
        out, err = ctypes.c_void_p(), _lib.Error()
        st = _lib_ipc().hurray_ipc_accept(self._l, _timeout(timeout_ms), ctypes.byref(out),
                                          ctypes.byref(err))
        if st != 0:
            raise error(err)
        return Channel(out.value)

    def close(self, _destroy=getattr(_lib.lib, "hurray_ipc_listener_destroy", None)):
        l, self._l = self._l, ctypes.c_void_p()
        if l and _destroy is not None:
            _destroy(l)


def listen(path: Any, hello_timeout_ms: int = 0) -> Listener:
    """Listen on the Unix socket `path` (an existing socket there is replaced)."""
    return Listener(path, hello_timeout_ms)


def connect(path: Any, hello_timeout_ms: int = 0) -> Channel:
    """Connect to a listener at `path` and exchange HELLO messages."""
    out, err = ctypes.c_void_p(), _lib.Error()
    o = _options(hello_timeout_ms)
    check(_lib_ipc().hurray_ipc_connect(str(path).encode(), ctypes.byref(o), ctypes.byref(out),
                                        ctypes.byref(err)), err)
    return Channel(out.value)
