"""A Python consumer of the installed libhurray, through ctypes only.

Run by tests/consumers/run_consumer.sh (mode python) with /usr/bin/python3:
    main.py LIBRARY
LIBRARY is the staged install's libhurray.so.1. Part 1 dlopens it with bare
ctypes (no package), as any runtime with an FFI would; part 2 uses the
`hurray` package that `pip install ./python` installed (PYTHONPATH points at
it), which finds the same library through HURRAY_LIBRARY, and hands a buffer
to numpy and a numpy array back, zero-copy.
"""
import ctypes
import gc
import os
import sys


def fail(what):
    print("python consumer: FAILED: " + what)
    sys.exit(1)


def bare_ctypes(path):
    lib = ctypes.CDLL(path)
    lib.hurray_version_string.restype = ctypes.c_char_p
    lib.hurray_rule_id.restype = ctypes.c_char_p
    lib.hurray_rule_id.argtypes = [ctypes.c_uint32]
    lib.hurray_table_validate.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p,
                                          ctypes.c_void_p]

    class Error(ctypes.Structure):
        _fields_ = [("status", ctypes.c_int32), ("rule", ctypes.c_uint32),
                    ("severity", ctypes.c_int32), ("reserved0", ctypes.c_int32),
                    ("buffer_index", ctypes.c_int64), ("byte_offset", ctypes.c_int64),
                    ("rule_id", ctypes.c_char * 32), ("message", ctypes.c_char * 256)]

    print("python consumer: dlopen %s: libhurray %s"
          % (path, lib.hurray_version_string().decode()))
    # 1 MiB of CUDA memory, page-aligned: valid. Then with reserved byte 0x01.
    good = (1 << 20).to_bytes(8, "little") + (4096).to_bytes(4, "little") + bytes([1, 0, 0, 0])
    err = Error()
    if lib.hurray_table_validate(good, 16, None, ctypes.byref(err)) != 0:
        fail("a valid handle was refused: " + err.message.decode())
    bad = good[:15] + b"\x01"
    if lib.hurray_table_validate(bad, 16, None, ctypes.byref(err)) != 3:  # HURRAY_E_RESERVED
        fail("a handle with reserved byte 0x01 was accepted")
    if err.rule_id != b"BP-RESERVED" or lib.hurray_rule_id(err.rule) != b"BP-RESERVED":
        fail("the refusal does not name BP-RESERVED")
    print("python consumer: bare ctypes: " + err.message.decode())


def package(path):
    os.environ["HURRAY_LIBRARY"] = path
    import numpy as np
    import hurray

    if os.path.realpath(hurray.library_path) != os.path.realpath(path):
        fail("the package loaded %s, not %s" % (hurray.library_path, path))
    site = os.environ.get("HURRAY_CONSUMER_SITE")
    if site and not os.path.realpath(hurray.__file__).startswith(os.path.realpath(site) + os.sep):
        fail("hurray imported from %s, not the pip-installed copy in %s" % (hurray.__file__, site))
    buf = hurray.Buffer.alloc(4096)
    a = np.from_dlpack(buf.tensor("float32", (32, 32)))
    if a.ctypes.data != buf.address or a.shape != (32, 32):
        fail("numpy did not get a zero-copy view")
    buf.close()
    del a
    gc.collect()
    owner = np.zeros(64 + 16, dtype=np.float64)
    off = (-owner.ctypes.data % 64) // 8
    x = owner[off:off + 64]
    x[:] = np.arange(64)
    h = hurray.from_dlpack(x)
    if h.address != x.ctypes.data or h.nbytes != 512:
        fail("the numpy array was not handed over zero-copy")
    h.check()
    h.release()
    print("python consumer: package %s from %s: numpy round trips OK"
          % (hurray.version(), os.path.dirname(hurray.__file__)))


if __name__ == "__main__":
    bare_ctypes(sys.argv[1])
    package(sys.argv[1])
    print("python consumer: OK")
