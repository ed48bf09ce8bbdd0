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


def fmt(ns):
    return f"{ns:.1f} ns" if ns < 1e4 else f"{ns / 1e3:.1f} us"


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
    with tempfile.NamedTemporaryFile("w", suffix=".dat", delete=False) as f:
        for n, ours, base in rows:
            f.write(f"{n} {ours} {base}\n")
        data = f.name
    png = os.path.join(docs_dir, "batch-validation.png")
    script = (f'set terminal pngcairo noenhanced size 800,480; set output "{png}";'
              'set logscale x 4; set xlabel "handles in the table";'
              'set xtics ("16" 16, "256" 256, "4K" 4096, "64K" 65536, "1M" 1048576, "4M" 4194304);'
              'set ylabel "ns per handle"; set key top right; set grid;'
              'set title "hurray_table_validate vs memcpy of the same bytes";'
              f'plot "{data}" using 1:2 with linespoints title "hurray_table_validate",'
              f' "{data}" using 1:3 with linespoints title "memcpy"')
    subprocess.run(["gnuplot", "-e", script], check=True)
    os.unlink(data)
    return ("\n## Batch validation by table size\n\n"
            "![validate vs memcpy, ns per handle](batch-validation.png)\n\n"
            "| handles | validate ns/handle | memcpy ns/handle | ratio |\n|---|---|---|---|\n" +
            "".join(f"| {n} | {ours:.2f} | {base:.2f} | {ours / base:.2f} |\n"
                    for n, ours, base in rows))


def callgrind_counts(build_dir):
    """Instructions per decode + validate of one handle, from callgrind."""
    exe = os.path.join(build_dir, "bench", "hurray_count_validate")
    totals = {}
    for n in (10000, 20000):
        out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                              exe, str(n)], capture_output=True, text=True)
        for line in out.stderr.splitlines():
            if "Collected :" in line:
                totals[n] = int(line.split(":")[-1].strip())
    if len(totals) != 2:
        return "\nInstruction counts: valgrind not available.\n"
    per_call = (totals[20000] - totals[10000]) / 10000
    print(f"decode + validate of one handle: {per_call:.0f} instructions (callgrind)")
    return ("\n## Instruction counts (callgrind: the same on any machine)\n\n"
            "| path | instructions |\n|---|---|\n"
            f"| hurray_handle_decode + hurray_handle_validate, one valid handle | {per_call:.0f} |\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build_dir")
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "docs",
                                                  "performance.md"))
    o = ap.parse_args()
    med, ctx = {}, {}
    for name in ("hurray_bench", "hurray_backend_bench"):
        exe = os.path.join(o.build_dir, "bench", name)
        if not os.path.exists(exe):
            continue
        res = subprocess.run([exe, "--benchmark_format=json",
                              f"--benchmark_repetitions={o.repetitions}",
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
        rows.append(f"| {what} | {fmt(med[ours])} | {base_desc} | {fmt(med[base])} | "
                    f"{r:.2f} | {machine} |")
        print(f"{what}: {fmt(med[ours])} vs {fmt(med[base])}, ratio {r:.2f}")
    counts = callgrind_counts(o.build_dir)
    picture = plot_sweep(med, os.path.dirname(os.path.abspath(o.out)))
    with open(o.out, "w") as f:
        f.write("# Performance\n\n"
                "Written by `bench/run.py BUILD_DIR` (Google Benchmark, median of "
                f"{o.repetitions} repetitions). Each row runs libhurray and a baseline doing "
                "the same work side by side in one process; the ratio is libhurray's time "
                "over the baseline's (below 1: faster). Absolute times vary with the "
                "machine; the ratio is what to compare.\n\n"
                "| what | libhurray | baseline | baseline time | ratio | machine |\n"
                "|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n" + counts + picture)
    return 0


if __name__ == "__main__":
    sys.exit(main())
