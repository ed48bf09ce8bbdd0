"""Handles, buffer tables, policies and contexts: decode(), validate(),
diagnose(), inspect(), Policy, Context."""
from __future__ import annotations

import ctypes
from typing import Any, List
from dataclasses import dataclass

from . import _lib
from ._closing import Closeable
from ._constants import (DEVICE_CPU, HANDLE_SIZE, MEMORY_STANDARD, SYNC_PRODUCER_SYNCED,
                         TRANSPORTS, U8_MAX, U32_MAX, U64_MAX, E_SIZE, check_int)
from ._errors import HurrayError, check, error
from ._fast import native


@dataclass
class Handle:
    """The fields of one 16-byte buffer handle. Any value each field can hold
    is accepted (so that invalid handles can be built and validated); a value
    the field cannot hold (Handle(2**64 + 5)) raises ValueError."""
    byte_size: int
    alignment: int
    device_tag: int = DEVICE_CPU
    sync_mode: int = SYNC_PRODUCER_SYNCED
    memory_class: int = MEMORY_STANDARD
    reserved: int = 0

    def __post_init__(self):
        self.byte_size = check_int("byte_size", self.byte_size, 0, U64_MAX)
        self.alignment = check_int("alignment", self.alignment, 0, U32_MAX)
        for name in ("device_tag", "sync_mode", "memory_class", "reserved"):
            setattr(self, name, check_int(name, getattr(self, name), 0, U8_MAX))

    @classmethod
    def decode(cls, data: bytes) -> "Handle":
        """Decode exactly 16 little-endian bytes (BP-SIZE otherwise)."""
        if native is not None:
            return cls._from_fields(native.handle_decode(data))
        data = bytes(data)
        h, err = _lib.BufferHandle(), _lib.Error()
        check(_lib.lib.hurray_handle_decode(data, len(data), ctypes.byref(h), ctypes.byref(err)),
              err)
        return cls._from_struct(h)

    @classmethod
    def _from_fields(cls, fields):
        """A Handle of decoded fields (in range by construction: no checks)."""
        h = cls.__new__(cls)
        (h.byte_size, h.alignment, h.device_tag, h.sync_mode, h.memory_class,
         h.reserved) = fields
        return h

    @classmethod
    def _from_struct(cls, h):
        return cls(h.byte_size, h.alignment, h.device_tag, h.sync_mode, h.memory_class,
                   h.reserved)

    def _struct(self):
        self.__post_init__()  # fields may have been assigned since
        return _lib.BufferHandle(self.byte_size, self.alignment, self.device_tag,
                                 self.sync_mode, self.memory_class, self.reserved)

    def encode(self) -> bytes:
        """The 16 little-endian bytes."""
        if native is not None:
            wire = native.handle_encode(self.byte_size, self.alignment, self.device_tag,
                                        self.sync_mode, self.memory_class, self.reserved)
            if wire is not None:
                return wire  # else a field is out of range: the checks below say which
        out, err = (ctypes.c_uint8 * 16)(), _lib.Error()
        h = self._struct()
        check(_lib.lib.hurray_handle_encode(ctypes.byref(h), out, 16, ctypes.byref(err)), err)
        return bytes(out)

    @property
    def device(self):
        """The device tag's name ("CPU", "CUDA", ...)."""
        return _lib.lib.hurray_device_tag_name(self.device_tag).decode()

    @property
    def memory(self):
        """The memory class's name."""
        return _lib.lib.hurray_memory_class_name(self.memory_class).decode()

    @property
    def sync(self):
        """The sync mode's name."""
        return _lib.lib.hurray_sync_mode_name(self.sync_mode).decode()

    def __str__(self):
        return ("%d bytes, alignment %d, device %s (0x%02X), sync %s, memory %s, reserved 0x%02X"
                % (self.byte_size, self.alignment, self.device, self.device_tag, self.sync,
                   self.memory, self.reserved))


def decode(data: bytes) -> Handle:
    """One handle from exactly 16 bytes."""
    return Handle.decode(data)


def decode_table(data: bytes) -> List[Handle]:
    """Every handle of a buffer table (a whole number of 16-byte handles)."""
    data = bytes(data)
    if not data or len(data) % HANDLE_SIZE:
        raise HurrayError(E_SIZE, "BP-SIZE", "BP-SIZE: a buffer table is a whole, non-empty "
                          "number of 16-byte handles; got %d bytes" % len(data))
    return [Handle.decode(data[i:i + HANDLE_SIZE]) for i in range(0, len(data), HANDLE_SIZE)]


