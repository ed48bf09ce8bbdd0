"""hurray against the real frameworks (issue 22): Debian's numpy 1.24 and
PyTorch 1.13 (CPU), both directions, every dtype they share, offsets,
strides, 0-d and empty shapes, release counts seen by the C producer
(py_helper.c); the array API's stream/copy/device rules with a fake device
producer; dtypes, lifetime, range checks and host views."""
import ctypes
import gc
import os
import unittest

import numpy as np
import torch

import hurray
from hurray import _capsules, _lib

helper = ctypes.CDLL(os.environ["HURRAY_TEST_HELPER"])
helper.helper_make_buffer.restype = ctypes.c_void_p
helper.helper_make_buffer.argtypes = [ctypes.c_uint64]
helper.helper_free_count.restype = ctypes.c_int

TORCH_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64",
                "complex64", "complex128"]  # shared with numpy
NUMPY_ONLY = ["uint16", "uint32", "uint64"]
TORCH_ONLY = ["bfloat16"]


def c_buffer(n):
    return hurray.Buffer.adopt(helper.helper_make_buffer(n))


def frees():
    gc.collect()
    return helper.helper_free_count()


def pattern(buf):
    """Bytes (i * 7 + 3) mod 256 (py_helper.c's pattern) as uint8."""
    return (np.arange(buf.nbytes, dtype=np.uint64) * 7 + 3).astype(np.uint8)


class TorchTakesHurrayBuffers(unittest.TestCase):
    def test_every_shared_dtype_zero_copy_and_released_once(self):
        for name in TORCH_DTYPES + TORCH_ONLY:
            with self.subTest(dtype=name):
                before = frees()
                buf = c_buffer(4096)
                t = torch.from_dlpack(buf.tensor(name, (4, 8)))
                self.assertEqual(str(t.dtype), "torch." + name)
                self.assertEqual(t.data_ptr(), buf.address)
                self.assertEqual(tuple(t.shape), (4, 8))
                raw = t.reshape(-1).view(torch.uint8).numpy()
                np.testing.assert_array_equal(raw, pattern(buf)[:raw.size])
                buf.close()
                self.assertEqual(frees(), before)  # torch holds it
                del t, raw
                self.assertEqual(frees(), before + 1)

    def test_byte_offset_reads_the_right_bytes(self):
        buf = c_buffer(4096)
        t = torch.from_dlpack(buf.tensor("uint8", (4,), byte_offset=64))
        np.testing.assert_array_equal(t.numpy(), pattern(buf)[64:68])  # not bytes 0..3
        self.assertEqual(t.data_ptr(), buf.address + 64)
        f = torch.from_dlpack(buf.tensor(torch.float32, (2, 3), byte_offset=128))
        np.testing.assert_array_equal(f.numpy(), buf.numpy("float32")[32:38].reshape(2, 3))

    def test_strides_0d_and_empty(self):
        buf = c_buffer(4096)
        t = torch.from_dlpack(buf.tensor("int32", (8, 4), strides=(16, 2)))
        self.assertEqual(t.stride(), (16, 2))
        words = buf.numpy("int32")
        np.testing.assert_array_equal(t.numpy(), words[np.arange(8)[:, None] * 16 + np.arange(4) * 2])
        # (torch 1.13 aborts the process on negative DLPack strides: numpy takes them.)
        rev = np.from_dlpack(buf.tensor("int16", (4,), strides=(-1,), byte_offset=6))
        np.testing.assert_array_equal(rev, buf.numpy("int16")[3::-1])
        scalar = torch.from_dlpack(buf.tensor("float64", ()))
        self.assertEqual(scalar.dim(), 0)
        self.assertEqual(float(scalar), float(buf.numpy("float64")[0]))
        for shape in ((0,), (3, 0)):
            e = torch.from_dlpack(buf.tensor("float32", shape))
            self.assertEqual(tuple(e.shape), shape)

    def test_torch_writes_are_seen_by_numpy(self):
        buf = c_buffer(256)
        t = torch.from_dlpack(buf.tensor(torch.int64))
        t[3] = -42
        self.assertEqual(int(buf.numpy("int64")[3]), -42)


class NumpyTakesHurrayBuffers(unittest.TestCase):
    def test_every_numpy_dtype_offsets_0d_and_empty(self):
        for name in TORCH_DTYPES + NUMPY_ONLY:
            with self.subTest(dtype=name):
                before = frees()
                buf = c_buffer(4096)
                a = np.from_dlpack(buf.tensor(name, (16,), byte_offset=64))
                self.assertEqual(a.dtype, np.dtype(name))
                self.assertEqual(a.ctypes.data, buf.address + 64)
                np.testing.assert_array_equal(a.view(np.uint8), pattern(buf)[64:64 + a.nbytes])
                s = np.from_dlpack(buf.tensor(name, ()))
                self.assertEqual(s.shape, ())
                e = np.from_dlpack(buf.tensor(name, (2, 0, 3)))
                self.assertEqual(e.shape, (2, 0, 3))
                del buf, a, s, e
                self.assertEqual(frees(), before + 1)


