#!/usr/bin/env python3
"""Run the side-by-side benchmarks and write docs/performance.md.

usage: bench/run.py BUILD_DIR [--repetitions N]

Each row pairs a libhurray path with a baseline doing the same work in the
same run (BM_<What>_Hurray vs BM_<What>_<Baseline>); the ratio is libhurray's
median time over the baseline's. Machines here are shared and noisy: compare
ratios, not absolute times.
"""
import argparse
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile

PAIRS = [
    # what, hurray benchmark, baseline benchmark, baseline described
    ("CPU handoff: wrap + check + acquire + release", "BM_Handoff_Hurray",
     "BM_Handoff_DLPack", "DLPack, minimal: malloc a managed tensor, check, call its deleter"),
    ("CPU handoff: wrap + check + acquire + release", "BM_Handoff_Hurray",
     "BM_Handoff_DLPackOwned", "DLPack as producers do it: the same plus an atomic reference "
     "on the memory's owner"),
    ("one handle: decode + validate", "BM_Validate1_Hurray",
     "BM_Validate1_Memcpy", "memcpy of the same 16 bytes"),
    ("1M handles (a 16 MiB table): validate in one call", "BM_Batch_Hurray",
     "BM_Batch_Memcpy", "memcpy of the same 16 MiB"),
    ("OpenCL: allocate + free 1 MiB", "BM_AllocFree_Hurray_OpenCL",
     "BM_AllocFree_Raw_OpenCL", "clCreateBuffer + clReleaseMemObject"),
    ("OpenCL: event record + handoff + wait", "BM_EventWait_Hurray_OpenCL",
     "BM_EventWait_Raw_OpenCL", "clEnqueueMarkerWithWaitList + clWaitForEvents + clReleaseEvent"),
    ("Vulkan: allocate + free 1 MiB", "BM_AllocFree_Hurray_Vulkan",
     "BM_AllocFree_Raw_Vulkan", "vkAllocateMemory + vkFreeMemory"),
    ("Vulkan: event record + handoff + wait", "BM_EventWait_Hurray_Vulkan",
     "BM_EventWait_Raw_Vulkan", "vkQueueSubmit of a host-visibility barrier signalling a "
     "timeline semaphore + vkWaitSemaphores"),
]

# release_after (issue 26): bench/release_after_bench.cpp, a two-stage pipeline whose
# consumer enqueues a 1 MiB fill per buffer and releases it after that work, against
# waiting on the host and then releasing.
PAIRS += [
    ("OpenCL pipeline: fill + release_after, per buffer",
     "BM_Pipeline_ReleaseAfter_OpenCL/real_time", "BM_Pipeline_WaitRelease_OpenCL/real_time",
     "the same fill, clFinish, then hurray_handoff_release"),
    ("Vulkan pipeline: fill + release_after, per buffer",
     "BM_Pipeline_ReleaseAfter_Vulkan/real_time", "BM_Pipeline_WaitRelease_Vulkan/real_time",
     "the same fill, vkWaitSemaphores on its value, then hurray_handoff_release"),
]

# WebGPU (issue 25): bench/webgpu_bench.cpp, Dawn's OpenGL ES backend on llvmpipe.
PAIRS += [
    ("WebGPU: allocate + free 1 MiB", "BM_AllocFree_Hurray_WebGPU",
     "BM_AllocFree_Raw_WebGPU", "wgpuDeviceCreateBuffer + wgpuBufferDestroy + wgpuBufferRelease "
     "(no error scopes, on the calling thread)"),
    ("WebGPU: event record + handoff + wait", "BM_EventWait_Hurray_WebGPU",
     "BM_EventWait_Raw_WebGPU", "wgpuQueueOnSubmittedWorkDone + wgpuInstanceWaitAny polling"),
]

