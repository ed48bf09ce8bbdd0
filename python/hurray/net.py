"""Buffers across machines over UCX (hurray_net.h, libhurray-net.so.1).

A Server listens and receives PUTs (each lands in a buffer it allocates and
hands to poll()) and serves GETs of the buffers registered with it; a
Client connects to one server, PUTs buffers to it (at once, or started and
then tested or waited for by ticket) and GETs registered buffers into new
buffers of its own. A Server drives the network from a progress thread of
its own (hurray_net_server_poll, a few milliseconds at a time, the GIL
released), so a client in the same thread is answered: poll() only takes
the PUTs that landed. Server(progress_thread=False) leaves the driving to
poll(), as before. Every object closes when it goes (at exit too).

    server = hurray.net.Server("127.0.0.1")        # any free port
    client = hurray.net.Client("127.0.0.1", server.port)
    client.put(buf, buffer_id=7)                   # the same thread
    buffer_id, landed = server.poll(timeout_ms=1000)
"""
from __future__ import annotations

import atexit
import ctypes
import os
import queue
import threading
import weakref
from typing import Any, Optional

from . import _lib
from ._closing import Closeable
from ._buffer import Buffer
from ._constants import (DEVICE_CPU, I32_MAX, I32_MIN, MEMORY_STANDARD, TRANSPORTS, U8_MAX,
                         U64_MAX, check_int)
from ._errors import HurrayError, check
from ._handoff import Handoff

__all__ = ["Server", "Client", "library"]

_P = ctypes.POINTER
c_u8, c_u16, c_u32, c_u64 = ctypes.c_uint8, ctypes.c_uint16, ctypes.c_uint32, ctypes.c_uint64
c_i32, c_vp = ctypes.c_int32, ctypes.c_void_p


class ServerConfig(ctypes.Structure):
    _fields_ = [("size", c_u32), ("transport", c_u32), ("address", ctypes.c_char_p),
                ("port", c_u16), ("reserved0", c_u16), ("n_devices", c_u32),
                ("devices", _P(c_u8)), ("context", c_vp), ("alloc", c_vp),
                ("alloc_user", c_vp), ("limits", c_vp), ("allow", ctypes.c_char_p),
                ("key", ctypes.c_char_p), ("key_file", ctypes.c_char_p), ("flags", c_u32),
                ("reserved1", c_u32)]


class ClientConfig(ctypes.Structure):
    _fields_ = [("size", c_u32), ("transport", c_u32), ("address", ctypes.c_char_p),
                ("port", c_u16), ("reserved0", c_u16), ("timeout_ms", c_i32),
                ("context", c_vp), ("key", ctypes.c_char_p), ("key_file", ctypes.c_char_p)]


class TransferDesc(ctypes.Structure):
    _fields_ = [("size", c_u32), ("reserved0", c_u32), ("buffer_id", c_u64),
                ("device_tag", c_u8), ("memory_class", c_u8), ("reserved1", c_u8 * 2),
                ("device_ordinal", c_i32)]


class Received(ctypes.Structure):
    _fields_ = [("size", c_u32), ("reserved0", c_u32), ("buffer_id", c_u64), ("buffer", c_vp),
                ("handle", _lib.BufferHandle), ("device_ordinal", c_i32), ("reserved1", c_u32)]


_STATS = ("connections", "disconnections", "puts_landed", "puts_refused", "gets_served",
          "gets_refused", "transfers_failed", "in_flight", "pending", "live_buffers")


class Stats(ctypes.Structure):
    _fields_ = [(n, c_u64) for n in _STATS]


SERVER_NO_AUTH = 0x1  # HURRAY_NET_SERVER_NO_AUTH

for _t, _n in ((ServerConfig, 96), (ClientConfig, 48), (TransferDesc, 24), (Received, 48),
               (Stats, 80)):
    assert ctypes.sizeof(_t) == _n, (_t.__name__, ctypes.sizeof(_t))

