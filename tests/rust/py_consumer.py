"""The Python side of the four-language test (tests/rust/four_languages.py):
receive the Rust producer's buffer over hurray.ipc, view it with numpy
through DLPack, check the bytes, and release it by dropping the view.
HURRAY_FOUR_SKIP_RELEASE=python: exit without releasing."""
import os
import sys

import numpy as np

import hurray
import hurray.ipc

SIZE = 1 << 16

ch = hurray.ipc.connect(sys.argv[1], hello_timeout_ms=20000)
h = ch.receive(timeout_ms=20000, dtype="uint8", shape=(SIZE,))
a = np.from_dlpack(h)  # the handoff moves into the tensor numpy holds
expected = ((np.arange(SIZE, dtype=np.uint64) * 7 + 3) % 256).astype(np.uint8)
if a.shape != (SIZE,) or not np.array_equal(a, expected):
    sys.exit("python consumer: the bytes differ")
if os.environ.get("HURRAY_FOUR_SKIP_RELEASE") == "python":
    os._exit(0)  # never released: the producer must notice
del a  # numpy drops the tensor: its deleter releases the handoff, once
ch.close()
print("python consumer: checked through DLPack and released")