class Policy(Closeable):
    """Which rules apply: transport ("in-process", "ipc", "rdma",
    "cross-machine"), agreed private device tags, SHOULDs as errors."""

    def __init__(self, transport="in-process", private_tags=(), warnings_as_errors=False):
        self._p = ctypes.c_void_p()
        err = _lib.Error()
        check(_lib.lib.hurray_policy_create(ctypes.byref(self._p), ctypes.byref(err)), err)
        try:
            if transport not in TRANSPORTS:
                raise ValueError("unknown transport %r (one of %s)" % (transport,
                                                                       ", ".join(TRANSPORTS)))
            check(_lib.lib.hurray_policy_set_transport(self._p, TRANSPORTS[transport],
                                                       ctypes.byref(err)), err)
            for tag in private_tags:
                tag = check_int("private tag", tag, 0, U8_MAX)
                check(_lib.lib.hurray_policy_allow_private_tag(self._p, tag, 1,
                                                               ctypes.byref(err)), err)
            check(_lib.lib.hurray_policy_set_warnings_as_errors(
                self._p, 1 if warnings_as_errors else 0, ctypes.byref(err)), err)
        except Exception:
            self.close()
            raise

    def close(self, _destroy=_lib.lib.hurray_policy_destroy):
        """Destroy the policy now (also done when the object goes)."""
        p, self._p = self._p, ctypes.c_void_p()
        if p:
            _destroy(p)


def policy_of(policy, kwargs):
    return policy if policy is not None else Policy(**kwargs)


def validate(data: bytes, policy: Any = None, **kwargs: Any) -> None:
    """Check a handle or buffer table (bytes); raise HurrayError naming the
    first broken rule. kwargs make a Policy (transport=..., ...)."""
    if native is not None and (policy is not None or not kwargs):
        native.table_validate(data, policy._p.value if policy is not None else None)
        return
    data = bytes(data)
    p = policy_of(policy, kwargs)
    err = _lib.Error()
    check(_lib.lib.hurray_table_validate(data, len(data), p._p, ctypes.byref(err)), err)


@dataclass
class Diagnostic:
    """One error or warning of diagnose()."""
    severity: str  # "error" or "warning"
    rule_id: str
    message: str
    buffer_index: int
    byte_offset: int


def diagnose(data: bytes, policy: Any = None, **kwargs: Any) -> List[Diagnostic]:
    """Every error and warning of a handle or buffer table, in order."""
    data = bytes(data)
    p = policy_of(policy, kwargs)
    n_err, n_warn, err = ctypes.c_size_t(), ctypes.c_size_t(), _lib.Error()
    cap = 16
    while True:
        out = (_lib.Error * cap)()
        st = _lib.lib.hurray_table_diagnose(data, len(data), p._p, out, cap, ctypes.byref(n_err),
                                            ctypes.byref(n_warn), ctypes.byref(err))
        if st != 0 and n_err.value == 0 and n_warn.value == 0:
            raise error(err)
        total = n_err.value + n_warn.value
        if total <= cap:
            break
        cap = total
    return [Diagnostic("warning" if e.severity else "error", e.rule_id.decode(),
                       e.message.decode(), e.buffer_index, e.byte_offset) for e in out[:total]]


def inspect(data: bytes, policy: Any = None, **kwargs: Any) -> str:
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


class Context(Closeable):
    """A hurray_context: the policy producers are held to, guard mode."""

    def __init__(self, policy=None, guard=False, **kwargs):
        self._c = ctypes.c_void_p()
        err = _lib.Error()
        check(_lib.lib.hurray_context_create(ctypes.byref(self._c), ctypes.byref(err)), err)
        if policy is not None or kwargs:
            p = policy_of(policy, kwargs)
            check(_lib.lib.hurray_context_set_policy(self._c, p._p, ctypes.byref(err)), err)
        if guard:
            check(_lib.lib.hurray_context_set_guard(self._c, 1, ctypes.byref(err)), err)

    def close(self, _destroy=_lib.lib.hurray_context_destroy):
        """Destroy the context now (also done when the object goes)."""
        c, self._c = self._c, ctypes.c_void_p()
        if c:
            _destroy(c)


def ctx_of(ctx):
    return ctx._c if ctx is not None else None