status, _E = c_i32, _P(_lib.Error)
_DECLS = {
    "hurray_net_server_create": (status, [_P(ServerConfig), _P(c_vp), _E]),
    "hurray_net_server_destroy": (None, [c_vp]),
    "hurray_net_server_port": (c_u16, [c_vp]),
    "hurray_net_server_poll": (status, [c_vp, c_i32, _P(Received), _E]),
    "hurray_net_server_register": (status, [c_vp, c_u64, c_vp, _E]),
    "hurray_net_server_unregister": (status, [c_vp, c_u64, _E]),
    "hurray_net_server_stats": (None, [c_vp, _P(Stats)]),
    "hurray_net_client_connect": (status, [_P(ClientConfig), _P(c_vp), _E]),
    "hurray_net_client_destroy": (None, [c_vp]),
    "hurray_net_client_put": (status, [c_vp, _P(_lib.Handoff), _P(TransferDesc), _E]),
    "hurray_net_client_put_buffer": (status, [c_vp, c_vp, _P(TransferDesc), _E]),
    "hurray_net_client_put_buffer_start": (status, [c_vp, c_vp, _P(TransferDesc), _P(c_u64),
                                                    _E]),
    "hurray_net_client_put_test": (status, [c_vp, c_u64, _P(c_i32), _E]),
    "hurray_net_client_put_wait": (status, [c_vp, c_u64, _E]),
    "hurray_net_client_get": (status, [c_vp, _P(TransferDesc), _P(c_vp), _E]),
}
_net = []


def library():
    """libhurray-net.so.1 (HURRAY_NET_LIBRARY, else beside libhurray.so.1,
    else the loader's path), loaded on first use."""
    if _net:
        return _net[0]
    tried = []
    for path in (os.environ.get("HURRAY_NET_LIBRARY"),
                 os.path.join(os.path.dirname(_lib.path), "libhurray-net.so.1"),
                 "libhurray-net.so.1"):
        if not path or (os.sep in path and not os.path.exists(path)):
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s: %s" % (path, e))
            continue
        for name, (res, args) in _DECLS.items():
            f = getattr(lib, name)
            f.restype, f.argtypes = res, args
        _net.append(lib)
        return lib
    raise HurrayError(10, "", "hurray.net: cannot load libhurray-net.so.1 (built where UCX "
                      "is found; set HURRAY_NET_LIBRARY): %s" % ("; ".join(tried) or
                                                                 "not found"))


def _transport(name):
    if name not in ("cross-machine", "rdma"):
        raise ValueError("hurray.net: transport is 'cross-machine' or 'rdma', not %r" % (name,))
    return TRANSPORTS[name]


def _desc(buffer_id, device_tag, memory_class, device_ordinal):
    d = TransferDesc()
    d.size = ctypes.sizeof(d)
    d.buffer_id = check_int("buffer_id", buffer_id, 0, U64_MAX)
    d.device_tag = check_int("device_tag", device_tag, 0, U8_MAX)
    d.memory_class = check_int("memory_class", memory_class, 0, U8_MAX)
    d.device_ordinal = check_int("device_ordinal", device_ordinal, I32_MIN, I32_MAX)
    return d


def _text(what, value):
    """A str for a C string field (no NUL inside); None stays NULL."""
    if value is None:
        return None
    b = os.fsencode(value) if what == "key_file" else str(value).encode()
    if b"\0" in b:
        raise ValueError("hurray.net: %s holds a NUL byte" % what)
    return b


def _key(key):
    """The shared key as the bytes of a C string (str is UTF-8 encoded)."""
    if key is None:
        return None
    b = key.encode() if isinstance(key, str) else bytes(key)
    if b"\0" in b:
        raise ValueError("hurray.net: the key holds a NUL byte (a C string carries it)")
    return b


class _Pump:
    """A server's progress thread: it polls the server (holding `lock`, which
    every other use of the server takes too: hurray_net objects are used
    from one thread at a time) and queues the PUTs that landed. It holds no
    reference to the Server, so the Server is still collected."""

    STEP_MS = 5  # the longest a register() or stats() waits for the lock

    def __init__(self, server):
        self.server, self.lock = server, threading.Lock()
        self.landed, self.error = queue.Queue(), None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, name="hurray.net.Server", daemon=True)
        self.thread.start()
        _pumps.add(self)

    def run(self):
        lib = library()
        while not self.stop.is_set():
            r, err = Received(), _lib.Error()
            r.size = ctypes.sizeof(r)
            with self.lock:
                st = lib.hurray_net_server_poll(self.server, self.STEP_MS, ctypes.byref(r),
                                                ctypes.byref(err))
            if st != 0:
                self.error = err
                self.landed.put(None)  # wakes a waiting poll()
                return
            if r.buffer:
                self.landed.put((r.buffer_id, r.buffer))

    def halt(self):
        self.stop.set()
        if self.thread is not threading.current_thread():
            self.thread.join()
        _pumps.discard(self)


