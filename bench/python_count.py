#!/usr/bin/env python3
"""Instructions per tensor of the Python package's per-tensor paths (issue 34),
counted by valgrind's callgrind: numbers a noisy machine cannot move, beside
bench/python_bench.py's times.

  PYTHONPATH=python HURRAY_LIBRARY=build/libhurray.so.1 \\
  HURRAY_EXCHANGE_CONSUMER=build/tests/interop/libhurray_interop_exchange_consumer.so \\
      /usr/bin/python3 bench/python_count.py [--n 1000]

Each path runs in its own process under callgrind twice, n and 3n times; the
difference over 2n is its count per call, the interpreter's start and the
imports cancelling out. Address randomisation is off (setarch -R) where it
can be, and PYTHONHASHSEED is 0. The loop's own cost (a lambda returning None) is subtracted from the
Python rows. Needs valgrind; no torch (its import under callgrind takes
minutes).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

PATHS = {  # name: what it times
    "np_plain": "np.from_dlpack(numpy_array)",
    "np_buf_tensor": "np.from_dlpack(buf.tensor('float32', shape))",
    "np_tensor": "np.from_dlpack(tensor) (tensor made once)",
    "hurray_from_dlpack": "hurray.from_dlpack(aligned array) + release()",
    "buf_tensor": "buf.tensor('float32', shape) alone",
    "xc_managed": "exchange API from C: managed_tensor_from_py_object_no_sync + deleter",
    "xc_borrowed": "exchange API from C: dltensor_from_py_object_no_sync (borrowed)",
    "empty": "the loop alone",
}


def child(name, n):
    import ctypes
    import numpy as np
    import hurray
    shape = (16384,)
    buf = hurray.Buffer.alloc(4 * shape[0])
    tensor = buf.tensor("float32", shape)
    plain = np.zeros(shape, np.float32)
    aligned = hurray.aligned_empty(shape, "float32")
    if name.startswith("xc_"):
        xc = ctypes.PyDLL(os.environ["HURRAY_EXCHANGE_CONSUMER"])
        xc.xc_time_ns.restype = ctypes.c_double
        xc.xc_time_ns.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.c_int, ctypes.c_int]
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        api = get(type(tensor).__dlpack_c_exchange_api__, b"dlpack_exchange_api")
        xc.xc_time_ns(api, tensor, n, name == "xc_borrowed")
        return
    fn = {"np_plain": lambda: np.from_dlpack(plain),
          "np_buf_tensor": lambda: np.from_dlpack(buf.tensor("float32", shape)),
          "np_tensor": lambda: np.from_dlpack(tensor),
          "hurray_from_dlpack": lambda: hurray.from_dlpack(aligned).release(),
          "buf_tensor": lambda: buf.tensor("float32", shape),
          "empty": lambda: None}[name]
    for _ in range(n):
        fn()


def count(name, n):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "cg.out")
        # ASLR off (setarch -R, where there is setarch) and one string hash
        # seed: dict and cache layouts that follow addresses and hashes moved
        # counts by a few hundred from run to run
        fixed = ["setarch", "-R"] if shutil.which("setarch") else []
        env = dict(os.environ, PYTHONHASHSEED="0")
        r = subprocess.run(fixed + ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
                            sys.executable, os.path.abspath(__file__), "--child", name,
                            "--n", str(n)], capture_output=True, text=True, env=env)
        if r.returncode != 0:
            sys.exit("%s under callgrind failed:\n%s" % (name, r.stderr[-2000:]))
        with open(out) as f:
            return int(re.search(r"^summary: (\d+)", f.read(), re.M).group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--child")
    args = ap.parse_args()
    if args.child:
        return child(args.child, args.n)
    per = {}
    for name in PATHS:
        per[name] = (count(name, 3 * args.n) - count(name, args.n)) / (2 * args.n)
    loop = per["empty"]
    print("| path | instructions per call |")
    print("|---|---:|")
    for name, what in PATHS.items():
        if name == "empty":
            continue
        v = per[name] - (0 if name.startswith("xc_") else loop)
        print("| `%s` | %.0f |" % (what, v))
    base = per["np_plain"] - loop
    for name in ("np_buf_tensor", "np_tensor", "hurray_from_dlpack"):
        print("%s / np_plain: %.2fx" % (name, (per[name] - loop) / base))


if __name__ == "__main__":
    main()