# ipc (issue 6): bench/ipc_bench.cpp, a consumer process forked per benchmark.
PAIRS += [
    (f"hand {label} of CPU memory to another process", f"BM_Handover_Hurray/{n}/real_time",
     f"BM_Handover_Socket/{n}/real_time",
     "write the same bytes to a Unix stream socket; the other process reads them all, acks")
    for label, n in (("1 MiB", 1 << 20), ("64 MiB", 64 << 20), ("1 GiB", 1 << 30))
] + [
    ("IPC round trip: send a 4 KiB buffer, the consumer maps it, releases, producer hears it",
     "BM_RoundTrip_Hurray/real_time", "BM_RoundTrip_PingPong/real_time",
     "bare ping-pong of the same two messages (232 and 24 bytes) over a SOCK_SEQPACKET pair"),
    ("IPC round trip (as above)", "BM_RoundTrip_Hurray/real_time",
     "BM_RoundTrip_PingPongFd/real_time",
     "the same ping-pong passing a memfd each time (SCM_RIGHTS, fstat, close): the floor "
     "for passing the memory's descriptor"),
]


def fmt(ns):
    return f"{ns:.1f} ns" if ns < 1e4 else f"{ns / 1e3:.1f} us"


def gnuplot(png, rows, settings, curves):
    """Plot rows (tuples of numbers, x first) into png with gnuplot: settings
    are gnuplot commands; curves are (column, "with ... title ...") pairs."""
    with tempfile.NamedTemporaryFile("w", suffix=".dat", delete=False) as f:
        for r in rows:
            f.write(" ".join(str(v) for v in r) + "\n")
        data = f.name
    try:
        plot = ", ".join(f'"{data}" using 1:{col} {how}' for col, how in curves)
        subprocess.run(["gnuplot", "-e",
                        f'set terminal pngcairo noenhanced size 800,480; set output "{png}";'
                        + settings + "plot " + plot], check=True)
    finally:
        os.unlink(data)


def plot_sweep(med, docs_dir):
    """docs/batch-validation.png: ns per handle, validate vs memcpy, by table size."""
    rows = []
    for name, t in med.items():
        if name.startswith("BM_Sweep_Hurray/"):
            n = int(name.split("/")[1])
            base = med.get(f"BM_Sweep_Memcpy/{n}")
            if base:
                rows.append((n, t / n, base / n))
    if not rows or not shutil.which("gnuplot"):
        return "\nSize sweep: not plotted (gnuplot or the sweep benchmarks missing).\n"
    rows.sort()
    gnuplot(os.path.join(docs_dir, "batch-validation.png"), rows,
            'set logscale x 4; set xlabel "handles in the table";'
            'set xtics ("16" 16, "256" 256, "4K" 4096, "64K" 65536, "1M" 1048576, "4M" 4194304);'
            'set ylabel "ns per handle"; set key top right; set grid;'
            'set title "hurray_table_validate vs memcpy of the same bytes";',
            [(2, 'with linespoints title "hurray_table_validate"'),
             (3, 'with linespoints title "memcpy"')])
    return ("\n## Batch validation by table size\n\n"
            "![validate vs memcpy, ns per handle](batch-validation.png)\n\n"
            "| handles | validate ns/handle | memcpy ns/handle | ratio |\n|---|---|---|---|\n" +
            "".join(f"| {n} | {ours:.2f} | {base:.2f} | {ours / base:.2f} |\n"
                    for n, ours, base in rows))