_pumps = weakref.WeakSet()


@atexit.register
def _halt_pumps():  # before the interpreter's teardown: no thread polls then
    for pump in list(_pumps):
        pump.halt()


class Server(Closeable):
    """A hurray_net server: receives PUTs, serves GETs of registered buffers,
    driven by a progress thread of its own (progress_thread=True)."""

    def __init__(self, address: Optional[str] = "127.0.0.1", port: int = 0,
                 transport: str = "cross-machine", *, key: Optional[Any] = None,
                 key_file: Optional[str] = None, allow: Optional[str] = None,
                 no_auth: bool = False, progress_thread: bool = True):
        """Listen on address:port (127.0.0.1 unless another address is named).
        key / key_file: the shared key every client must prove it holds (16 to
        4096 bytes; needed beyond loopback unless no_auth=True); allow: the
        admitted peers, a comma-separated list of addresses and CIDR blocks.
        progress_thread: serve from a thread of its own (False: only while
        poll() runs, which a client in the same thread then never sees)."""
        self._pump = None
        lib = library()
        cfg = ServerConfig()
        cfg.size = ctypes.sizeof(cfg)
        cfg.transport = _transport(transport)
        self._address = address.encode() if address else None  # lives as long as the call
        cfg.address = self._address
        cfg.port = check_int("port", port, 0, 0xFFFF)
        cfg.key, cfg.key_file = _key(key), _text("key_file", key_file)
        cfg.allow = _text("allow", allow)
        cfg.flags = SERVER_NO_AUTH if no_auth else 0
        self._s, err = c_vp(), _lib.Error()
        check(lib.hurray_net_server_create(ctypes.byref(cfg), ctypes.byref(self._s),
                                           ctypes.byref(err)), err)
        self._destroy = lib.hurray_net_server_destroy
        if progress_thread:
            self._pump = _Pump(self._s)

    def _live(self):
        if not self._s:
            raise HurrayError(1, "", "hurray.net: the server is closed")
        return self._s

    def _locked(self):
        return self._pump.lock if self._pump is not None else _NO_LOCK

    @property
    def port(self) -> int:
        """The TCP port it listens on."""
        with self._locked():
            return library().hurray_net_server_port(self._live())

    def poll(self, timeout_ms: int = 0):
        """(buffer_id, Buffer) of the next landed PUT, or None after
        timeout_ms (negative: wait until one lands). Without a progress
        thread, this call drives the network meanwhile."""
        timeout_ms = check_int("timeout_ms", timeout_ms, I32_MIN, I32_MAX)
        pump = self._pump
        if pump is not None:
            self._live()
            try:
                got = pump.landed.get(timeout=None if timeout_ms < 0 else timeout_ms / 1000)
            except queue.Empty:
                return None
            if got is None:
                pump.landed.put(None)  # for the next caller too
                check(pump.error.status, pump.error)
            return got[0], Buffer(got[1])
        r, err = Received(), _lib.Error()
        r.size = ctypes.sizeof(r)
        check(library().hurray_net_server_poll(self._live(),
                                               check_int("timeout_ms", timeout_ms, I32_MIN,
                                                         I32_MAX),
                                               ctypes.byref(r), ctypes.byref(err)), err)
        if not r.buffer:
            return None
        return r.buffer_id, Buffer(r.buffer)

    def register(self, buffer_id: int, buffer: Buffer) -> None:
        """Offer `buffer` to GETs under buffer_id (the server holds a reference)."""
        err = _lib.Error()
        with self._locked():
            check(library().hurray_net_server_register(
                self._live(), check_int("buffer_id", buffer_id, 0, U64_MAX), buffer._live().ptr,
                ctypes.byref(err)), err)

    def unregister(self, buffer_id: int) -> None:
        err = _lib.Error()
        with self._locked():
            check(library().hurray_net_server_unregister(
                self._live(), check_int("buffer_id", buffer_id, 0, U64_MAX),
                ctypes.byref(err)), err)

    def stats(self) -> dict:
        s = Stats()
        with self._locked():
            library().hurray_net_server_stats(self._live(), ctypes.byref(s))
        return {n: getattr(s, n) for n in _STATS}

    def close(self) -> None:
        pump, self._pump = getattr(self, "_pump", None), None
        if pump is not None:
            pump.halt()  # the thread stops polling before the server goes
            while True:  # PUTs that landed and nobody took: their buffers go
                try:
                    got = pump.landed.get_nowait()
                except queue.Empty:
                    break
                if got is not None:
                    Buffer(got[1])
        s, self._s = self._s, c_vp()
        if s:
            self._destroy(s)


