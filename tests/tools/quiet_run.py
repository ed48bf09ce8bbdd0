#!/usr/bin/env python3
"""Run a command as a new user would: a minimal environment (HOME, PATH, the
sanitizers' options, the test's cache folders, the paths to this build and
what --keep names; no EGL_PLATFORM, no display, no XDG_RUNTIME_DIR), and check that it exits 0, prints nothing on stderr (no
line from Dawn, Mesa, a Vulkan or OpenCL loader) and that stdout matches each
--stdout regular expression.

usage: quiet_run.py [--stdout REGEX]... [--keep NAME]... [--until REGEX]
                    -- COMMAND ARGS...

--until: a server that runs until stopped; once a line of its stdout matches
REGEX (within 120 s) it is sent SIGTERM, and that end counts as exit 0.
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

KEEP = ["HOME", "PATH", "ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS",
        "HURRAY_WEBGPU_CACHE", "HURRAY_BACKEND_PATH", "PYTHONPATH", "HURRAY_LIBRARY",
        "PYTHONDONTWRITEBYTECODE", "POCL_CACHE_DIR", "XDG_CACHE_HOME"]


def run_until(cmd, env, regex):
    """Run cmd until a line of its stdout matches regex, then SIGTERM it."""
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=err, text=True)
        out, deadline = "", time.monotonic() + 120
        for line in proc.stdout:
            out += line
            if re.search(regex, line) or time.monotonic() > deadline:
                break
        proc.send_signal(signal.SIGTERM)
        try:
            rest, _ = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            rest, _ = proc.communicate()
        out += rest or ""
        rc = 0 if proc.returncode == -signal.SIGTERM and re.search(regex, out, re.M) \
            else proc.returncode
        err.seek(0)
        return subprocess.CompletedProcess(cmd, rc, out, err.read())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stdout", action="append", default=[])
    ap.add_argument("--keep", action="append", default=[])
    ap.add_argument("--until")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    o = ap.parse_args()
    cmd = o.command[1:] if o.command[:1] == ["--"] else o.command
    env = {k: os.environ[k] for k in KEEP + o.keep if k in os.environ}
    if o.until:
        p = run_until(cmd, env, o.until)
    else:
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
