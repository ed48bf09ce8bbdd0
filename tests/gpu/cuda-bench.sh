#!/usr/bin/env bash
# cuda-bench.sh - the CUDA backend's overhead on a real NVIDIA GPU, in one
# command:
#
#     bash tests/gpu/cuda-bench.sh          (from the repository root)
#
# Builds libhurray, the CUDA plugin and bench/cuda_bench.cpp (Release, in a
# temporary folder) and runs hurray_cuda_bench: allocate + free of 1 MiB and
# event record + host wait, each through libhurray and as the same raw driver
# calls, side by side in one run (random interleaving, REPS repetitions).
# Both sides run with the device's primary context current, as in a CUDA
# program; extra rows run libhurray on a thread with no current context.
# Prints the medians and the ratio libhurray / raw as a Markdown table, and
# writes the JSON to $HURRAY_BENCH_OUT when that is set.
#
# Needs cmake, make or ninja, g++, cuda.h ($CUDA_HOME/include,
# /usr/local/cuda/include or /usr/include) and Google Benchmark (Debian:
# libbenchmark-dev; or a copy of its prefix named in CMAKE_PREFIX_PATH).
#
# Exit codes: 0 measured; 2 could not build; 3 no CUDA device (every row an
# error row).
#
# Environment: REPS (repetitions, default 9), JOBS (default nproc),
# HURRAY_BENCH_BUILD_DIR (build here instead of a temporary folder),
# HURRAY_BENCH_OUT (where to write the JSON).
set -uo pipefail

script=cuda-bench
# shellcheck source-path=SCRIPTDIR source=device-script.sh
source "$(dirname "${BASH_SOURCE[0]}")/device-script.sh"
reps=${REPS:-9}
build=${HURRAY_BENCH_BUILD_DIR:-$work/build}

cuda_include=$(find_cuda_include)
[[ -n $cuda_include ]] || die 2 "cannot build: cuda.h not found"
generator=()
command -v make >/dev/null 2>&1 || generator=(-G Ninja)

say "configuring in $build"
if ! cmake "${generator[@]}" -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DHURRAY_BUILD_TESTS=OFF -DHURRAY_BUILD_BENCH=ON -DHURRAY_WERROR=OFF \
    -DHURRAY_ABI_CHECKS=OFF -DHURRAY_BACKEND_VULKAN=OFF -DHURRAY_BACKEND_OPENCL=OFF \
    -DHURRAY_BACKEND_HIP=OFF -DHURRAY_BACKEND_LEVEL_ZERO=OFF \
    -DHURRAY_CUDA_INCLUDE_DIR="$cuda_include" >"$work/configure.log" 2>&1; then
  tail -n 30 "$work/configure.log"
  die 2 "cannot build: cmake configure failed"
fi
if ! cmake --build "$build" -j "$jobs" --target hurray hurray-cuda hurray_cuda_bench \
    >"$work/build.log" 2>&1; then
  tail -n 40 "$work/build.log"
  die 2 "cannot build: see the errors above"
fi

json=${HURRAY_BENCH_OUT:-$work/cuda-bench.json}
say "running hurray_cuda_bench ($reps repetitions, random interleaving)"
HURRAY_BACKENDS=cpu,cuda "$build/bench/hurray_cuda_bench" \
  --benchmark_repetitions="$reps" --benchmark_enable_random_interleaving=true \
  --benchmark_min_time=0.2 --benchmark_report_aggregates_only=true \
  --benchmark_out="$json" --benchmark_out_format=json

python3 - "$json" <<'EOF'
import json, sys
data = json.load(open(sys.argv[1]))
errors = sorted({b["name"] for b in data["benchmarks"] if b.get("error_occurred")})
med = {b["run_name"]: b["real_time"] for b in data["benchmarks"]
       if b.get("aggregate_name") == "median" and not b.get("error_occurred")}
if not med:
    print("cuda-bench: no CUDA device: every benchmark reported an error (%s)" % ", ".join(errors))
    sys.exit(3)
ctx = data["context"]
print("\n%s, %d CPUs at %s MHz\n" % (ctx.get("host_name", "?"), ctx.get("num_cpus", 0),
                                     ctx.get("mhz_per_cpu", "?")))
print("| operation | libhurray (median) | raw CUDA (median) | ratio |")
print("|---|---|---|---|")
for op, label in (("AllocFree", "allocate + free 1 MiB (STANDARD)"),
                  ("EventWait", "event record + host wait (EVENT handoff)")):
    r = med.get("BM_%s_Raw_CUDA" % op)
    for side, note in (("Hurray", ""), ("HurrayNoContext", ", no current context")):
        h = med.get("BM_%s_%s_CUDA" % (op, side))
        if h is None or r is None:
            print("| %s%s | %s | %s | - |" % (label, note, h, r))
            continue
        print("| %s%s | %.2f us | %.2f us | %.3f |" % (label, note, h / 1000, r / 1000, h / r))
EOF