class _NoLock:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_NO_LOCK = _NoLock()


class Client(Closeable):
    """A hurray_net client connected to one server."""

    def __init__(self, address: str, port: int, transport: str = "cross-machine",
                 timeout_ms: int = 0, *, key: Optional[Any] = None,
                 key_file: Optional[str] = None):
        """Connect to the server at address:port; key / key_file: the server's
        shared key, proved in the handshake and never sent."""
        lib = library()
        cfg = ClientConfig()
        cfg.size = ctypes.sizeof(cfg)
        cfg.transport = _transport(transport)
        self._address = address.encode()
        cfg.address = self._address
        cfg.port = check_int("port", port, 0, 0xFFFF)
        cfg.timeout_ms = check_int("timeout_ms", timeout_ms, I32_MIN, I32_MAX)
        cfg.key, cfg.key_file = _key(key), _text("key_file", key_file)
        self._c, err = c_vp(), _lib.Error()
        check(lib.hurray_net_client_connect(ctypes.byref(cfg), ctypes.byref(self._c),
                                            ctypes.byref(err)), err)
        self._destroy = lib.hurray_net_client_destroy

    def _live(self):
        if not self._c:
            raise HurrayError(1, "", "hurray.net: the client is closed")
        return self._c

    def put(self, source: Any, buffer_id: int, device_tag: int = DEVICE_CPU,
            memory_class: int = MEMORY_STANDARD, device_ordinal: int = 0) -> None:
        """PUT a Buffer (or a Handoff) to the server as buffer_id, into memory
        on the server's device_tag/memory_class; returns once it landed."""
        d, err = _desc(buffer_id, device_tag, memory_class, device_ordinal), _lib.Error()
        if isinstance(source, Handoff):
            st = library().hurray_net_client_put(self._live(), ctypes.byref(source.struct),
                                                 ctypes.byref(d), ctypes.byref(err))
        else:
            st = library().hurray_net_client_put_buffer(self._live(), source._live().ptr,
                                                        ctypes.byref(d), ctypes.byref(err))
        check(st, err)

    def put_start(self, source: Buffer, buffer_id: int, device_tag: int = DEVICE_CPU,
                  memory_class: int = MEMORY_STANDARD, device_ordinal: int = 0) -> int:
        """Start a PUT of a Buffer; its ticket for put_test() / put_wait()."""
        d, err, t = _desc(buffer_id, device_tag, memory_class, device_ordinal), _lib.Error(), \
            c_u64()
        check(library().hurray_net_client_put_buffer_start(
            self._live(), source._live().ptr, ctypes.byref(d), ctypes.byref(t),
            ctypes.byref(err)), err)
        return t.value

    def put_test(self, ticket: int) -> bool:
        """Drive the network; True once the PUT `ticket` has finished."""
        done, err = c_i32(), _lib.Error()
        check(library().hurray_net_client_put_test(self._live(), ticket, ctypes.byref(done),
                                                    ctypes.byref(err)), err)
        return bool(done.value)

    def put_wait(self, ticket: int) -> None:
        """Wait for the PUT `ticket`; raises what the server answered."""
        err = _lib.Error()
        check(library().hurray_net_client_put_wait(self._live(), ticket, ctypes.byref(err)), err)

    def get(self, buffer_id: int, device_tag: int = DEVICE_CPU,
            memory_class: int = MEMORY_STANDARD, device_ordinal: int = 0) -> Buffer:
        """GET the buffer the server registered as buffer_id into a new Buffer here."""
        d, err, out = _desc(buffer_id, device_tag, memory_class, device_ordinal), _lib.Error(), \
            c_vp()
        check(library().hurray_net_client_get(self._live(), ctypes.byref(d), ctypes.byref(out),
                                              ctypes.byref(err)), err)
        return Buffer(out.value)

    def close(self) -> None:
        c, self._c = self._c, c_vp()
        if c:
            self._destroy(c)

