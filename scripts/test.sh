#!/usr/bin/env bash
# Build libhurray and run the whole test suite (the CMake presets of
# CMakePresets.json, then valgrind and libFuzzer):
#   1. RelWithDebInfo: unit tests, hurray-inspect contract, ABI checks,
#      consumers of the installed library; then three mutants of
#      scripts/mutate.sh --ci, each of which must be caught; then, as root,
#      the Debian packages: scripts/package.sh (lintian clean) and
#      tests/install/run.sh (dpkg -i, use from /usr, purge);
#   2. AddressSanitizer + UndefinedBehaviorSanitizer: the whole suite again
#      (less the ABI checks, which need the plain build, and the benchmarks'
#      smoke runs, which stage 1 makes);
#   3. ThreadSanitizer: the concurrency tests (ctest -L concurrency), building
#      only what they run (target hurray_concurrency_checks);
#   4. valgrind memcheck over the unit-test programs of stage 1: no error,
#      no definite or indirect leak;
#   5. libFuzzer (clang-14): each fuzz target for HURRAY_FUZZ_SECONDS (default
#      60) on its seed corpus (scripts/fuzz.sh).
# Installs missing Debian packages when run as root. .ci/run calls this.
# Environment: HURRAY_BUILD_PREFIX (default build-test), JOBS (default nproc),
# HURRAY_SANITIZERS=0 to run stage 1 only.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh test vulkan opencl gpu fuzz interop net webgpu package
# Dawn for the WebGPU tests (npm's bun-webgpu-linux-x64, pinned): installed
# once here, into the cache the plugin looks in; a failed install fails the
# run (the WebGPU tests would fail anyway: they are never skipped).
scripts/webgpu.sh >/dev/null
# PoCL and Mesa keep kernel and shader caches: somewhere private and temporary.
export POCL_CACHE_DIR=${POCL_CACHE_DIR:-$(mktemp -d)}
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-$(mktemp -d)}
# No display here: Mesa's EGL (Dawn's OpenGL ES backend, the WebGPU plugin)
# runs surfaceless. Without it eglInitialize fails, WebGPU is unavailable,
# and Mesa leaks the block of that failed initialisation (which LeakSanitizer
# reports in any program that probes every backend, hurray-inspect --devices).
export EGL_PLATFORM=${EGL_PLATFORM:-surfaceless}

prefix=${HURRAY_BUILD_PREFIX:-build-test}
jobs=${JOBS:-$(nproc)}
# The Level Zero loader's null driver: the stand-in GPU of the level-zero
# tests (built once from Debian's level-zero source package).
ze_null_dir=$(realpath -m "$prefix/ze-null")
scripts/build-ze-null.sh "$ze_null_dir" ||
  echo "test.sh: no Level Zero null driver: its stand-in tests are not registered"

stage() {  # stage PRESET CTEST_ARGS...   (presets: CMakePresets.json)
  # $stage_target: build only that target (default: everything).
  local name=$1 dir=$prefix/$1; shift
  echo "=== [$name] configure, build, test"
  cmake --preset "$name" -B "$dir" "-DHURRAY_ZE_NULL_DIR=$ze_null_dir" >/dev/null
  cmake --build "$dir" -j "$jobs" ${stage_target:+--target "$stage_target"}
  ctest --test-dir "$dir" -j "$jobs" --output-on-failure --timeout 600 "$@"
}

memcheck() {
  echo "=== [valgrind] memcheck of the unit-test programs"
  local dir=$prefix/default/tests passed=0 failed=0 t
  set -f  # the Catch2 tags in the list below are not globs
  for t in hurray_core_tests hurray_handoff_tests "runtime/hurray_loader_tests [lazy]" "runtime/hurray_loader_tests [none]" \
           "hurray_conformance_tests --hurray-device=0x00" \
           ipc/hurray_ipc_tests runtime/hurray_runtime_tests dlpack/hurray_dlpack_tests; do
    # ipc (issue 6): the producer side, its peers are exec'd; interop (issue 7): DLPack; runtime: dispatch
    # shellcheck disable=SC2086
    if valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect \
        -q $dir/$t >"$prefix/valgrind.log" 2>&1; then
      echo "valgrind: $t: clean"; passed=$((passed + 1))
    else
      echo "valgrind: $t: FAILED"; cat "$prefix/valgrind.log"; failed=$((failed + 1))
    fi
  done
  set +f
  echo "valgrind: $passed passed, $failed failed"
  [[ $failed == 0 ]]
}

# ccache for stage 1 and the mutate sample only: the sample's scratch copy
# then compiles nothing the default build did not (its build sits where
# build-test/default does, scripts/mutate.sh), a few minutes saved on a clean
# checkout. A caller's own launcher (CMAKE_CXX_COMPILER_LAUNCHER) is kept.
cache_env=()
if command -v ccache >/dev/null && [[ -z ${CMAKE_CXX_COMPILER_LAUNCHER:-} ]]; then
  cache_env=(CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
             "CCACHE_DIR=$(realpath -m "$prefix/ccache")" "CCACHE_BASEDIR=$PWD" CCACHE_NOHASHDIR=1)
fi
with_cache() {  # with_cache COMMAND...: run it (in the caller's subshell) with ccache
  if [[ ${#cache_env[@]} -gt 0 ]]; then export "${cache_env[@]}"; fi
  "$@"
}
(with_cache stage default)
# A fixed sample of the mutation tests (issue 23): three mutants, each must
# make its tests fail (scripts/mutate.sh --ci; the whole list is run on
# demand, docs/mutation-testing.md).
echo "=== [mutate] a fixed sample of scripts/mutate.sh"
(HURRAY_MUTATE_DIR=$prefix/mutate with_cache scripts/mutate.sh --ci --jobs "$jobs")
# The Debian packages (issue 31): scripts/package.sh builds them (with stage
# 1's compiler cache) and runs lintian, tests/install/run.sh installs them
# with dpkg -i, uses them with an empty environment and purges them. It
# changes the machine's /usr, so only as root (CI: a throwaway machine).
if [[ $(id -u) -eq 0 && ${HURRAY_INSTALL_TEST:-1} != 0 ]]; then
  echo "=== [install] scripts/package.sh, then tests/install/run.sh"
  (with_cache scripts/package.sh "$prefix/debs")
  tests/install/run.sh "$prefix/debs"
else
  echo "=== [install] NOT RUN: needs root (dpkg -i); HURRAY_INSTALL_TEST=0 turns it off"
fi
if [[ ${HURRAY_SANITIZERS:-1} != 0 ]]; then
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
  stage asan-ubsan
  export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
  stage_target=hurray_concurrency_checks stage tsan -L concurrency
  memcheck
  echo "=== [fuzz] libFuzzer, ${HURRAY_FUZZ_SECONDS:-60} s per target"
  HURRAY_FUZZ_BUILD=$prefix/fuzz scripts/fuzz.sh "${HURRAY_FUZZ_SECONDS:-60}"
fi
echo "=== all stages passed"
