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


def error(err, cls=HurrayError):
    return cls(err.status, err.rule_id.decode(errors="replace"),
               err.message.decode(errors="replace"), err.buffer_index, err.byte_offset)


def check(status, err, cls=HurrayError):
    if status != 0:
        raise error(err, cls)
