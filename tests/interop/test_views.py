"""Views (Buffer.view, hurray_buffer_view) from Python: numpy and PyTorch take a
view through DLPack at the parent's address plus the offset, zero-copy; the
view has its own handle and keeps the parent's memory alive.

Run by CTest as the other interop modules (HURRAY_LIBRARY, PYTHONPATH=python/).
"""
import unittest

import numpy as np
import torch

import hurray

N = 65536


def filled():
    buf = hurray.Buffer.alloc(N, alignment=4096)
    buf.numpy()[:] = (np.arange(N, dtype=np.uint64) * 7 + 3).astype(np.uint8)
    return buf


class Views(unittest.TestCase):
    def test_numpy_reads_the_view_at_the_parents_address_plus_the_offset(self):
        buf = filled()
        whole = buf.numpy().copy()
        for off, length, align in [(0, 4096, 4096), (8192, 4096, 4096), (192, 640, 64),
                                   (N - 64, 64, 64)]:
            v = buf.view(off, length)
            self.assertEqual(v.nbytes, length)
            self.assertEqual(v.handle.alignment, align)
            self.assertEqual(v.address, buf.address + off)
            a = np.from_dlpack(v)
            self.assertEqual(a.ctypes.data, buf.address + off)
            self.assertTrue(np.array_equal(a, whole[off:off + length]))
            w = v.numpy()  # writable, zero-copy: the parent sees the write
            self.assertEqual(w.ctypes.data, buf.address + off)
            w[0] = 0xEE
            self.assertEqual(buf.numpy()[off], 0xEE)
            buf.numpy()[off] = whole[off]

    def test_torch_takes_a_typed_view_of_a_view(self):
        buf = filled()
        v = buf.view(4096, 8192).view(1024, 4096)  # at 5120 of buf
        self.assertEqual(v.handle.alignment, 1024)
        t = torch.from_dlpack(v.tensor("float32", (32, 32)))
        self.assertEqual(t.data_ptr(), buf.address + 5120)
        expect = buf.numpy()[5120:5120 + 4096].view(np.float32).reshape(32, 32)
        self.assertTrue(np.array_equal(t.numpy(), expect))

    def test_the_view_keeps_the_parents_memory_after_close(self):
        buf = filled()
        expect = buf.numpy()[12288:16384].copy()
        v = buf.view(12288, 4096)
        buf.close()
        self.assertTrue(np.array_equal(np.from_dlpack(v), expect))

    def test_out_of_range_and_misaligned_views_are_refused_naming_the_rule(self):
        buf = filled()
        with self.assertRaises(hurray.HurrayError) as cm:
            buf.view(N - 64, 128)
        self.assertTrue(cm.exception.message.startswith("BP-VIEW-BOUNDS"))
        with self.assertRaises(hurray.HurrayError) as cm:
            buf.view(32, 64)
        self.assertEqual(cm.exception.rule_id, "BP-ALIGN-MIN")
        self.assertEqual(buf.view(N, 0).nbytes, 0)


if __name__ == "__main__":
    unittest.main()
