"""The Python package (python/hurray) with numpy, both DLPack directions.

Run by CTest with /usr/bin/python3 (Debian's numpy 1.24), HURRAY_LIBRARY (this
build's libhurray.so.1), HURRAY_TEST_HELPER (py_helper.c: a C producer whose
frees are counted, and a C consumer) and PYTHONPATH=python/.
"""
import ctypes
import gc
import os
import sys
import threading
import unittest
import weakref

import numpy as np

import hurray

helper = ctypes.CDLL(os.environ["HURRAY_TEST_HELPER"])
helper.helper_make_buffer.restype = ctypes.c_void_p
helper.helper_make_buffer.argtypes = [ctypes.c_uint64]
helper.helper_free_count.restype = ctypes.c_int
helper.helper_consume_f64.restype = ctypes.c_double
helper.helper_consume_f64.argtypes = [ctypes.c_void_p]

PATTERN = lambda n: (np.arange(n, dtype=np.uint64) * 7 + 3).astype(np.uint8)  # noqa: E731


def c_buffer(n):
    """A buffer a C producer wrote, adopted by Python."""
    return hurray.Buffer.adopt(helper.helper_make_buffer(n))


def aligned(array, alignment=64):
    """A copy of `array` whose data starts on an `alignment` boundary (numpy's
    own allocations are 16-byte aligned; the protocol asks 64, BP-ALIGN-MIN)."""
    raw = np.empty(array.nbytes + alignment, dtype=np.uint8)
    off = (-raw.ctypes.data) % alignment
    out = raw[off:off + array.nbytes].view(array.dtype).reshape(array.shape)
    out[...] = array
    return out


class Handles(unittest.TestCase):
    def test_version_and_library(self):
        self.assertEqual(hurray.version(), "1.0.0")
        self.assertEqual(hurray.library_path, os.environ["HURRAY_LIBRARY"])

    def test_encode_decode_round_trip(self):
        h = hurray.Handle(1 << 20, 4096, hurray.DEVICE_CUDA, hurray.SYNC_EVENT,
                          hurray.MEMORY_UNIFIED)
        wire = h.encode()
        self.assertEqual(wire, bytes.fromhex("0000100000000000" "00100000" "01010200"))
        self.assertEqual(hurray.decode(wire), h)
        self.assertEqual(hurray.decode(wire).device, "CUDA")
        with self.assertRaises(hurray.HurrayError) as cm:
            hurray.decode(wire[:15])
        self.assertEqual(cm.exception.rule_id, "BP-SIZE")

    def test_validate_names_the_rule_under_the_policy(self):
        cuda = hurray.Handle(4096, 64, hurray.DEVICE_CUDA).encode()
        hurray.validate(cuda)  # in-process: fine
        with self.assertRaises(hurray.HurrayError) as cm:
            hurray.validate(cuda, transport="ipc")
        self.assertEqual(cm.exception.rule_id, "BP-ALIGN-IPC")
        self.assertEqual(cm.exception.status_name, "HURRAY_E_ALIGNMENT")
        self.assertTrue(cm.exception.message.startswith("BP-ALIGN-IPC"))

    def test_diagnose_and_inspect(self):
        table = hurray.Handle(100, 32).encode() + hurray.Handle(64, 64, hurray.DEVICE_CUDA).encode()
        diags = hurray.diagnose(table)
        rules = [d.rule_id for d in diags if d.severity == "error"]
        self.assertEqual(rules, ["BP-ALIGN-MIN", "BP-COLOC"])
        self.assertEqual(diags[1].buffer_index, 1)
        report = hurray.inspect(table)
        self.assertIn("buffer 1: 64 bytes, alignment 64, device CUDA", report)
        self.assertIn("invalid: 2 error(s)", report)
        self.assertTrue(hurray.inspect(hurray.Handle(64, 64).encode()).endswith("valid"))