def plot_ipc_sweep(med, docs_dir):
    """ipc (issue 6): docs/ipc-sweep.png, time to hand a buffer to another
    process by size, libhurray vs a socket copy."""
    rows = []
    for name, t in med.items():
        if name.startswith("BM_Handover_Hurray/"):
            n = int(name.split("/")[1])
            base = med.get(f"BM_Handover_Socket/{n}/real_time")
            if base:
                rows.append((n, t / 1e3, base / 1e3))
    if not rows or not shutil.which("gnuplot"):
        return "\nIPC size sweep: not plotted (gnuplot or the IPC benchmarks missing).\n"
    rows.sort()
    gnuplot(os.path.join(docs_dir, "ipc-sweep.png"), rows,
            'set logscale xy; set xlabel "buffer size";'
            'set xtics ("4K" 4096, "64K" 65536, "1M" 1048576, "16M" 16777216,'
            ' "256M" 268435456, "1G" 1073741824);'
            'set ylabel "microseconds per handover"; set key top left; set grid;'
            'set title "Handing a CPU buffer to another process";',
            [(2, 'with linespoints title "libhurray (memfd, no copy)"'),
             (3, 'with linespoints title "Unix socket (copy)"')])
    def size(n):
        return f"{n >> 30} GiB" if n >= 1 << 30 else (
            f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB")
    return ("\n## Handing a buffer to another process, by size\n\n"
            "![libhurray vs socket copy](ipc-sweep.png)\n\n"
            "| size | libhurray | socket copy | socket / libhurray |\n|---|---|---|---|\n" +
            "".join(f"| {size(n)} | {ours:.1f} us | {base:.1f} us | {base / ours:.1f}x |\n"
                    for n, ours, base in rows))


# Paths bench/count.c runs, in pairs of (libhurray, baseline or None).
COUNT_PAIRS = [
    ("hurray_handle_decode + hurray_handle_validate, one valid handle", "validate",
     None, None),
    ("CPU handoff: wrap + check + acquire + release", "handoff",
     "DLPack, minimal: malloc a managed tensor, check, call its deleter", "dlpack"),
    ("OpenCL: allocate + free 1 MiB", "opencl",
     "clCreateBuffer + clReleaseMemObject", "opencl-raw"),
]


def callgrind_count(exe, path):
    """Instructions per run of one bench/count.c path, from callgrind; None
    when the path cannot run here (device absent) or valgrind is missing."""
    totals = {}
    for n in (10000, 20000):
        try:
            out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                                  exe, path, str(n)], capture_output=True, text=True)
        except FileNotFoundError:
            return None
        if out.returncode != 0:
            return None
        for line in out.stderr.splitlines():
            if "Collected :" in line:
                totals[n] = int(line.split(":")[-1].strip())
    if len(totals) != 2:
        return None
    return (totals[20000] - totals[10000]) / 10000


def callgrind_counts(build_dir):
    """Instructions per run of each path and its baseline, from callgrind."""
    exe = os.path.join(build_dir, "bench", "hurray_count")
    rows = []
    for what, path, base_desc, base in COUNT_PAIRS:
        ours = callgrind_count(exe, path)
        if ours is None:
            rows.append(f"| {what} | not run | {base_desc or '-'} | - | - |")
            continue
        if base is None:
            rows.append(f"| {what} | {ours:.0f} | - | - | - |")
            print(f"{what}: {ours:.0f} instructions (callgrind)")
            continue
        theirs = callgrind_count(exe, base)
        if theirs is None:
            rows.append(f"| {what} | {ours:.0f} | {base_desc} | not run | - |")
            continue
        rows.append(f"| {what} | {ours:.0f} | {base_desc} | {theirs:.0f} | "
                    f"{ours / theirs:.2f} |")
        print(f"{what}: {ours:.0f} vs {theirs:.0f} instructions (callgrind)")
    return ("\n## Instruction counts (callgrind: the same on any machine)\n\n"
            "Instructions per run of the path, `bench/count.c` under callgrind (two run "
            "counts, the difference divided). Time also depends on what the instructions "
            "wait for (a locked instruction, a cache miss), so these complement the table "
            "above; they do not replace it.\n\n"
            "| path | instructions | baseline | baseline instructions | ratio |\n"
            "|---|---|---|---|---|\n" + "\n".join(rows) + "\n")


# net (issue 9): PUT throughput of libhurray-net (bench/net_bench.cpp) beside
# UCX's own ucx_perftest (tag_bw and ucp_am_bw) over the same transport
# (UCX_TLS, default tcp; UCX_NET_DEVICES, default lo) on 127.0.0.1,
# interleaved size by size in one run.
NET_SIZES = [1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20, 1 << 30]
NET_BEGIN, NET_END = "<!-- net: begin -->", "<!-- net: end -->"
# Sections measured on machines this script does not run on (a GPU's, by
# tests/gpu/cuda-bench.sh): pasted by hand between these marks, kept as they
# are when the file is written again.
KEPT_BEGIN, KEPT_END = "<!-- kept: begin -->", "<!-- kept: end -->"


def kept_sections(path):
    """The hand-written sections of the existing file, marks included."""
    if not os.path.exists(path):
        return ""
    text, out = open(path).read(), []
    while KEPT_BEGIN in text and KEPT_END in text.split(KEPT_BEGIN, 1)[1]:
        body, text = text.split(KEPT_BEGIN, 1)[1].split(KEPT_END, 1)
        out.append(f"\n{KEPT_BEGIN}{body}{KEPT_END}\n")
    return "".join(out)


