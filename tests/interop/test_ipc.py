"""hurray.ipc from Python (issue 22, point 6): a producer process sends a
numpy array it allocated with libhurray, a consumer process receives it as
a numpy array on the same pages (zero-copy: what it writes, the producer
reads) and releases it; a consumer that dies without releasing; a handoff
and its view alive at the consumer's exit."""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

import numpy as np

import hurray

CONSUMER = """
import sys, hurray, numpy as np
mode = sys.argv[2]
ch = hurray.ipc.connect(sys.argv[1], hello_timeout_ms=10000)
h = ch.receive(timeout_ms=10000, dtype="int32", shape=(64, 16))
a = h.numpy()
assert a.shape == (64, 16) and a.dtype == np.int32
assert a.ctypes.data == h.address  # a view of the mapped pages
print("sum", int(a.sum()), "pid", ch.peer().pid, flush=True)
if mode == "release":
    a[0, 0] = -7  # seen by the producer: the same memory
    del a
    h.release()
    ch.close()
elif mode == "die":
    import os
    os._exit(0)  # no release: the producer reclaims it
# mode "exit": leave h, a and ch alive at interpreter exit
"""


class CrossProcess(unittest.TestCase):
    def run_pair(self, mode):
        tmp = tempfile.mkdtemp()
        path = os.path.join(tmp, "s")
        buf = hurray.Buffer.alloc(4096, alignment=4096, shareable=True)
        x = buf.numpy("int32", (64, 16))
        x[:] = np.arange(1024).reshape(64, 16)
        with hurray.ipc.listen(path) as server:
            child = subprocess.Popen([sys.executable, "-c", CONSUMER, path, mode],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                with server.accept(timeout_ms=20000) as ch:
                    peer = ch.peer()
                    self.assertEqual(peer.pid, child.pid)
                    self.assertEqual((peer.uid, peer.gid), (os.geteuid(), os.getegid()))
                    ch.send(buf)
                    stats = ch.wait_released(timeout_ms=20000)
                out, err = child.communicate(timeout=60)
            finally:
                if child.poll() is None:
                    child.kill()
                    child.wait()
        self.assertEqual(child.returncode, 0, err)
        self.assertEqual(err, "")
        self.assertIn("sum %d pid %d" % (sum(range(1024)), os.getpid()), out)
        return x, stats

    def test_zero_copy_and_released_once(self):
        x, stats = self.run_pair("release")
        self.assertEqual(int(x[0, 0]), -7)  # the consumer wrote into our pages
        self.assertEqual((stats.sent, stats.released, stats.reclaimed, stats.outstanding),
                         (1, 1, 0, 0))

    def test_a_consumer_that_dies_without_releasing(self):
        _, stats = self.run_pair("die")
        self.assertEqual((stats.sent, stats.released, stats.reclaimed), (1, 0, 1))

    def test_a_consumer_exiting_with_the_handoff_alive(self):
        _, stats = self.run_pair("exit")
        self.assertEqual(stats.outstanding, 0)
        self.assertEqual(stats.released + stats.reclaimed, 1)

    def test_refusals_name_the_rule(self):
        tmp = tempfile.mkdtemp()
        path = os.path.join(tmp, "s")
        with hurray.ipc.listen(path) as server:
            child = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
                import sys, hurray
                ch = hurray.ipc.connect(sys.argv[1])
                try:
                    ch.receive(timeout_ms=3000)
                except hurray.HurrayError as e:
                    print(e.status_name)
                """), path], stdout=subprocess.PIPE, text=True)
            with server.accept(timeout_ms=20000) as ch:
                with self.assertRaises(hurray.HurrayError) as cm:
                    ch.send(hurray.Buffer.alloc(4096))  # 64-aligned, not shareable
                self.assertEqual(cm.exception.rule_id, "BP-ALIGN-IPC")
            out, _ = child.communicate(timeout=60)
        self.assertIn("HURRAY_E_IO", out)


if __name__ == "__main__":
    unittest.main()
