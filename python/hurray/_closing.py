"""The with-block and garbage-collection half of every object that owns a C handle."""

from __future__ import annotations


class Closeable:
    """Owns something close() gives back: at the end of a with block, or when the
    object goes (close() must be safe to call twice, and on an object whose
    __init__ did not finish)."""

    __slots__ = ()

    def close(self) -> None:
        raise NotImplementedError

    def __del__(self):
        try:
            self.close()
        except Exception:  # __init__ never ran far enough
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
