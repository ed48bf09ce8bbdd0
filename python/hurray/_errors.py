"""The exceptions: HurrayError (a libhurray call failed) and DLPackError
(a DLPack exchange was refused; also a BufferError, as DLPack consumers
expect)."""
from . import _lib
from ._constants import E_INVALID_ARGUMENT


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


def dlpack_refusal(message, rule_id="", status=E_INVALID_ARGUMENT):
    """A DLPackError made here (not by the library)."""
    return DLPackError(status, rule_id, message)


ALIGN_HINT = ("; make the array with hurray.aligned_empty(shape, dtype), or let "
              "hurray.from_dlpack(x, copy=True) copy it into an aligned buffer")


def import_hint(rule_id, message):
    """The refusal of an import, with what to do about a misaligned array."""
    if rule_id == "BP-ALIGN-MIN" and ALIGN_HINT not in message:
        return message + ALIGN_HINT
    return message


def native_error(dlpack, importing, status, rule_id, message, buffer_index, byte_offset):
    """The exception hurray._native raises for a hurray_error."""
    rule, msg = rule_id.decode(errors="replace"), message.decode(errors="replace")
    if importing:
        msg = import_hint(rule, msg)
    return (DLPackError if dlpack else HurrayError)(status, rule, msg, buffer_index,
                                                    byte_offset)


def import_error(err):
    """The DLPackError for a refused import (hurray.from_dlpack)."""
    rule = err.rule_id.decode(errors="replace")
    return DLPackError(err.status, rule, import_hint(rule, err.message.decode(errors="replace")),
                       err.buffer_index, err.byte_offset)


def error(err, cls=HurrayError):
    return cls(err.status, err.rule_id.decode(errors="replace"),
               err.message.decode(errors="replace"), err.buffer_index, err.byte_offset)


def check(status, err, cls=HurrayError):
    if status != 0:
        raise error(err, cls)
