#!/usr/bin/env python3
"""The Python package's per-tensor paths against the frameworks' own, side by
side in one run (issue 34): each row times a libhurray path and the path a
numpy or PyTorch user takes today for the same work, and prints the ratio.

  PYTHONPATH=python HURRAY_LIBRARY=build/libhurray.so.1 \\
  HURRAY_EXCHANGE_CONSUMER=build/tests/interop/libhurray_interop_exchange_consumer.so \\
      /usr/bin/python3 bench/python_bench.py [--n 20000] [--repeat 5] [--ipc-n 2000]

Handoff rows: a 64 KiB float32 tensor, best of --repeat runs of --n calls,
the two sides' runs interleaved.
Exchange rows (DLPack 1.3, with HURRAY_EXCHANGE_CONSUMER=the build's
libhurray_interop_exchange_consumer.so): a C consumer's loop, per tensor.
IPC row: one array handed to a child process and released back, round trip,
against multiprocessing.shared_memory (the child maps the segment by name,
reads it, closes it and says so through a pipe). No assertion on the
numbers: docs/performance.md records them with the command.
"""
import argparse
import multiprocessing
import os
import tempfile
import timeit
from multiprocessing import shared_memory

import numpy as np

import hurray

try:
    import torch
except ImportError:  # the torch rows are left out
    torch = None

SHAPE = (16384,)  # 64 KiB of float32


def best_ns(fn, n, repeat):
    return min(timeit.repeat(fn, number=n, repeat=repeat)) / n * 1e9


def handoff_rows(n, repeat):
    buf = hurray.Buffer.alloc(4 * SHAPE[0])
    tensor = buf.tensor("float32", SHAPE)
    plain = np.zeros(SHAPE, np.float32)
    aligned = hurray.aligned_empty(SHAPE, "float32")
    rows = [("np.from_dlpack(buf.tensor('float32', shape))",
             lambda: np.from_dlpack(buf.tensor("float32", SHAPE)),
             "np.from_dlpack(numpy_array)", lambda: np.from_dlpack(plain)),
            ("np.from_dlpack(tensor) (tensor made once)", lambda: np.from_dlpack(tensor),
             "np.from_dlpack(numpy_array)", lambda: np.from_dlpack(plain)),
            ("hurray.from_dlpack(aligned array) + release()",
             lambda: hurray.from_dlpack(aligned).release(),
             "np.from_dlpack(numpy_array)", lambda: np.from_dlpack(plain))]
    if torch is not None:
        rows.insert(2, ("torch.from_dlpack(buf.tensor('float32', shape))",
                        lambda: torch.from_dlpack(buf.tensor("float32", SHAPE)),
                        "torch.from_dlpack(numpy_array)", lambda: torch.from_dlpack(plain)))
        rows.append(("hurray.from_dlpack(torch tensor) + release()",
                     lambda: hurray.from_dlpack(tt).release(),
                     "torch.from_dlpack(torch tensor)", lambda: torch.from_dlpack(tt)))
        tt = torch.from_numpy(hurray.aligned_empty(SHAPE, "float32"))
    out = []
    for name, fn, base_name, base in rows:
        ours = theirs = float("inf")
        for _ in range(repeat):  # interleaved, so that both see the same machine
            ours, theirs = min(ours, best_ns(fn, n, 1)), min(theirs, best_ns(base, n, 1))
        out.append((name, ours, base_name, theirs))
    return out