class HurrayTakesTorchTensors(unittest.TestCase):
    def test_every_dtype_keeps_its_layout_and_hands_on_to_numpy(self):
        for name in TORCH_DTYPES:
            with self.subTest(dtype=name):
                t = (torch.arange(48) % 100).to(getattr(torch, name)).reshape(6, 8)
                h = hurray.from_dlpack(t)
                self.assertEqual(h.address, t.data_ptr())
                self.assertEqual(h.shape, (6, 8))
                self.assertEqual(h.nbytes, t.numel() * t.element_size())
                self.assertEqual(h.handle.sync_mode, hurray.SYNC_PRODUCER_SYNCED)
                a = np.from_dlpack(h)  # torch -> hurray -> numpy, not restated
                self.assertTrue(h.released)
                self.assertEqual(h.address, 0)
                np.testing.assert_array_equal(a, t.numpy())
                self.assertEqual(a.ctypes.data, t.data_ptr())

    def test_a_transposed_view_keeps_strides_and_offset(self):
        base = torch.arange(64 * 16, dtype=torch.float32).reshape(64, 16)
        view = base.t()[:, 16:]  # offset 16 floats = 64 bytes, strides (1, 16)
        h = hurray.from_dlpack(view)
        self.assertEqual(h.shape, (16, 48))
        self.assertEqual(h.strides, (1, 16))
        np.testing.assert_array_equal(h.numpy(), view.numpy())
        back = torch.from_dlpack(h)
        self.assertTrue(torch.equal(back, view))

    def test_0d_and_empty(self):
        h = hurray.from_dlpack(torch.tensor(2.5, dtype=torch.float64))
        self.assertEqual(h.shape, ())
        self.assertEqual(float(np.from_dlpack(h)), 2.5)
        e = hurray.from_dlpack(torch.empty((0, 4)))
        self.assertEqual(e.nbytes, 0)
        self.assertEqual(np.from_dlpack(e).shape, (0, 4))

    def test_release_reaches_the_c_producer_once(self):
        before = frees()
        buf = c_buffer(4096)
        t = torch.from_dlpack(buf.tensor("float32"))
        h = hurray.from_dlpack(t)  # torch's tensor of our buffer, handed back to hurray
        del t, buf
        self.assertEqual(frees(), before)
        h.release()
        self.assertEqual(frees(), before + 1)
        with self.assertRaises(hurray.HurrayError):
            h.release()
        self.assertEqual(frees(), before + 1)

    def test_a_misaligned_view_is_refused_and_left_to_torch(self):
        t = torch.zeros(1024, dtype=torch.float32)[1:]
        with self.assertRaises(hurray.DLPackError) as cm:
            hurray.from_dlpack(t)
        self.assertEqual(cm.exception.rule_id, "BP-ALIGN-MIN")
        self.assertIsInstance(cm.exception, BufferError)


class DTypes(unittest.TestCase):
    def test_what_dlpack_cannot_describe_is_refused(self):
        buf = c_buffer(4096)
        for dt in (np.dtype(">f4"), np.dtype(">i8"), np.longdouble, np.clongdouble, "O", "U4",
                   "M8[s]", torch.qint8):
            with self.subTest(dtype=str(dt)):
                with self.assertRaises(hurray.DTypeError):
                    buf.tensor(dt)
        self.assertTrue(issubclass(hurray.DTypeError, ValueError))

    def test_numpy_codes_dtypes_and_torch_dtypes(self):
        buf = c_buffer(4096)
        for dt, want in (("f", "float32"), ("d", "float64"), ("i", "int32"), ("B", "uint8"),
                         ("e", "float16"), ("F", "complex64"), (np.int16, "int16"),
                         (np.dtype("<u4"), "uint32"), (torch.float32, "float32"),
                         (torch.bfloat16, "bfloat16"), (torch.half, "float16"),
                         (torch.cdouble, "complex128"), ("bfloat16", "bfloat16")):
            with self.subTest(dtype=str(dt)):
                self.assertEqual(hurray._dtypes.describe(buf.tensor(dt).dtype), want)


class FakeCuda:
    """A DLPack producer on kDLCUDA (no GPU here): records what __dlpack__
    was asked, and hands out a hurray CUDA buffer's capsule."""

    def __init__(self):
        self.freed = []
        self.buf = hurray.Buffer.wrap(0x7F0000000000, 1 << 16, alignment=4096,
                                      device_tag=hurray.DEVICE_CUDA, on_free=self.freed.append)
        self.calls = []

    def __dlpack_device__(self):
        return (hurray.DL_CUDA, 0)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        self.calls.append({"stream": stream, "max_version": max_version})
        return self.buf.__dlpack__(stream=stream, max_version=max_version)