class NumpyTakesHurrayBuffers(unittest.TestCase):
    def setUp(self):
        # Capsules other tests left unconsumed are released at a collection
        # (see hurray._sweep): let that happen before anything is counted.
        gc.collect()

    def test_numpy_reads_the_bytes_a_c_producer_wrote_zero_copy(self):
        buf = c_buffer(4096)
        a = np.from_dlpack(buf)
        self.assertEqual(a.dtype, np.uint8)
        self.assertEqual(a.shape, (4096,))
        self.assertEqual(a.ctypes.data, buf.address)  # a view, not a copy
        np.testing.assert_array_equal(a, PATTERN(4096))

    def test_typed_strided_views(self):
        buf = c_buffer(4096)
        words = np.from_dlpack(buf.tensor("uint32", (32, 32)))
        self.assertEqual(words.shape, (32, 32))
        np.testing.assert_array_equal(words.reshape(-1).view(np.uint8), PATTERN(4096))
        cols = np.from_dlpack(buf.tensor(np.uint8, (64, 2), strides=(64, 32), byte_offset=1))
        full = PATTERN(4096).reshape(64, 64)
        np.testing.assert_array_equal(cols, full[:, 1::32][:, :2])
        self.assertEqual(cols.ctypes.data, buf.address + 1)

    def test_released_exactly_once_when_numpy_drops_the_array(self):
        before = helper.helper_free_count()
        buf = c_buffer(1024)
        a = np.from_dlpack(buf)
        view = a[100:200]
        del buf, a
        gc.collect()
        self.assertEqual(helper.helper_free_count(), before)  # the view still holds it
        self.assertEqual(int(view[0]), (100 * 7 + 3) & 0xFF)
        del view
        gc.collect()
        self.assertEqual(helper.helper_free_count(), before + 1)

    def test_every_export_holds_its_own_reference(self):
        before = helper.helper_free_count()
        buf = c_buffer(256)
        arrays = [np.from_dlpack(buf) for _ in range(3)]
        buf.close()
        for i in range(3):
            self.assertEqual(helper.helper_free_count(), before)
            arrays.pop()
            gc.collect()
        self.assertEqual(helper.helper_free_count(), before + 1)

    def test_an_unconsumed_capsule_releases_its_export(self):
        before = helper.helper_free_count()
        buf = c_buffer(256)
        for max_version in (None, (1, 0)):
            cap = buf.__dlpack__(max_version=max_version)
            del cap
        buf.close()
        gc.collect()
        self.assertEqual(helper.helper_free_count(), before + 1)

    def test_dlpack_device_and_the_versioned_capsule(self):
        buf = c_buffer(128)
        self.assertEqual(buf.__dlpack_device__(), (1, 0))  # kDLCPU
        cap = buf.__dlpack__(max_version=(1, 2))
        self.assertIn('"dltensor_versioned"', repr(cap))
        legacy = buf.__dlpack__()
        self.assertIn('"dltensor"', repr(legacy))
        before = helper.helper_free_count()
        del cap, legacy, buf
        gc.collect()
        self.assertEqual(helper.helper_free_count(), before + 1)

    def test_a_handle_numpy_cannot_take_is_refused_clearly(self):
        before = helper.helper_free_count()
        ro = c_buffer(64)
        ro.read_only = True
        with self.assertRaises(BufferError) as cm:
            np.from_dlpack(ro)  # numpy 1.x asks for the legacy struct: no READ_ONLY flag
        self.assertIn("BP-ZC-NOMUT", str(cm.exception))
        self.assertIn("read-only", str(cm.exception))
        # The versioned struct carries the flag.
        h = hurray.from_dlpack(ro.tensor().__dlpack__(max_version=(1, 0)))
        self.assertTrue(h.read_only)
        h.release()
        ro.close()
        gc.collect()
        self.assertEqual(helper.helper_free_count(), before + 1)

    def test_a_device_numpy_does_not_support_is_refused_and_released(self):
        freed = []
        cuda = hurray.Buffer.wrap(0x7F0000000000, 1 << 20, alignment=4096,
                                  device_tag=hurray.DEVICE_CUDA, on_free=freed.append)
        self.assertEqual(cuda.__dlpack_device__(), (2, 0))  # kDLCUDA
        # numpy asks with stream=None, which the array API allows on the CPU only.
        with self.assertRaises(BufferError) as cm:
            np.from_dlpack(cuda)
        self.assertIn("stream", str(cm.exception))
        # Asked right (a stream), the capsule is made; numpy still refuses the device.
        with self.assertRaises(RuntimeError) as cm:
            np.from_dlpack(_StreamedProducer(cuda, 7))
        self.assertIn("Unsupported device", str(cm.exception))
        cuda.close()
        gc.collect()
        self.assertEqual(freed, [0x7F0000000000])  # the refused export was released, once

    def test_a_private_device_has_no_dlpack_type(self):
        ctx = hurray.Context(private_tags=[0xF0])
        priv = hurray.Buffer.wrap(0x1000, 4096, device_tag=0xF0, opaque=True, ctx=ctx)
        with self.assertRaises(hurray.DLPackError) as cm:
            np.from_dlpack(priv)
        self.assertEqual(cm.exception.rule_id, "BP-DEV-PRIVATE")
        with self.assertRaises(BufferError):
            priv.__dlpack_device__()
        priv.close()
        ctx.close()

    def test_other_devices_are_refused_and_copy_false_never_copies(self):
        buf = c_buffer(64)
        with self.assertRaises(BufferError):
            buf.__dlpack__(dl_device=(2, 0))
        with self.assertRaises(BufferError):
            buf.__dlpack__(stream=1)  # the CPU takes stream=None only
        with self.assertRaises(BufferError):
            buf.__dlpack__(max_version="1.0")
        cap = buf.__dlpack__(dl_device=(1, 0), copy=False, max_version=(1, 1))
        h = hurray.from_dlpack(cap)
        self.assertEqual(h.address, buf.address)  # zero-copy
        h.release()

    def test_python_wrapped_memory_stays_alive_until_freed(self):
        freed = []
        owner = aligned(np.arange(16, dtype=np.float64))
        ref = weakref.ref(owner.base)
        buf = hurray.Buffer.wrap(owner.ctypes.data, owner.nbytes, keep=owner.base,
                                 on_free=freed.append)
        a = np.from_dlpack(buf.tensor("float64"))
        addr = owner.ctypes.data
        del owner, buf
        gc.collect()
        self.assertIsNotNone(ref())
        self.assertEqual(float(a.sum()), 120.0)
        del a
        gc.collect()
        self.assertEqual(freed, [addr])
        self.assertIsNone(ref())


