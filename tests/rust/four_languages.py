"""One buffer, four languages (issue 32): a Rust producer sends one buffer
over IPC to a C++ consumer (include/hurray.hpp) and a Python consumer (numpy
through DLPack); each checks the bytes and releases, and the Rust side sees
both releases, once each. Then back: a C++ producer to a Rust consumer.

usage: four_languages.py RUST_EXAMPLE CXX_PEER PYTHON WORKDIR
Every process runs under a timeout; any failure fails the test."""
import os
import shutil
import subprocess
import sys
import time

rust, cxx, python, work = sys.argv[1:5]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def wait_for(path, proc):
    deadline = time.monotonic() + 20
    while not os.path.exists(path):
        if proc.poll() is not None or time.monotonic() > deadline:
            sys.exit(f"four_languages: {path} never appeared")
        time.sleep(0.02)


def finish(procs):
    status = 0
    for name, p in procs:
        try:
            out, _ = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            print(f"{name}: timed out")
            status = 1
        sys.stdout.write(out)
        if p.returncode != 0:
            print(f"{name}: exit {p.returncode}")
            status = 1
    return status


def start(argv):
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


sock = os.path.join(work, "rust.sock")
producer = start([rust, "produce", sock, "2"])
wait_for(sock, producer)
procs = [("rust producer", producer), ("c++ consumer", start([cxx, "consume", sock])),
         ("python consumer", start([python, os.path.join(os.path.dirname(__file__),
                                                         "py_consumer.py"), sock]))]
status = finish(procs[1:] + procs[:1])

sock = os.path.join(work, "cxx.sock")
producer = start([cxx, "produce", sock])
wait_for(sock, producer)
status |= finish([("rust consumer", start([rust, "consume", sock])), ("c++ producer", producer)])
sys.exit(status)