def exchange_rows(n, repeat):
    """DLPack 1.3's exchange API from C (tests/interop/exchange_consumer.c,
    found through HURRAY_EXCHANGE_CONSUMER): a tensor per call with no
    Python object made, against the same tensor through __dlpack__'s
    capsule. Left out without the compiled path or the consumer."""
    import ctypes
    path = os.environ.get("HURRAY_EXCHANGE_CONSUMER")
    if not hurray.native or not path:
        return []
    xc = ctypes.PyDLL(path)
    xc.xc_time_ns.restype = ctypes.c_double
    xc.xc_time_ns.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.c_int, ctypes.c_int]
    tensor = hurray.Buffer.alloc(4 * SHAPE[0]).tensor("float32", SHAPE)
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    api = get(type(tensor).__dlpack_c_exchange_api__, b"dlpack_exchange_api")
    capsule = best_ns(lambda: tensor.__dlpack__(max_version=(1, 3)), n, repeat)
    managed = min(xc.xc_time_ns(api, tensor, n, 0) for _ in range(repeat))
    borrowed = min(xc.xc_time_ns(api, tensor, n, 1) for _ in range(repeat))
    base = "tensor.__dlpack__() capsule, from Python"
    return [("exchange API from C: managed_tensor_from_py_object_no_sync + deleter", managed,
             base, capsule),
            ("exchange API from C: dltensor_from_py_object_no_sync (borrowed)", borrowed,
             base, capsule)]


# ---- IPC: one array to a child process and back ----------------------------
def _hurray_child(path, n):
    ch = hurray.ipc.connect(path, hello_timeout_ms=10000)
    for _ in range(n):
        h = ch.receive(timeout_ms=10000, dtype="float32", shape=SHAPE)
        a = h.numpy()
        float(a[0])
        del a
        h.release()
    try:  # stay until the parent has read the last release and hung up
        ch.receive(timeout_ms=10000)
    except hurray.HurrayError:
        pass
    ch.close()


def _shm_child(conn, n):
    for _ in range(n):
        name = conn.recv()
        shm = shared_memory.SharedMemory(name=name)
        a = np.ndarray(SHAPE, np.float32, buffer=shm.buf)
        float(a[0])
        del a
        shm.close()
        conn.send(True)
    conn.close()


def ipc_row(n, repeat):
    ctx = multiprocessing.get_context("fork")
    best_h = best_s = float("inf")
    for _ in range(repeat):
        path = os.path.join(tempfile.mkdtemp(), "bench.sock")
        buf = hurray.Buffer.alloc(4 * SHAPE[0], alignment=4096, shareable=True)
        with hurray.ipc.listen(path) as server:
            child = ctx.Process(target=_hurray_child, args=(path, n))
            child.start()
            ch = server.accept(timeout_ms=10000)
            t0 = timeit.default_timer()
            for _ in range(n):
                ch.send(buf)
                while ch.stats().outstanding:  # until the child's release is read
                    ch.progress(10000)
            best_h = min(best_h, timeit.default_timer() - t0)
            child.join()
            ch.close()
        shm = shared_memory.SharedMemory(create=True, size=4 * SHAPE[0])
        ours, theirs = ctx.Pipe()
        child = ctx.Process(target=_shm_child, args=(theirs, n))
        child.start()
        t0 = timeit.default_timer()
        for _ in range(n):
            ours.send(shm.name)
            ours.recv()
        best_s = min(best_s, timeit.default_timer() - t0)
        child.join()
        shm.close()
        shm.unlink()
    return [("hurray.ipc send + receive + release (round trip)", best_h / n * 1e9,
             "multiprocessing.shared_memory by name + pipe", best_s / n * 1e9)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--ipc-n", type=int, default=2000)
    args = ap.parse_args()
    print("hurray %s (%s), compiled path: %s; numpy %s%s" % (
        hurray.version(), hurray.library_path, hurray.native, np.__version__,
        ", torch %s" % torch.__version__ if torch is not None else ""))
    rows = (handoff_rows(args.n, args.repeat) + exchange_rows(args.n, args.repeat)
            + ipc_row(args.ipc_n, args.repeat))
    print("| libhurray path | ns | framework's own path | ns | ratio |")
    print("|---|---:|---|---:|---:|")
    for name, ours, base_name, theirs in rows:
        print("| `%s` | %.0f | `%s` | %.0f | %.2fx |" % (name, ours, base_name, theirs,
                                                      ours / theirs))


if __name__ == "__main__":
    main()
