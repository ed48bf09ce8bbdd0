#!/usr/bin/env python3
"""Run a command as a new user would: a minimal environment (HOME, PATH, the
sanitizers' options and what --keep names; no EGL_PLATFORM, no display, no
XDG_RUNTIME_DIR), and check that it exits 0, prints nothing on stderr (no
line from Dawn, Mesa, a Vulkan or OpenCL loader) and that stdout matches each
--stdout regular expression.

usage: quiet_run.py [--stdout REGEX]... [--keep NAME]... -- COMMAND ARGS...
"""
import argparse
import os
import re
import subprocess
import sys

KEEP = ["HOME", "PATH", "ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS",
        "HURRAY_WEBGPU_CACHE", "HURRAY_BACKEND_PATH", "PYTHONPATH", "HURRAY_LIBRARY",
        "PYTHONDONTWRITEBYTECODE"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stdout", action="append", default=[])
    ap.add_argument("--keep", action="append", default=[])
    ap.add_argument("command", nargs=argparse.REMAINDER)
    o = ap.parse_args()
    cmd = o.command[1:] if o.command[:1] == ["--"] else o.command
    env = {k: os.environ[k] for k in KEEP + o.keep if k in os.environ}
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    print("$", " ".join(cmd), "(environment:", " ".join(sorted(env)) + ")")
    print(p.stdout, end="")
    failures = []
    if p.returncode != 0:
        failures.append(f"exit status {p.returncode}, expected 0")
    if p.stderr:
        failures.append("stderr is not empty:\n" + p.stderr)
    for rx in o.stdout:
        if not re.search(rx, p.stdout, re.M):
            failures.append(f"stdout does not match {rx!r}")
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print("ok: exit 0, nothing on stderr")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