class ArrayAPIStreams(unittest.TestCase):
    def test_a_device_import_needs_a_stream_and_is_never_producer_synced(self):
        fake = FakeCuda()
        for bad in (None, -1):
            with self.assertRaises(BufferError) as cm:
                hurray.from_dlpack(fake, stream=bad)
            self.assertEqual(cm.exception.rule_id, "BP-SYNC-WAIT")
        self.assertEqual(fake.calls, [])  # refused before the producer was asked
        h = hurray.from_dlpack(fake, stream=7)
        self.assertEqual(fake.calls, [{"stream": 7, "max_version": (1, 3)}])
        self.assertEqual(h.handle.sync_mode, hurray.SYNC_CONSUMER_STREAM)
        self.assertEqual(h.stream, 7)
        self.assertEqual(h.__dlpack_device__(), (hurray.DL_CUDA, 0))
        h.release()
        del fake.buf
        gc.collect()
        self.assertEqual(fake.freed, [0x7F0000000000])

    def test_a_cpu_import_takes_no_stream(self):
        with self.assertRaises(BufferError):
            hurray.from_dlpack(hurray.aligned_empty(16), stream=1)

    def test_export_streams(self):
        fake = FakeCuda()
        with self.assertRaises(BufferError):
            fake.buf.__dlpack__()  # a device takes the consumer's stream
        cap = fake.buf.__dlpack__(stream=3, max_version=(1, 1))
        self.assertTrue(_capsules.unconsumed(cap))
        with self.assertRaises(BufferError):
            c_buffer(64).__dlpack__(stream=0)  # the CPU takes None only
        # Asked for a CPU copy, the consumer's stream is the CPU's: None. (No
        # backend here copies the fake device's memory: the copy is refused
        # by the backend, after the stream rules let it through.)
        with self.assertRaises(BufferError) as cm:
            fake.buf.__dlpack__(dl_device=(1, 0), stream=3)
        self.assertIn("stream", str(cm.exception))
        with self.assertRaises(BufferError) as cm:
            fake.buf.__dlpack__(dl_device=(1, 0), copy=False)
        self.assertEqual(cm.exception.rule_id, "BP-ZC-NOCOPY")
        with self.assertRaises(hurray.HurrayError) as cm:
            fake.buf.__dlpack__(dl_device=(1, 0))
        self.assertNotIn("stream", str(cm.exception))


def _versioned(cap):
    return ctypes.cast(_capsules.GetPointer(cap, _capsules.VERSIONED),
                       ctypes.POINTER(_lib.DLManagedTensorVersioned)).contents


class ArrayAPICopiesAndVersions(unittest.TestCase):
    def test_dlpack_1_1_is_declared(self):
        cap = c_buffer(64).__dlpack__(max_version=(1, 1))
        v = _versioned(cap)
        self.assertEqual((v.version.major, v.version.minor), (1, 3))
        self.assertEqual(v.flags & hurray.DLPACK_FLAG_IS_COPIED, 0)
        self.assertIn('"dltensor"', repr(c_buffer(64).__dlpack__(max_version=(0, 8))))

    def test_copy_true_copies_and_says_so(self):
        before = frees()
        buf = c_buffer(1024)
        cap = buf.tensor("uint8", (16,), byte_offset=64).__dlpack__(copy=True, max_version=(1, 1))
        v = _versioned(cap)
        self.assertNotEqual(v.flags & hurray.DLPACK_FLAG_IS_COPIED, 0)
        self.assertNotEqual(v.dl_tensor.data, buf.address + 64)
        h = hurray.from_dlpack(cap)
        copy = h.numpy()
        np.testing.assert_array_equal(copy, pattern(buf)[64:80])
        copy[:] = 0  # the original is untouched
        np.testing.assert_array_equal(buf.numpy()[64:80], pattern(buf)[64:80])
        del h, copy, cap, v, buf
        self.assertEqual(frees(), before + 1)
        legacy = np.from_dlpack(hurray.Tensor(c_buffer(64)))  # numpy 1.x: no kwargs
        self.assertEqual(legacy.shape, (64,))

    def test_from_dlpack_asks_for_copies_and_devices(self):
        buf = c_buffer(256)
        h = hurray.from_dlpack(buf, copy=True)  # a 2023.12 producer: it copies
        self.assertNotEqual(h.address, buf.address)
        np.testing.assert_array_equal(h.numpy(), pattern(buf))
        h2 = hurray.from_dlpack(buf, device=(1, 0), copy=False)
        self.assertEqual(h2.address, buf.address)
        a = hurray.aligned_empty(64, "float32")
        # numpy 1.24's __dlpack__ cannot copy: on the CPU hurray copies (issue 34).
        h3 = hurray.from_dlpack(a, copy=True)
        self.assertNotEqual(h3.address, a.ctypes.data)
        self.assertEqual(h3.address % 64, 0)
        h3.release()
        self.assertEqual(hurray.from_dlpack(a, device=(1, 0)).address, a.ctypes.data)

    def test_padded_sub_byte_tensors_are_taken(self):
        mem = hurray.aligned_empty(64, "uint8")
        deleted = []
        deleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(_lib.DLManagedTensorVersioned))(
            lambda p: deleted.append(1))
        shape = (ctypes.c_int64 * 1)(10)
        t = _lib.DLManagedTensorVersioned()
        t.version = _lib.DLPackVersion(1, 1)
        t.deleter = deleter
        t.flags = hurray.DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED
        t.dl_tensor.data = mem.ctypes.data
        t.dl_tensor.device = _lib.DLDevice(hurray.DL_CPU, 0)
        t.dl_tensor.ndim = 1
        t.dl_tensor.dtype = _lib.DLDataType(hurray.DL_INT, 4, 1)
        t.dl_tensor.shape = shape
        cap = _capsules.New(ctypes.addressof(t), _capsules.VERSIONED, None)
        h = hurray.from_dlpack(cap)
        self.assertEqual(h.nbytes, 10)  # one byte per int4 element
        h.release()
        self.assertEqual(deleted, [1])