# PUTs in flight in the windowed rows (net_bench --window, --window-bytes):
# up to 8, at most 8 MiB of them but 2 at least, so 8 at 1 MiB and 2 from
# 4 MiB on. A window of 4 or more lets the server answer PUTs under 4 MiB
# together (docs/spec/network.md N15), which is what 1 MiB needs; from 16 MiB
# on, more than 2 measured slower here (each PUT in flight lands in a buffer
# of its own: more memory, fewer cache hits).
NET_WINDOW, NET_WINDOW_BYTES = 8, 8 << 20


def _net_window(n):
    """The window net_bench uses at size n (its --window-bytes rule)."""
    return NET_WINDOW if NET_WINDOW * n <= NET_WINDOW_BYTES else max(2, NET_WINDOW_BYTES // n)
# Bytes each run moves per size (at least 3 transfers). Runs of 1 GiB took
# 0.2 s at 1 MiB and moved with the machine's moods by 10%; 4 GiB is about a
# second per run.
NET_MIN_BYTES = 4 << 30


def _free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Where a run's two processes go: the client on CPU 0, the server on CPU 1,
# for libhurray-net and ucx_perftest alike. Left to the scheduler, both now and
# then share one CPU and that run loses up to 3x (a 2-CPU machine).
NET_PIN = (os.cpu_count() or 1) >= 2 and shutil.which("taskset") is not None


def _pinned(cpu, argv):
    return ["taskset", "-c", str(cpu)] + argv if NET_PIN else argv


def _perftest_mibps(test, size, iters, env, extra=()):
    """ucx_perftest's overall bandwidth (its "MB/s" are MiB/s) for one size."""
    import time
    port = str(_free_port())
    server = subprocess.Popen(_pinned(1, ["ucx_perftest", "-p", port]), env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(50):
            out = subprocess.run(_pinned(0, ["ucx_perftest", "127.0.0.1", "-p", port, "-t", test,
                                             "-s", str(size), "-n", str(iters)] + list(extra)),
                                 env=env, capture_output=True, text=True)
            final = [l for l in out.stdout.splitlines() if l.startswith("Final:")]
            if final:
                return float(final[0].split()[6])
            time.sleep(0.2)  # the server was not listening yet
        return None
    finally:
        if server.poll() is None:
            server.kill()
        server.wait()


def _net_bench_mibps(exe, n, env, window, pool):
    """hurray_net_bench's PUT throughput in MiB/s, and the window it used."""
    pin = ["--client-cpu", "0", "--server-cpu", "1"] if NET_PIN else []
    out = subprocess.run([exe, "--sizes", str(n), "--min-bytes", str(NET_MIN_BYTES), "--min-iters", "3",
                          "--window", str(window), "--window-bytes", str(NET_WINDOW_BYTES),
                          "--pool", str(pool)] + pin,
                         env=env, capture_output=True, text=True, check=True).stdout
    mbps = float(out.split("MBps=")[1].split()[0])
    return mbps * 1e6 / (1 << 20), int(out.split("window=")[1].split()[0])


def _wait_quiet(env, mibps, tries=60):
    """--net-quiet: wait until a short ucx_perftest at 1 MiB reaches mibps (a
    quiet phase of a shared machine); False when none came in `tries` probes."""
    import time
    for _ in range(tries):
        got = _perftest_mibps("ucp_am_bw", 1 << 20, 512, env)
        if got is not None and got >= mibps:
            return True
        time.sleep(2)
    return False


def net_sweep(build_dir, docs_dir, repetitions, quiet=0):
    exe = os.path.join(build_dir, "bench", "hurray_net_bench")
    if not os.path.exists(exe) or not shutil.which("ucx_perftest"):
        return ("\n## Network: PUT throughput\n\nnot run (hurray_net_bench or ucx_perftest "
                "missing: build with UCX, install ucx-utils).\n")
    # One TCP device for every run, ours and UCX's (the "One TCP device"
    # paragraph of the text below says why).
    env = dict(os.environ, UCX_TLS=os.environ.get("UCX_TLS", "tcp"),
               UCX_NET_DEVICES=os.environ.get("UCX_NET_DEVICES", "lo"))
    machine = f"{platform.machine()}, {os.cpu_count()} CPUs"
    load = os.getloadavg()[0]
    rows = []
    quiet_reps, all_reps = 0, 0
    med = lambda xs: sorted(xs)[len(xs) // 2] if xs else float("nan")
    for n in NET_SIZES:
        iters = max(3, NET_MIN_BYTES // n)
        one, win, nopool, tag, am, rndv = [], [], [], [], [], []
        # each repetition's ratios against its own UCX runs
        r_one, r_win, r_best, r_rndv = [], [], [], []
        used = 1
        for _ in range(repetitions):
            all_reps += 1
            if quiet and _wait_quiet(env, quiet):
                quiet_reps += 1
            # One repetition: the six runs back to back, in a random order,
            # so that no side always runs first (or just after the other).
            got = {}
            runs = {
                "one": lambda: _net_bench_mibps(exe, n, env, 1, 1)[0],
                "win": lambda: _net_bench_mibps(exe, n, env, NET_WINDOW, 1),
                "nopool": lambda: _net_bench_mibps(exe, n, env, NET_WINDOW, 0)[0],
                "tag": lambda: _perftest_mibps("tag_bw", n, iters, env),
                "am": lambda: _perftest_mibps("ucp_am_bw", n, iters, env),
                # UCX's own rendezvous with as many in flight as the window:
                # the same handshake a PUT makes, into one reused buffer
                "rndv": lambda: _perftest_mibps("ucp_am_bw", n, iters,
                                                dict(env, UCX_RNDV_THRESH="0"),
                                                ["-O", str(_net_window(n))]),
            }
            order = list(runs)
            random.shuffle(order)
            for k in order:
                got[k] = runs[k]()
            got["win"], used = got["win"]
            one.append(got["one"])
            win.append(got["win"])
            nopool.append(got["nopool"])
            ucx = [v for v in (got["tag"], got["am"]) if v is not None]
            if got["tag"] is not None:
                tag.append(got["tag"])
            if got["am"] is not None:
                am.append(got["am"])
            if ucx:
                r_one.append(got["one"] / max(ucx))
                r_win.append(got["win"] / max(ucx))
                # the target: the faster of a PUT's two ways against the
                # faster of UCX's two tests, in the same repetition
                r_best.append(max(got["one"], got["win"]) / max(ucx))
            if got["rndv"] is not None:
                rndv.append(got["rndv"])
                r_rndv.append(got["win"] / got["rndv"])
        rows.append((n, med(one), med(win), med(nopool), med(tag), med(am), used,
                     med(r_one), med(r_win), med(r_best), min(r_best, default=float("nan")),
                     max(r_best, default=float("nan")), med(rndv), med(r_rndv)))
        print(f"net PUT {n >> 20} MiB: libhurray one at a time {med(one):.0f} MiB/s, "
              f"window of {used} {med(win):.0f} (without the pool {med(nopool):.0f}), "
              f"tag_bw {med(tag):.0f}, ucp_am_bw {med(am):.0f}; ratios one {med(r_one):.2f}, "
              f"window {med(r_win):.2f}, best {med(r_best):.2f} "
              f"({min(r_best, default=0):.2f}-{max(r_best, default=0):.2f}); "
              f"UCX rendezvous, {_net_window(n)} in flight {med(rndv):.0f}, window / that "
              f"{med(r_rndv):.2f}")
    size = lambda n: f"{n >> 30} GiB" if n >= 1 << 30 else f"{n >> 20} MiB"
    table = ("| size | PUT, one at a time | PUT, window (PUTs in flight) | "
             "PUT, window, no pool | ucx_perftest tag_bw | ucx_perftest ucp_am_bw | "
             "one at a time / best of UCX | window / best of UCX | "
             "best of PUT / best of UCX (lowest-highest) | "
             "ucx_perftest ucp_am_bw, rendezvous, as many in flight | "
             "window / UCX rendezvous |\n"
             "|---|---|---|---|---|---|---|---|---|---|---|\n" +
             "".join(f"| {size(n)} | {o:.0f} MiB/s | {w:.0f} MiB/s ({u}) | {p:.0f} MiB/s | "
                     f"{t:.0f} MiB/s | {a:.0f} MiB/s | {ro:.2f} | {rw:.2f} | "
                     f"**{rb:.2f}** ({lo:.2f}-{hi:.2f}) | {rv:.0f} MiB/s | {rr:.2f} |\n"
                     for n, o, w, p, t, a, u, ro, rw, rb, lo, hi, rv, rr in rows))
    picture = "\nNot plotted (gnuplot missing).\n"
    if shutil.which("gnuplot"):
        gnuplot(os.path.join(docs_dir, "net-sweep.png"),
                [r[:6] for r in rows],
                'set logscale x 4; set xlabel "buffer size";'
                'set xtics ("1M" 1048576, "4M" 4194304, "16M" 16777216, "64M" 67108864,'
                ' "256M" 268435456, "1G" 1073741824);'
                'set xrange [786432:1431655765];'
                'set ylabel "MiB/s"; set yrange [0:*]; set key bottom right; set grid;'
                f'set title "PUT over UCX (UCX_TLS={env["UCX_TLS"]}, '
                f'UCX_NET_DEVICES={env["UCX_NET_DEVICES"]}, 127.0.0.1)";',
                [(3, 'with linespoints lw 2 title "libhurray-net PUT, window"'),
                 (2, 'with linespoints title "libhurray-net PUT, one at a time"'),
                 (4, 'with linespoints dt 2 title "libhurray-net PUT, window, no pool"'),
                 (5, 'with linespoints title "ucx_perftest tag_bw"'),
                 (6, 'with linespoints title "ucx_perftest ucp_am_bw"')])
        picture = "\n![PUT throughput by size](net-sweep.png)\n"
    return (f"\n{NET_BEGIN}\n## Network: PUT throughput over UCX\n\n"
            f"`bench/net_bench.cpp` PUTs CPU buffers from one process to a server process "
            f"over 127.0.0.1 with UCX_TLS={env['UCX_TLS']} and "
            f"UCX_NET_DEVICES={env['UCX_NET_DEVICES']}; a PUT is complete when the server "
            "has answered, its bytes having landed in memory the server owns. Beside it in "
            "the same run, interleaved size by size, UCX's own `ucx_perftest -t tag_bw` and "
            "`-t ucp_am_bw` (one process pair, one reused buffer each side) move the same "
            "sizes the same number of times. Each repetition makes the six runs back to back "
            "in a random order; throughputs are the median of "
            f"{repetitions} repetitions, and each ratio is the median of the {repetitions} "
            "repetitions' own ratios (a run against the UCX runs next to it in time, so that "
            "the machine's slower and faster minutes cancel), with the lowest and highest in "
            f"brackets. Each run moves at least {NET_MIN_BYTES >> 30} GiB and 3 transfers, "
            "after a warm-up round of one window. The target is a ratio of at least 0.90, "
            "in the bold column: the faster of a PUT's two ways below against the faster of "
            "UCX's two tests, each repetition against itself. An application chooses how it "
            "PUTs by size, as a UCX user chooses tagged or active messages; here one at a "
            "time was the faster way at 16 MiB (`bench/net_ab.sh BUILD 16M 16 "
            "\"--window 1\" \"--window 2\"`: the window 0.91x as fast, 2026-11-30; two "
            "destinations and the source no longer fit the 32 MiB L3), the window at "
            "1-4 MiB.\n\n"
            "- **One at a time**: `hurray_net_client_put_buffer`, one synchronous request and "
            "answer per PUT.\n"
            f"- **Window**: up to {NET_WINDOW} PUTs in flight, at most "
            f"{NET_WINDOW_BYTES >> 20} MiB of them but 2 at least (in brackets), "
            "`hurray_net_client_put_buffer_start`, then `hurray_net_client_put_wait` on the "
            "oldest. ucx_perftest keeps a window too: up to 32 sends in flight (its default "
            "`-O` for these tests), all overwriting one receive buffer. With 4 or more in "
            "flight the server answers PUTs under 4 MiB together, one message for up to half "
            "the window (docs/spec/network.md N15): at 1 MiB an answer per PUT cost 0.15-0.2 of "
            "the throughput (see \"Where a 1 MiB PUT's time goes\" below). Each PUT in "
            "flight lands in a buffer of its own (BP-NET-OWN), so a wider window touches more "
            "memory: from 16 MiB on, 4 measured slower than 2 (likely fewer cache hits).\n"
            "- **UCX's own rendezvous** (the last two columns): `ucx_perftest -t ucp_am_bw` "
            "with `UCX_RNDV_THRESH=0` and `-O` the window, so that every message waits "
            "for the receiver's go-ahead as a PUT does, with as many in flight as the "
            "window, all into one reused buffer. A PUT is a rendezvous because the server "
            "chooses and allocates the destination before any byte moves (BP-NET-OWN, "
            "BP-PUT-DEVICE); this column shows what the rendezvous itself costs over UCX's "
            "TCP transport, and the ratio next to it what libhurray-net adds.\n"
            f"- **One TCP device**: every run, libhurray-net's and UCX's, has "
            f"`UCX_NET_DEVICES={env['UCX_NET_DEVICES']}`, as two hosts with one network card each "
            "would have. Left to itself, UCX on one host also reaches the peer at 127.0.0.1 "
            "through the host's other addresses and splits each rendezvous over two rails: "
            "two TCP connections that take the same kernel path. In paired runs on "
            "2026-11-30 (`bench/net_ab.sh BUILD SIZE N \"--window 2\" "
            "\"UCX_NET_DEVICES=lo --window 2\"`, from 30 pairs at 1 MiB to 6 at 1 GiB), "
            "PUTs on lo alone were 1.08x as fast at 1 "
            "and 4 MiB, 0.93x at 16 MiB, 0.98x at 64 MiB and 1.01x at 1 GiB. "
            "ucx_perftest's ucp_am_bw sends on one lane either way.\n"
            "- **Where a PUT's time goes**: `bench/net_trace.py BUILD_DIR` times each step of "
            "a PUT (HURRAY_NET_TRACE); the section \"Where a 1 MiB PUT's time goes\" below "
            "reads such timelines against ucx_perftest's, and lists what was tried.\n"
            "- **Pool**: both rows above run the server with a receive pool the server "
            "application owns (`hurray_net_server_config.alloc`: page-aligned blocks wrapped "
            "with `hurray_buffer_wrap`, returned to the pool when the landed buffer is "
            "unreffed), the way ucx_perftest receives into memory it reuses. **No pool**: "
            "each PUT lands in a buffer the server allocates with `hurray_buffer_alloc`; the "
            "CPU backend reuses freed blocks up to HURRAY_CPU_CACHE_MB (256 MiB), so there "
            "only 1 GiB PUTs land in fresh memory and pay its page faults: a fault and a clear "
            "per 2 MiB huge page, and far more for memory the process never had before "
            "(`hurray_net_bench` prints the server's page faults and CPU time on stderr).\n\n"
            + ("Every run has its client on CPU 0 and its server on CPU 1 (`taskset`, and "
               "`hurray_net_bench --client-cpu 0 --server-cpu 1`): left to the scheduler, the "
               "two processes now and then share a CPU and that run loses up to 3x, on either "
               "side.\n\n" if NET_PIN else "") +
            "ucx_perftest polls without sleeping in both processes; libhurray-net polls for "
            "200 us (HURRAY_NET_SPIN_US), then sleeps on UCX's event file descriptor. The "
            "shared machine's noise moves ucx_perftest by 3x between runs; compare ratios "
            f"on the machine at hand ({machine}, load average {load:.1f} at the start)."
            + (f" Each repetition began only once a short `ucx_perftest -t ucp_am_bw` at "
               f"1 MiB had reached {quiet} MiB/s, a quiet phase of the shared machine "
               f"(`bench/run.py --net-quiet {quiet}`): {quiet_reps} of {all_reps} "
               "repetitions found one within 60 probes; the others ran when the probes "
               "gave up." if quiet else "") +
            "\n\n" + table + picture +
            f"{NET_END}\n")


def net_only(o):
    """--net-only: rewrite only the network section of the existing file."""
    section = net_sweep(o.build_dir, os.path.dirname(os.path.abspath(o.out)), o.repetitions,
                        o.net_quiet)
    text = open(o.out).read() if os.path.exists(o.out) else "# Performance\n"
    if NET_BEGIN in text and NET_END in text:
        head, rest = text.split(NET_BEGIN, 1)
        tail = rest.split(NET_END, 1)[1].lstrip("\n")
        text = head.rstrip("\n") + "\n" + section + ("\n" + tail if tail else "")
    else:
        text = text.rstrip("\n") + "\n" + section
    with open(o.out, "w") as f:
        f.write(text)
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build_dir")
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "docs",
                                                  "performance.md"))
    ap.add_argument("--net-only", action="store_true",
                    help="net (issue 9): run only the network sweep, rewrite only its section")
    ap.add_argument("--net-quiet", type=int, default=0, metavar="MIBPS",
                    help="begin each network repetition only once a short ucx_perftest at "
                         "1 MiB reaches MIBPS (a quiet phase; up to 60 probes), 0: never wait")
    o = ap.parse_args()
    if o.net_only:
        return net_only(o)
    med, ctx = {}, {}
    # WebGPU (issue 25): Dawn on OpenGL ES through EGL, without a display.
    os.environ.setdefault("EGL_PLATFORM", "surfaceless")
    os.environ.setdefault("HURRAY_WEBGPU_BACKEND", "opengles")
    for name in ("hurray_bench", "hurray_backend_bench", "hurray_ipc_bench",
                 "hurray_webgpu_bench", "hurray_release_bench"):
        exe = os.path.join(o.build_dir, "bench", name)
        if not os.path.exists(exe):
            continue
        # Random interleaving: each repetition of each benchmark runs at a
        # random point, so that libhurray and its baseline share the
        # machine's moods and the process's heap state alike.
        res = subprocess.run([exe, "--benchmark_format=json",
                              f"--benchmark_repetitions={o.repetitions}",
                              "--benchmark_enable_random_interleaving=true",
                              "--benchmark_report_aggregates_only=true"],
                             capture_output=True, text=True, check=True)
        doc = json.loads(res.stdout)
        # medians, in nanoseconds whatever unit a benchmark reports in
        scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
        med.update({b["run_name"]: b["real_time"] * scale[b.get("time_unit", "ns")]
                    for b in doc["benchmarks"]
                    if b.get("aggregate_name") == "median" and not b.get("error_occurred")})
        ctx = doc["context"]
    machine = f"{platform.machine()}, {ctx.get('num_cpus')} CPUs @ {ctx.get('mhz_per_cpu')} MHz"
    rows = []
    for what, ours, base, base_desc in PAIRS:
        if ours not in med or base not in med:
            rows.append(f"| {what} | not run (device absent) | {base_desc} | - | - | {machine} |")
            continue
        r = med[ours] / med[base]
        ratio = f"{r:.2f}" if r >= 0.01 else f"{r:.1e}"  # ipc: 1 GiB is ~1e-4
        rows.append(f"| {what} | {fmt(med[ours])} | {base_desc} | {fmt(med[base])} | "
                    f"{ratio} | {machine} |")
        print(f"{what}: {fmt(med[ours])} vs {fmt(med[base])}, ratio {r:.2f}")
    counts = callgrind_counts(o.build_dir)
    picture = plot_sweep(med, os.path.dirname(os.path.abspath(o.out)))
    picture += plot_ipc_sweep(med, os.path.dirname(os.path.abspath(o.out)))  # ipc (issue 6)
    picture += net_sweep(o.build_dir, os.path.dirname(os.path.abspath(o.out)),
                         o.repetitions, o.net_quiet)  # net (issue 9)
    kept = kept_sections(o.out)
    with open(o.out, "w") as f:
        f.write("# Performance\n\n"
                "Written by `bench/run.py BUILD_DIR` (Google Benchmark, median of "
                f"{o.repetitions} repetitions). Each row runs libhurray and a baseline doing "
                "the same work side by side in one process; the ratio is libhurray's time "
                "over the baseline's (below 1: faster). Absolute times vary with the "
                "machine; the ratio is what to compare.\n\n"
                "| what | libhurray | baseline | baseline time | ratio | machine |\n"
                "|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n" + counts + picture +
                kept)
    return 0


if __name__ == "__main__":
    sys.exit(main())
