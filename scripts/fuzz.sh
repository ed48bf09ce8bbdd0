#!/usr/bin/env bash
# Fuzz libhurray with libFuzzer: build the targets of tests/fuzz with clang-14
# (AddressSanitizer, UndefinedBehaviorSanitizer and coverage inside the
# library too), run each on a copy of its seed corpus for SECONDS, and report
# per target the executions, the coverage and whether it found anything.
#
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET]     (default 60)
#
# Installs clang-14 and libclang-rt-14-dev (and cmake, make) when missing and
# run as root. Environment:
#   HURRAY_FUZZ_BUILD    build directory (default build-fuzz)
#   HURRAY_FUZZ_TARGETS  targets to run (default: all of them)
#   JOBS                 parallel build jobs (default 2)
#   HURRAY_FUZZ_JOBS     targets fuzzed at the same time (default JOBS)
#   HURRAY_FUZZ_SKIP_BAD_ENUMS=1  fuzz_handle leaves out its out-of-range
#                        enum probe (see tests/fuzz/fuzz_handle.cpp)
# Logs and crash inputs go to $HURRAY_FUZZ_BUILD/fuzz-out/<target>/; the
# corpus in the repository is never modified (the run works on a copy).
#
# Exit status: 0 nothing found; 1 a target crashed or broke a property (the
# input that did it is printed); 2 usage, dependency or build error.
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${1:-60}
if [[ $# -gt 1 || ! $secs =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/fuzz.sh [SECONDS_PER_TARGET]   (a positive integer, default 60)" >&2
  exit 2
fi
build=${HURRAY_FUZZ_BUILD:-build-fuzz}
jobs=${JOBS:-2}
read -r -a targets <<<"${HURRAY_FUZZ_TARGETS:-fuzz_handle fuzz_table_property fuzz_inspect_input fuzz_ipc_message fuzz_dlpack_import fuzz_net_message fuzz_cpu_ipc_import fuzz_gpu_ipc_parse}"

# ------------------------------------------------------------ dependencies --
missing=()
for pkg in clang-14 libclang-rt-14-dev cmake make; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "fuzz.sh: installing missing Debian packages: ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then
    echo "fuzz.sh: not root; run: sudo apt-get install -y ${missing[*]}" >&2
    exit 2
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# ------------------------------------------------------------------- build --
if ! grep -q 'tests/fuzz' CMakeLists.txt; then
  echo "fuzz.sh: CMakeLists.txt does not add tests/fuzz (option HURRAY_FUZZ)" >&2
  exit 2
fi
if [[ -f $build/CMakeCache.txt ]] &&
   ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++-14$' "$build/CMakeCache.txt"; then
  echo "fuzz.sh: $build was configured with another compiler; remove it or set HURRAY_FUZZ_BUILD" >&2
  exit 2
fi
echo "=== configure and build ${targets[*]} in $build (clang-14, -j$jobs)"
# Only the fuzz targets are built: no tests, benchmarks, ABI checks or
# device plugins, and other people's clang warnings do not stop the run.
mkdir -p "$build"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 -DHURRAY_FUZZ=ON \
  -DHURRAY_BUILD_TESTS=OFF -DHURRAY_BUILD_BENCH=OFF -DHURRAY_ABI_CHECKS=OFF \
  -DHURRAY_WERROR=OFF -DHURRAY_BACKEND_VULKAN=OFF -DHURRAY_BACKEND_OPENCL=OFF \
  -DHURRAY_BACKEND_CUDA=OFF -DHURRAY_BACKEND_HIP=OFF -DHURRAY_BACKEND_LEVEL_ZERO=OFF \
  >"$build/configure.log" 2>&1 || { tail -n 50 "$build/configure.log" >&2; exit 2; }
cmake --build "$build" -j "$jobs" --target "${targets[@]}" >"$build/fuzz-build.log" 2>&1 ||
  { tail -n 50 "$build/fuzz-build.log" >&2; exit 2; }

# --------------------------------------------------------------------- run --
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
work=$(mktemp -d "${TMPDIR:-/tmp}/hurray-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

build_abs=$(cd "$build" && pwd)
# One target: its report (what the loop below printed before) goes to
# $work/$t.report, its summary line to $work/$t.summary, and the file
# $work/$t.found exists when it found something.
fuzz_one() {
  local t=$1 exe=$build_abs/tests/fuzz/$1 out=$build_abs/fuzz-out/$1 rc
  rm -rf "$out"
  mkdir -p "$out/artifacts" "$work/$t"
  cp -R "tests/fuzz/corpus/$t/." "$work/$t/"
  {
  echo "=== $t: ${secs}s on a copy of tests/fuzz/corpus/$t ($(ls "$work/$t" | wc -l) seeds)"
  set +e
  (cd "$out" && "$exe" -max_total_time="$secs" -timeout=10 -print_final_stats=1 \
     -artifact_prefix="$out/artifacts/" "$work/$t") >"$out/log" 2>&1
  rc=$?
  set -e
  local execs last cov ft corp result
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/log" | tail -n 1)
  last=$(grep -E '^#[0-9]+.*cov: ' "$out/log" | tail -n 1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
  shopt -s nullglob
  local crashes=("$out"/artifacts/*)
  shopt -u nullglob
  if [[ $rc -ne 0 || ${#crashes[@]} -gt 0 ]]; then
    : >"$work/$t.found"
    result="FOUND (exit $rc)"
    echo "--- $t found something; log: $out/log"
    grep -m 3 -E 'PROPERTY BROKEN|runtime error|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|SUMMARY: ' \
      "$out/log" | sed 's/^/    /' || true
    for c in "${crashes[@]}"; do echo "    input: $c"; done
    echo "    reproduce: $exe $(printf '%s ' "${crashes[@]}")"
  else
    result="nothing found"
  fi
  echo "    executions ${execs:--}, cov ${cov:--}, ft ${ft:--}, corpus ${corp:--}: $result"
  } >"$work/$t.report"
  printf '%-22s %12s %6s %7s %7s  %s\n' "$t" "${execs:--}" "${cov:--}" "${ft:--}" \
    "${corp:--}" "$result" >"$work/$t.summary"
}

# The targets run $fuzz_jobs at a time (each is one single-threaded process
# for $secs seconds), their reports printed in the order of the list.
fuzz_jobs=${HURRAY_FUZZ_JOBS:-$jobs}
echo "=== running ${#targets[@]} targets, $fuzz_jobs at a time"
running=0
for t in "${targets[@]}"; do
  if (( running >= fuzz_jobs )); then wait -n || true; running=$((running - 1)); fi
  fuzz_one "$t" &
  running=$((running + 1))
done
wait || true
found=0
for t in "${targets[@]}"; do
  if [[ ! -e $work/$t.summary ]]; then  # its run of this script failed
    found=1
    echo "--- $t: no result (the run failed: $build_abs/fuzz-out/$t/log)"
    printf '%-22s %12s %6s %7s %7s  %s\n' "$t" - - - - "NO RESULT" >"$work/$t.summary"
    continue
  fi
  cat "$work/$t.report"
  [[ ! -e $work/$t.found ]] || found=1
done
echo "=== summary (${secs}s per target)"
printf '%-22s %12s %6s %7s %7s  %s\n' target executions cov ft corpus result
for t in "${targets[@]}"; do cat "$work/$t.summary"; done
exit $found