class _StreamedProducer:
    """Hands a hurray Buffer to numpy as a consumer that passes a stream would."""

    def __init__(self, buf, stream):
        self.buf, self.stream = buf, stream

    def __dlpack_device__(self):
        return self.buf.__dlpack_device__()

    def __dlpack__(self, stream=None):
        return self.buf.__dlpack__(stream=self.stream)


class HurrayTakesNumpyArrays(unittest.TestCase):
    """DLPack the other way: a numpy array's __dlpack__ capsule as a hurray
    handoff that a C consumer reads and releases."""

    def test_a_c_consumer_reads_a_numpy_array(self):
        a = aligned(np.linspace(0.0, 1.0, 1000))
        rc = sys.getrefcount(a)
        h = hurray.from_dlpack(a)
        self.assertEqual(sys.getrefcount(a), rc + 1)  # numpy's tensor holds the array
        self.assertEqual(h.address, a.ctypes.data)  # zero-copy
        self.assertEqual(h.nbytes, a.nbytes)
        self.assertEqual(h.handle.device_tag, hurray.DEVICE_CPU)
        self.assertGreaterEqual(h.handle.alignment, 64)
        h.check()
        total = helper.helper_consume_f64(ctypes.addressof(h.struct))
        self.assertAlmostEqual(total, float(a.sum()), places=9)
        self.assertTrue(h.released)
        # numpy's deleter ran exactly once: twice would drop a reference too many.
        self.assertEqual(sys.getrefcount(a), rc)
        with self.assertRaises(hurray.HurrayError) as cm:
            h.release()
        self.assertEqual(cm.exception.rule_id, "BP-REL-ONCE")
        self.assertEqual(sys.getrefcount(a), rc)

    def test_the_handoff_keeps_the_array_alive_until_released(self):
        a = aligned(np.arange(64, dtype=np.float64))
        base = weakref.ref(a.base)
        h = hurray.from_dlpack(a)
        del a
        gc.collect()
        self.assertIsNotNone(base())
        t = threading.Thread(target=h.release)  # BP-REL-THREAD: any thread
        t.start()
        t.join()
        gc.collect()
        self.assertIsNone(base())

    def test_numpy_arrays_the_protocol_refuses(self):
        misaligned = aligned(np.zeros(1025, dtype=np.float64))[1:]  # 8-byte aligned
        rc = sys.getrefcount(misaligned)
        with self.assertRaises(hurray.DLPackError) as cm:
            hurray.from_dlpack(misaligned)
        self.assertEqual(cm.exception.rule_id, "BP-ALIGN-MIN")
        gc.collect()
        self.assertEqual(sys.getrefcount(misaligned), rc)  # numpy's capsule deleted its tensor
        with self.assertRaises(TypeError):
            hurray.from_dlpack(object())

    def test_round_trip_through_hurray_and_back_to_numpy(self):
        a = aligned(np.arange(12, dtype=np.int32).reshape(3, 4))
        h = hurray.from_dlpack(a)
        freed = []
        # Re-wrap the handed-off bytes as a producer buffer and give them back to numpy.
        buf = hurray.Buffer.wrap(h.address, h.nbytes, keep=h, on_free=freed.append)
        b = np.from_dlpack(buf.tensor("int32", (3, 4)))
        np.testing.assert_array_equal(a, b)
        self.assertEqual(b.ctypes.data, a.ctypes.data)
        del h, buf, b
        gc.collect()
        self.assertEqual(len(freed), 1)


