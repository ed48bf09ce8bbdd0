#!/usr/bin/env python3
"""Where a PUT's time goes: read libhurray-net's PUT timeline (HURRAY_NET_TRACE).

  bench/net_trace.py BUILD_DIR [hurray_net_bench options]
      runs BUILD_DIR/bench/hurray_net_bench with the trace on (default options:
      --sizes 1M --window 2 --min-bytes 1G, client on CPU 0 and server on CPU 1
      where there are two) and reads the two processes' traces;
  bench/net_trace.py --files TRACE [TRACE ...]
      reads traces written elsewhere (HURRAY_NET_TRACE=PREFIX on each side).
  --strict (either form): exit 1 unless every step has been seen (what a
      rendezvous PUT, 16 KiB or more, makes; the tests use it).

Prints the median time of each step of a PUT over the middle half of the
run, and how often PUTs landed on average. The events and their letters are
listed in src/net/ucx.h. Steps between two hosts (P->h, g->S, a->A, P->A)
compare two machines' clocks and mean nothing there; the others do. Exits 1
when no PUT is seen on both sides (the trace is broken or was off).
"""
import glob
import os
import subprocess
import sys
import tempfile

# (from, to, what happens in between)
STEPS = [
    ("P", "h", "the header travels to the server"),
    ("h", "r", "the server checks it and allocates the destination"),
    ("r", "g", "UCX posts the receive and sends its go-ahead"),
    ("g", "S", "the go-ahead travels back, the bytes move, the send completes"),
    ("S", "l", "UCX tells the server the bytes landed"),
    ("l", "a", "the server hands the buffer over and sends the answer"),
    ("a", "A", "the answer reaches the client"),
    ("P", "A", "the whole PUT, as the client sees it"),
]


def read(paths):
    """{request id: {letter: first time in ns}} from the trace files."""
    puts = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                ns, what, rid = line.split()
                puts.setdefault(int(rid), {}).setdefault(what, int(ns))
    return puts


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def report(puts, size=None, strict=False):
    # PUTs seen on both sides (an eager PUT, under 16 KiB, has no go-ahead).
    whole = sorted(i for i, ev in puts.items() if {"P", "h", "l", "a", "A"} <= ev.keys())
    if not whole:
        print("net_trace: no PUT has its events on both sides (was HURRAY_NET_TRACE set "
              "on both?)")
        return 1
    # The middle half: no warm-up, no tail.
    middle = whole[len(whole) // 4: len(whole) - len(whole) // 4] or whole
    missing = False
    print(f"PUT timeline: {len(middle)} PUTs (the middle half of {len(whole)}), median us")
    for a, b, what in STEPS:
        spans = [puts[i][b] - puts[i][a] for i in middle if a in puts[i] and b in puts[i]]
        us = f"{median(spans) / 1000:9.1f}" if spans else "        -"
        print(f"  {a}->{b} {us}  {what}")
        missing = missing or not spans
    # The mean, not the median: a window's PUTs land in bursts.
    landed = sorted(puts[i]["l"] for i in middle)
    every = (landed[-1] - landed[0]) / (len(landed) - 1) / 1000 if len(landed) > 1 else 0
    rate = f" ({size / every:.0f} MB/s at {size} bytes each)" if size and every > 0 else ""
    print(f"  landings: one every {every:.1f} us on average{rate}")
    if strict and missing:
        print("net_trace: some steps were never seen")
        return 1
    return 0


def main(argv):
    strict = "--strict" in argv
    argv = [a for a in argv if a != "--strict"]
    if len(argv) >= 2 and argv[0] == "--files":
        try:
            return report(read(argv[1:]), strict=strict)
        except (OSError, ValueError) as e:
            print(f"net_trace: {e}", file=sys.stderr)
            return 2
    if not argv or argv[0].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    exe = os.path.join(argv[0], "bench", "hurray_net_bench")
    if not os.path.exists(exe):
        print(f"net_trace: {exe} is not built", file=sys.stderr)
        return 2
    opts = argv[1:]
    defaults = {"--sizes": "1M", "--window": "2", "--min-bytes": "1G"}
    if (os.cpu_count() or 1) >= 2:
        defaults.update({"--client-cpu": "0", "--server-cpu": "1"})
    for k, v in defaults.items():
        if k not in opts:
            opts += [k, v]
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, HURRAY_NET_TRACE=os.path.join(d, "trace"))
        env.setdefault("UCX_TLS", "tcp")
        out = subprocess.run([exe] + opts, env=env, capture_output=True, text=True)
        if out.returncode != 0:
            print(out.stdout + out.stderr, file=sys.stderr)
            return 1
        lines = [l for l in out.stdout.splitlines() if l.startswith("net_put")]
        print("\n".join(lines))
        size = int(lines[0].split("size=")[1].split()[0]) if len(lines) == 1 else None
        return report(read(glob.glob(os.path.join(d, "trace.*"))), size, strict)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