class Lifetime(unittest.TestCase):
    def test_a_tensor_keeps_its_buffer(self):
        before = frees()
        buf = c_buffer(512)
        t = buf.tensor("float32")
        buf.close()
        self.assertEqual(frees(), before)
        a = np.from_dlpack(t)
        self.assertEqual(a.shape, (128,))
        with self.assertRaises(BufferError):
            buf.tensor()  # closed: a BufferError, not a bare HurrayError
        self.assertEqual(buf.address, 0)
        del t, a
        self.assertEqual(frees(), before + 1)

    def test_numeric_fields_are_range_checked(self):
        for bad in (dict(byte_size=2 ** 64 + 5, alignment=64), dict(byte_size=-1, alignment=64),
                    dict(byte_size=1, alignment=2 ** 32), dict(byte_size=1, alignment=64,
                                                              device_tag=256)):
            with self.subTest(**{k: str(v) for k, v in bad.items()}):
                with self.assertRaises(ValueError):
                    hurray.Handle(**bad)
        with self.assertRaises(TypeError):
            hurray.Handle(1.5, 64)
        buf = c_buffer(64)
        for kw in (dict(shape=(-1,)), dict(byte_offset=2 ** 64), dict(shape=(2,), strides=(2 ** 63,)),
                   dict(shape=(1,) * 65)):
            with self.subTest(**{k: str(v)[:20] for k, v in kw.items()}):
                with self.assertRaises(ValueError):
                    buf.tensor("uint8", **kw)
        with self.assertRaises(ValueError):
            hurray.Buffer.wrap(-64, 64)
        with self.assertRaises(ValueError):
            hurray.Buffer.alloc(64, device_ordinal=2 ** 31)

    def test_a_released_handoff_has_address_0(self):
        h = c_buffer(64).export()
        self.assertNotEqual(h.address, 0)
        h.release()
        self.assertEqual(h.address, 0)
        with self.assertRaises(BufferError):
            h.__dlpack__()


class HostViews(unittest.TestCase):
    def test_writable_numpy_and_memoryview_on_numpy_1(self):
        before = frees()
        buf = c_buffer(256)
        a = buf.numpy("float32", (8, 8))
        self.assertTrue(a.flags.writeable)
        a[0, 0] = 1.5
        mv = buf.memoryview()
        self.assertFalse(mv.readonly)
        mv[4] = 7
        as_array = np.asarray(buf)  # not a 0-d object array
        self.assertEqual((as_array.dtype, as_array.shape), (np.uint8, (256,)))
        self.assertEqual(int(as_array[4]), 7)
        self.assertEqual(float(np.from_dlpack(buf.tensor("float32"))[0]), 1.5)
        buf.close()
        del as_array
        self.assertEqual(frees(), before)  # the views keep it
        del a
        self.assertEqual(frees(), before)
        del mv
        self.assertEqual(frees(), before + 1)

    def test_read_only_and_device_buffers(self):
        buf = c_buffer(64)
        buf.read_only = True
        self.assertFalse(buf.numpy().flags.writeable)
        self.assertTrue(buf.memoryview().readonly)
        with self.assertRaises(BufferError):
            FakeCuda().buf.numpy()


if __name__ == "__main__":
    unittest.main()