class CompiledPathAndRoughEdges(unittest.TestCase):
    """Issue 34: the compiled per-tensor path (hurray._native) is the one CTest
    asked for, and the rough edges a new user hit."""

    def test_the_compiled_path_is_the_one_asked_for(self):
        want = os.environ.get("HURRAY_NATIVE", "0") != "0"
        self.assertEqual(hurray.native, want)
        buf = c_buffer(64)
        self.assertEqual(type(buf.tensor("float32")).__mro__[1].__name__ == "TensorBase", want)

    def test_a_tensor_numpy_refuses_is_released_at_once(self):
        if not hurray.native:
            gc.collect()  # the ctypes path: released at the next collection
        before = helper.helper_free_count()
        buf = c_buffer(64)
        with self.assertRaises(Exception):
            np.from_dlpack(buf.tensor("bfloat16"))  # numpy 1.24 has no bfloat16
        buf.close()
        if not hurray.native:
            gc.collect()
        self.assertEqual(helper.helper_free_count(), before + 1)

    def test_a_capsule_renamed_back_unconsumed_is_still_released(self):
        # A consumer may rename a capsule and put the name back (its own
        # string, not the producer's) without consuming it: the destructor
        # must still delete the tensor, whatever the name's address.
        if not hurray.native:
            gc.collect()
        before = helper.helper_free_count()
        buf = c_buffer(64)
        cap = buf.tensor("float32").__dlpack__()
        name = ctypes.create_string_buffer(b"dltensor")
        set_name = ctypes.pythonapi.PyCapsule_SetName
        set_name.argtypes = [ctypes.py_object, ctypes.c_void_p]
        self.assertEqual(set_name(cap, ctypes.addressof(name)), 0)
        del cap
        buf.close()
        if not hurray.native:
            gc.collect()
        self.assertEqual(helper.helper_free_count(), before + 1)
        del name

    def test_tensors_made_in_a_row_keep_their_own_layout(self):
        # The compiled path reuses dropped Tensor objects and remembers the
        # last shape tuple: neither may leak into a tensor made after it.
        if not hurray.native:
            gc.collect()
        before = helper.helper_free_count()
        buf = c_buffer(4096)
        kept = buf.tensor("float32", (4, 8))
        for _ in range(3):
            for s in [(4, 8), (8, 4), (8, 4), [2, 16], (32,), 16, None, (4, 8)]:
                t = buf.tensor("float32", s)
                want = (1024,) if s is None else (s,) if isinstance(s, int) else tuple(s)
                self.assertEqual(t.shape, want)
                self.assertEqual(np.from_dlpack(t).shape, want)
                want8 = (4096,) if s is None else want
                self.assertEqual(np.from_dlpack(buf.tensor("uint8", s)).shape, want8)
                del t
        buf.close()
        self.assertEqual(np.from_dlpack(kept).shape, (4, 8))  # still alive past close
        self.assertEqual(helper.helper_free_count(), before)
        del kept
        if not hurray.native:
            gc.collect()
        self.assertEqual(helper.helper_free_count(), before + 1)

    def test_the_per_tensor_methods_are_the_classes_own(self):
        # Buffer and Tensor carry their own descriptors of the C methods (an
        # exact type check per call); subclasses still work, and the helper
        # binds a base's method to a subclass of that base only.
        if not hurray.native:
            return  # the compiled path binds these
        native = sys.modules["hurray._native"]
        for cls, names in ((hurray.Buffer, ("tensor", "__dlpack__", "__dlpack_device__")),
                           (hurray.Tensor, ("__dlpack__", "__dlpack_device__")),
                           (hurray.Handoff, ("release",))):
            for name in names:
                self.assertIs(cls.__dict__[name].__objclass__, cls)

        class MyTensor(hurray.Tensor):
            pass
        buf = c_buffer(64)
        mine = MyTensor(buf, "float32", (4, 4))
        self.assertEqual(np.from_dlpack(mine).shape, (4, 4))
        with self.assertRaises(TypeError):
            hurray.Buffer.__dict__["tensor"](mine)  # a Tensor is no Buffer
        with self.assertRaises(TypeError):
            native._method_for(native.BufferBase.__dict__["tensor"], hurray.Tensor)
        with self.assertRaises(TypeError):
            native._method_for(dict.__dict__["get"], hurray.Buffer)
        del mine
        buf.close()

    def test_an_alignment_refusal_says_what_to_do(self):
        misaligned = aligned(np.zeros(65, dtype=np.float64))[1:]
        with self.assertRaises(hurray.DLPackError) as cm:
            hurray.from_dlpack(misaligned)
        self.assertEqual(cm.exception.rule_id, "BP-ALIGN-MIN")
        self.assertIn("hurray.aligned_empty(", str(cm.exception))
        self.assertIn("copy=True", str(cm.exception))

    def test_copy_true_copies_into_an_aligned_buffer(self):
        base = np.arange(96, dtype=np.float32).reshape(8, 12)
        rc = sys.getrefcount(base)
        for a in (aligned(base)[:, 1:], aligned(base)[::-2, 3], base[1:]):
            h = hurray.from_dlpack(a, copy=True)
            self.assertEqual(h.address % 64, 0)
            np.testing.assert_array_equal(h.numpy(), a)
            a.flat[0] = -1  # a copy: the handoff does not see it
            self.assertNotEqual(h.numpy().flat[0], -1)
            h.release()
        del a
        self.assertEqual(sys.getrefcount(base), rc)  # numpy's tensors were deleted


