"""hurray.net from Python (issue 22, point 6): a server and a client over
UCX on 127.0.0.1, PUT (blocking, and by ticket), GET of a registered
buffer, refusals; the client runs in a thread while the test polls the
server (every loop bounded)."""
import threading
import unittest

import numpy as np

import hurray
import hurray.net as net


def drive(server, worker, polls=400):
    """Poll the server while `worker` runs in a thread; the PUTs that landed."""
    out, landed = {}, []

    def run():
        try:
            out["result"] = worker()
        except BaseException as e:  # reported by the test
            out["error"] = e
    t = threading.Thread(target=run)
    t.start()
    for _ in range(polls):
        r = server.poll(25)
        if r is not None:
            landed.append(r)
        if not t.is_alive():
            break
    t.join(30)
    while True:  # what landed as the worker finished
        r = server.poll(0)
        if r is None:
            break
        landed.append(r)
    if "error" in out:
        raise out["error"]
    return out.get("result"), landed


def filled(n, seed):
    buf = hurray.Buffer.alloc(n)
    buf.numpy()[:] = (np.arange(n) * seed) % 251
    return buf


class PutAndGet(unittest.TestCase):
    def setUp(self):
        self.server = net.Server("127.0.0.1")
        self.client = None

    def tearDown(self):
        if self.client:
            self.client.close()
        self.server.close()

    def connect(self):
        self.client = net.Client("127.0.0.1", self.server.port, timeout_ms=20000)
        return self.client

    def test_put_lands_on_the_server_byte_for_byte(self):
        src = filled(1 << 16, 3)
        _, landed = drive(self.server, lambda: self.connect().put(src, buffer_id=7))
        self.assertEqual([bid for bid, _ in landed], [7])
        np.testing.assert_array_equal(landed[0][1].numpy(), src.numpy())
        self.assertEqual(self.server.stats()["puts_landed"], 1)

    def test_a_handoff_and_a_ticket(self):
        a, b = filled(4096, 5), filled(8192, 7)

        def work():
            c = self.connect()
            c.put(a.export(), buffer_id=1)
            t = c.put_start(b, buffer_id=2)
            for _ in range(2000):
                if c.put_test(t):
                    break
            c.put_wait(t)
        _, landed = drive(self.server, work)
        got = dict(landed)
        np.testing.assert_array_equal(got[1].numpy(), a.numpy())
        np.testing.assert_array_equal(got[2].numpy(), b.numpy())

    def test_get_a_registered_buffer(self):
        src = filled(12345, 11)
        self.server.register(9, src)
        got, _ = drive(self.server, lambda: self.connect().get(9))
        np.testing.assert_array_equal(got.numpy(), src.numpy())
        self.assertNotEqual(got.address, src.address)
        self.server.unregister(9)
        with self.assertRaises(hurray.HurrayError):
            drive(self.server, lambda: self.client.get(9))  # no longer offered

    def test_refusals(self):
        with self.assertRaises(ValueError):
            net.Server("127.0.0.1", transport="in-process")
        with self.assertRaises(ValueError):
            net.Client("127.0.0.1", 70000)
        with self.assertRaises(hurray.HurrayError):
            self.server.unregister(12345)  # never registered


class SharedKey(unittest.TestCase):
    """NET-AUTH from Python: a keyed server serves the client that holds its
    key and refuses one without it or with another, naming the rule."""
    KEY = "a key of at least sixteen bytes"

    def setUp(self):
        self.server = net.Server("127.0.0.1", key=self.KEY, allow="127.0.0.1")

    def tearDown(self):
        self.server.close()

    def test_the_key_admits_a_client(self):
        src = filled(4096, 13)

        def work():
            with net.Client("127.0.0.1", self.server.port, timeout_ms=20000,
                            key=self.KEY.encode()) as c:
                c.put(src, buffer_id=3)
        _, landed = drive(self.server, work)
        self.assertEqual([bid for bid, _ in landed], [3])
        np.testing.assert_array_equal(landed[0][1].numpy(), src.numpy())

    def test_no_key_or_another_key_is_refused(self):
        for key in (None, "another key of sixteen bytes or more"):
            with self.assertRaises(hurray.HurrayError) as cm:
                drive(self.server, lambda: net.Client("127.0.0.1", self.server.port,
                                                      timeout_ms=20000, key=key))
            self.assertIn("NET-AUTH", str(cm.exception))
        self.assertEqual(self.server.stats()["puts_landed"], 0)

    def test_bad_arguments(self):
        with self.assertRaises(ValueError):
            net.Client("127.0.0.1", self.server.port, key=b"nul\0inside-the-key")
        with self.assertRaises(hurray.HurrayError):  # shorter than 16 bytes
            net.Server("127.0.0.1", key="short")


class OneThread(unittest.TestCase):
    """Issue 34: the server serves from its own progress thread, so a client
    in the caller's thread is answered (no poll() needed meanwhile)."""

    def test_put_and_get_from_one_thread(self):
        with net.Server("127.0.0.1") as server:
            with net.Client("127.0.0.1", server.port, timeout_ms=20000) as client:
                src = filled(1 << 14, 13)
                client.put(src, buffer_id=3)
                bid, landed = server.poll(10000)
                self.assertEqual(bid, 3)
                np.testing.assert_array_equal(landed.numpy(), src.numpy())
                server.register(4, src)
                np.testing.assert_array_equal(client.get(4).numpy(), src.numpy())
                self.assertEqual(server.stats()["puts_landed"], 1)
                self.assertIsNone(server.poll(0))

    def test_a_put_nobody_polls_for_is_freed_at_close(self):
        server = net.Server("127.0.0.1")
        client = net.Client("127.0.0.1", server.port, timeout_ms=20000)
        client.put(filled(4096, 3), buffer_id=1)
        client.close()
        server.close()  # its thread stops first; the landed buffer is released
        with self.assertRaises(hurray.HurrayError):
            server.poll(0)

    def test_without_the_thread_poll_drives_it(self):
        server = net.Server("127.0.0.1", progress_thread=False)
        try:
            src = filled(4096, 5)
            _, landed = drive(server, lambda: net.Client(
                "127.0.0.1", server.port, timeout_ms=20000).put(src, buffer_id=2))
            self.assertEqual([bid for bid, _ in landed], [2])
        finally:
            server.close()


if __name__ == "__main__":
    unittest.main()
