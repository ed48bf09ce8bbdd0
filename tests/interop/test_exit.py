"""Interpreter exit with hurray objects still alive (issue 22, point 1).

Each case is a child interpreter (/usr/bin/python3, as CTest runs this
file) that leaves something alive at exit: a torch or numpy view of a
buffer, an unconsumed capsule, a handoff, a buffer with on_free. The child
must exit 0 with nothing on stderr, and what can be released must be
released exactly once: the frees are counted from outside, as bytes the C
producer (py_helper.c, 'C') or the on_free callable ('F') writes to a pipe
the parent reads after the child is gone.
"""
import os
import subprocess
import sys
import textwrap
import unittest

PRELUDE = """
import ctypes, os, sys
import numpy as np
import hurray
FD = int(os.environ["HURRAY_FREE_FD"])
helper = ctypes.CDLL(os.environ["HURRAY_TEST_HELPER"])
helper.helper_make_buffer.restype = ctypes.c_void_p
helper.helper_make_buffer.argtypes = [ctypes.c_uint64]
helper.helper_set_free_fd(FD)
def c_buffer(n):
    return hurray.Buffer.adopt(helper.helper_make_buffer(n))
def on_free(addr, _w=os.write, _fd=FD):
    _w(_fd, b"F")
"""


def run_child(body, timeout=120):
    """Run PRELUDE + body in a child interpreter; (returncode, stderr, the
    bytes written to the free pipe)."""
    r, w = os.pipe()
    env = dict(os.environ, HURRAY_FREE_FD=str(w))
    try:
        p = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body)],
                           env=env, pass_fds=(w,), capture_output=True, text=True,
                           timeout=timeout)
    finally:
        os.close(w)
    with os.fdopen(r, "rb") as f:
        frees = f.read()
    return p.returncode, p.stderr + p.stdout, frees


class ExitWithThingsAlive(unittest.TestCase):
    def expect(self, body, frees, torch=False):
        if torch:
            body = "import torch\n" + textwrap.dedent(body)
        rc, out, got = run_child(body)
        self.assertEqual(rc, 0, "child exited %d:\n%s" % (rc, out))
        self.assertEqual(out, "", "the child printed at exit")
        self.assertEqual(sorted(got.decode()), sorted(frees),
                         "frees seen from outside: %r, want %r" % (got, frees))

    def test_the_issue_reproducer_torch_view_of_a_wrapped_buffer_with_on_free(self):
        self.expect("""
            raw = ctypes.create_string_buffer(4096 + 64); addr = (ctypes.addressof(raw) + 63) & ~63
            buf = hurray.Buffer.wrap(addr, 4096, keep=raw, on_free=on_free)
            t = torch.from_dlpack(buf.tensor("float32")); buf.close()
        """, "F", torch=True)

    def test_torch_views_of_a_c_buffer(self):
        self.expect("""
            buf = c_buffer(4096)
            t = torch.from_dlpack(buf.tensor("float32", (32, 32)))
            u = torch.from_dlpack(buf.tensor("uint8", (16,), byte_offset=64))
            v = t[1:3]
        """, "C", torch=True)

    def test_numpy_views_and_host_views(self):
        self.expect("""
            buf = c_buffer(1024)
            a = np.from_dlpack(buf)
            w = buf.numpy("float64")
            m = buf.memoryview()
            del buf
        """, "C")

    def test_unconsumed_capsules_of_both_kinds(self):
        self.expect("""
            buf = c_buffer(256)
            legacy = buf.__dlpack__()
            versioned = buf.__dlpack__(max_version=(1, 1))
            del buf
        """, "C")

    def test_a_capsule_numpy_refused_and_one_a_dict_holds(self):
        self.expect("""
            cuda = hurray.Buffer.wrap(0x7F0000000000, 1 << 20, alignment=4096,
                                      device_tag=hurray.DEVICE_CUDA, on_free=on_free)
            try:
                np.from_dlpack(cuda)
            except BufferError:
                pass
            keep = {"cap": cuda.__dlpack__(stream=5)}
            del cuda
        """, "F")

    def test_a_handoff_of_a_torch_tensor(self):
        self.expect("""
            buf = c_buffer(4096)
            t = torch.from_dlpack(buf.tensor("int32"))
            h = hurray.from_dlpack(t)
            del buf, t
        """, "C", torch=True)

    def test_a_handoff_of_a_numpy_array_exits_cleanly(self):
        # Released by the handoff at exit, but numpy's own deleter leaks the
        # array on purpose once the interpreter is finalizing (it checks
        # Py_IsInitialized()), so the memory is never freed: no 'C'.
        self.expect("""
            buf = c_buffer(4096)
            a = buf.numpy("float64")  # writable (numpy 1.x exports no read-only array)
            h = hurray.from_dlpack(a)
            del buf, a
        """, "")

    def test_a_handoff_handed_on_to_torch(self):
        self.expect("""
            buf = c_buffer(4096)
            h = buf.export()
            t = torch.from_dlpack(h)
            del buf
        """, "C", torch=True)

    def test_buffers_with_on_free_and_no_views(self):
        self.expect("""
            raws = [ctypes.create_string_buffer(4096 + 64) for _ in range(3)]
            bufs = [hurray.Buffer.wrap((ctypes.addressof(r) + 63) & ~63, 4096, keep=r,
                                       on_free=on_free) for r in raws]
            exports = [b.export() for b in bufs[:2]]
            cycle = [bufs[2]]; cycle.append(cycle)
        """, "FFF")

    def test_an_on_free_that_raises_at_exit_is_silent(self):
        self.expect("""
            def bad(addr, _w=os.write, _fd=FD):
                _w(_fd, b"F")
                raise RuntimeError("on_free failed")
            raw = ctypes.create_string_buffer(4096 + 64)
            buf = hurray.Buffer.wrap((ctypes.addressof(raw) + 63) & ~63, 4096, keep=raw,
                                     on_free=bad)
            a = np.from_dlpack(buf)
        """, "F")

    def test_a_consumer_after_the_exit_release_is_refused_not_fed_freed_memory(self):
        self.expect("""
            import atexit
            buf = c_buffer(256)
            cap = buf.__dlpack__()
            del buf
            def late(cap=cap, _w=os.write, _fd=FD):
                try:
                    np.from_dlpack(cap)  # hurray released it at its own atexit
                except Exception:
                    _w(_fd, b"R")
            atexit.register(late)
            import importlib; importlib.reload  # hurray's atexit ran first: it was imported before
        """, "CR")


if __name__ == "__main__":
    unittest.main()