class _Report(ctypes.Structure):  # exchange_consumer.c's xc_report
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("ndim", ctypes.c_int32), ("device_type", ctypes.c_int32),
                ("shape", ctypes.c_int64 * 4), ("strides", ctypes.c_int64 * 4),
                ("data", ctypes.c_uint64), ("borrowed_data", ctypes.c_uint64),
                ("flags", ctypes.c_uint64), ("borrowed_strides", ctypes.c_int64 * 4),
                ("error", ctypes.c_char * 256)]


def _exchange_api_address(cls):
    """The DLPackExchangeAPI pointer a type publishes: DLPack 1.3's capsule."""
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return get(cls.__dlpack_c_exchange_api__, b"dlpack_exchange_api")


class DLPackExchangeAPI(unittest.TestCase):
    """DLPack 1.3's C exchange API of hurray.Tensor and hurray.Buffer, used
    from C by a consumer written against dlpack.h 1.3's layout."""

    def setUp(self):
        self.xc = ctypes.PyDLL(os.environ["HURRAY_EXCHANGE_CONSUMER"])  # keeps the GIL
        self.xc.xc_check.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.POINTER(_Report)]
        self.xc.xc_allocate.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Report),
                                        ctypes.POINTER(ctypes.c_void_p)]
        self.xc.xc_allocate_bad.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Report)]
        self.xc.xc_time_ns.restype = ctypes.c_double
        self.xc.xc_time_ns.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.c_int,
                                       ctypes.c_int]

    def test_published_on_the_types_with_the_compiled_path(self):
        has = hasattr(hurray.Tensor, "__dlpack_c_exchange_api__")
        self.assertEqual(has, hurray.native)
        self.assertEqual(hasattr(hurray.Buffer, "__dlpack_c_exchange_api__"), hurray.native)

    def test_a_c_consumer_takes_tensors_and_allocates(self):
        if not hurray.native:
            return self.test_published_on_the_types_with_the_compiled_path()
        api = _exchange_api_address(type(c_buffer(8).tensor()))
        # the name used before DLPack 1.3 carries the same table as an int
        self.assertEqual(type(c_buffer(8).tensor()).__c_dlpack_exchange_api__, api)
        buf = c_buffer(4096)
        t = buf.tensor("uint32", (8, 16), strides=(32, 2), byte_offset=64)
        r = _Report()
        self.assertEqual(self.xc.xc_check(api, t, ctypes.byref(r)), 0, r.error)
        self.assertEqual((r.major, r.minor), (1, 3))
        self.assertEqual((r.ndim, r.device_type), (2, hurray.DL_CPU))
        self.assertEqual((tuple(r.shape[:2]), tuple(r.strides[:2])), ((8, 16), (32, 2)))
        self.assertEqual(r.data, buf.address + 64)
        self.assertEqual(r.borrowed_data, buf.address + 64)
        compact = buf.tensor("float32", (4, 8))  # strides never NULL: row-major ones
        self.assertEqual(self.xc.xc_check(api, compact, ctypes.byref(r)), 0, r.error)
        self.assertEqual((tuple(r.strides[:2]), tuple(r.borrowed_strides[:2])), ((8, 1), (8, 1)))
        before = helper.helper_free_count()
        ro = c_buffer(64)
        ro.read_only = True
        with self.assertRaises(BufferError) as cm:  # lent managed only: its flags say so
            self.xc.xc_check(api, ro.tensor(), ctypes.byref(r))
        self.assertIn("BP-ZC-NOMUT", str(cm.exception))
        self.assertEqual(r.flags & hurray.DLPACK_FLAG_READ_ONLY, hurray.DLPACK_FLAG_READ_ONLY)
        with self.assertRaises(BufferError):
            self.xc.xc_check(api, object(), ctypes.byref(r))
        del ro
        gc.collect()
        self.assertEqual(helper.helper_free_count(), before + 1)  # every export released
        out = ctypes.c_void_p()
        self.assertEqual(self.xc.xc_allocate(api, ctypes.byref(r), ctypes.byref(out)), 0, r.error)
        h = ctypes.cast(out.value, ctypes.py_object).value
        ctypes.pythonapi.Py_DecRef(ctypes.py_object(h))  # the C side's reference
        self.assertIsInstance(h, hurray.Handoff)
        self.assertEqual(h.address, r.data)
        np.testing.assert_array_equal(h.numpy(), np.arange(12, dtype=np.float32).reshape(3, 4))
        h.release()
        self.assertEqual(self.xc.xc_allocate_bad(api, ctypes.byref(r)), -1)
        self.assertIn(b"BufferError", r.error)

    def test_from_dlpack_uses_the_exchange_api(self):
        buf = c_buffer(256)
        before = helper.helper_free_count()
        h = hurray.from_dlpack(buf.tensor("uint16", (8, 16)))
        self.assertEqual((h.shape, h.address), ((8, 16), buf.address))
        h.release()
        buf.close()
        if not hurray.native:
            gc.collect()
        self.assertEqual(helper.helper_free_count(), before + 1)


if __name__ == "__main__":
    unittest.main()
