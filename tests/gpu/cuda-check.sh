#!/usr/bin/env bash
# cuda-check.sh - the CUDA backend on a real NVIDIA GPU, in one command.
#
#     bash tests/gpu/cuda-check.sh          (from the repository root)
#
# On a machine with an NVIDIA GPU and its driver, this builds what it needs
# and proves the CUDA plugin (src/backends/cuda) on the device, in under five
# minutes:
#
#   0. device   a CUDA device is there: libcuda.so.1 (or $HURRAY_CUDA_LIBRARY)
#               loads, cuInit(0) succeeds, cuDeviceGetCount >= 1. If not, it
#               stops at once, before building anything, with
#               "no CUDA device: <reason>" and exit code 3.
#   1. tools    cmake, make (or ninja), g++ and Catch2 2.x; missing Debian
#               packages are installed with apt-get when run as root (and apt
#               can reach a mirror). Catch2 is also found through
#               $CMAKE_PREFIX_PATH (a copy of <prefix>/include/catch2 and
#               <prefix>/lib/cmake/Catch2 carried to a machine without apt). cuda.h is taken from $CUDA_HOME/include,
#               /usr/local/cuda/include or /usr/include.
#   2. build    libhurray, the CUDA plugin and the test programs in a
#               temporary build folder (tests on; benchmarks, ABI checks and
#               the other backends off; warnings not fatal: a newer compiler
#               must not stop a device check).
#   3. parts    conformance  the backend conformance suite for device tag
#                            0x01 (hurray_conformance_tests --hurray-device=0x01):
#                            every offered class at 64..65536 alignment,
#                            round trips, EVENT and CONSUMER_STREAM handoffs
#               classes      all four memory classes allocated, each
#                            classified by cuPointerGetAttributes and by the
#                            plugin and matched against the class asked for
#                            (PEER needs a second GPU: on one GPU it must be
#                            refused with the reason)
#               event        an EVENT handoff between two streams: a PTX
#                            kernel writes the data on stream A, the event is
#                            recorded on A, hurray_handoff_acquire on stream B,
#                            a copy on B shows the kernel's data
#               ipc          two processes: device memory and an interprocess
#                            event exported through the plugin's ipc
#                            functions, sent over a socketpair, imported,
#                            waited on and read back by the child
#               ipc-channel  libhurray's IPC channel (hurray_ipc.h) with the
#                            real plugin (hurray_ipc_tests "[.cuda]",
#                            HURRAY_BACKENDS=cpu,cuda): a SHAREABLE STANDARD
#                            buffer and its interprocess event sent with
#                            hurray_ipc_send to hurray_ipc_test_peer, which
#                            acquires (waits on the event), reads the 64 KiB
#                            back with cuMemcpyDtoH and releases; then a
#                            consumer SIGKILLed while holding a buffer, which
#                            the producer reclaims and frees. Built apart
#                            from the rest: if it does not build, this part
#                            fails and the others still run
#               ipc-wrapped-vmm  memory libhurray did not allocate, between
#                            two processes over libhurray's channel
#                            (hurray_cuda_ipc_tests "[process]",
#                            HURRAY_CUDA_IPC_REAL=1, consumer
#                            hurray_cuda_ipc_peer): four pieces of one
#                            cuMemAlloc allocation wrapped (one a view) and
#                            sent, read back and marked by the consumer
#                            (cuIpcGetMemHandle of the allocation, opened
#                            once); SHAREABLE memory from hurray_buffer_alloc
#                            (VMM: cuMemCreate, sent as a POSIX descriptor)
#                            and two views of it; the caller's own VMM
#                            allocation wrapped at an offset; a consumer
#                            SIGKILLed holding imported VMM memory, which the
#                            producer reclaims and frees
#               release      hurray_handoff_release_after on the device
#                            (hurray_cuda_device_tests "[release]"): 3000
#                            releases from 4 threads behind gate kernels
#                            (a given stream, the plugin's stream, an
#                            event): none before the host opens the gate,
#                            each exactly once after, each seeing the
#                            kernel's mark; a plugin state shut down with
#                            200 releases pending: quick, none called, the
#                            late host functions harmless
#               plugin       the plugin's own tests through its table
#                            (hurray_cuda_tests), now with a device
#   4. summary  one PASS/FAIL line per part.
#
# Exit codes: 0 every part passed; 1 a part failed; 2 the check could not be
# built (tools, cuda.h or the CUDA tests missing); 3 no CUDA device.
#
# Environment: HURRAY_CUDA_LIBRARY (driver library, default libcuda.so.1),
# CUDA_HOME, JOBS (build jobs, default nproc), HURRAY_CHECK_BUILD_DIR (build
# here instead of a temporary folder, which is removed at exit),
# HURRAY_CHECK_TIMEOUT (seconds per part, default 120),
# HURRAY_CHECK_WITHOUT_DEVICE=1 (go on without a device: to try the build on
# a machine without a GPU; every part then fails).
set -uo pipefail

start=$(date +%s)
script=cuda-check
# shellcheck source-path=SCRIPTDIR source=device-script.sh
source "$(dirname "${BASH_SOURCE[0]}")/device-script.sh"
part_timeout=${HURRAY_CHECK_TIMEOUT:-120}
build=${HURRAY_CHECK_BUILD_DIR:-$work/build}

# ---- 0. is there a CUDA device? ----------------------------------------------
device_probe_c() {
  cat >"$work/probe.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
typedef int (*init_fn)(unsigned);
typedef int (*count_fn)(int *);
typedef int (*name_fn)(int, const char **);
int main(void) {
  const char *lib = getenv("HURRAY_CUDA_LIBRARY");
  if (lib == NULL || *lib == '\0') lib = "libcuda.so.1";
  void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) { printf("%s\n", dlerror()); return 1; }
  init_fn init = (init_fn)dlsym(h, "cuInit");
  count_fn count = (count_fn)dlsym(h, "cuDeviceGetCount");
  name_fn name = (name_fn)dlsym(h, "cuGetErrorName");
  if (init == NULL || count == NULL) { printf("%s has no cuInit or cuDeviceGetCount\n", lib); return 1; }
  int r = init(0);
  if (r != 0) {
    const char *n = NULL;
    if (name == NULL || name(r, &n) != 0 || n == NULL)
      n = r == 34 ? "CUDA_ERROR_STUB_LIBRARY" : r == 100 ? "CUDA_ERROR_NO_DEVICE" : "CUresult";
    printf("[cuInit] %s (%d) from %s\n", n, r, lib);
    return 1;
  }
  int c = 0;
  r = count(&c);
  if (r != 0 || c < 1) { printf("[cuDeviceGetCount] %d device(s), CUresult %d\n", c, r); return 1; }
  printf("%d CUDA device(s) through %s\n", c, lib);
  return 0;
}
EOF
  cc -o "$work/probe" "$work/probe.c" -ldl 2>"$work/probe.log" || return 2
  "$work/probe"
}

device_probe_python() {
  python3 - <<'EOF'
import ctypes, os, sys
lib = os.environ.get("HURRAY_CUDA_LIBRARY") or "libcuda.so.1"
try:
    h = ctypes.CDLL(lib, mode=os.RTLD_NOW)
except OSError as e:
    print(e); sys.exit(1)
r = h.cuInit(0)
if r != 0:
    print("[cuInit] CUresult %d from %s" % (r, lib)); sys.exit(1)
c = ctypes.c_int(0)
r = h.cuDeviceGetCount(ctypes.byref(c))
if r != 0 or c.value < 1:
    print("[cuDeviceGetCount] %d device(s), CUresult %d" % (c.value, r)); sys.exit(1)
print("%d CUDA device(s) through %s" % (c.value, lib))
EOF
}

probe_rc=2
if command -v cc >/dev/null 2>&1; then
  device_line=$(device_probe_c); probe_rc=$?
fi
if [[ $probe_rc == 2 ]] && command -v python3 >/dev/null 2>&1; then
  device_line=$(device_probe_python); probe_rc=$?
fi
if [[ $probe_rc == 2 ]]; then
  # Neither a C compiler nor Python: at least look for the driver library.
  if [[ -z ${HURRAY_CUDA_LIBRARY:-} ]] && ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
    device_line="libcuda.so.1: not in the dynamic linker's cache (ldconfig -p)"; probe_rc=1
  else
    device_line="driver library present (not initialised: no cc or python3 to try it)"; probe_rc=0
  fi
fi
if [[ $probe_rc != 0 ]]; then
  printf 'no CUDA device: %s\n' "${device_line:-unknown reason}"
  [[ ${HURRAY_CHECK_WITHOUT_DEVICE:-0} == 1 ]] || exit 3
  say "HURRAY_CHECK_WITHOUT_DEVICE=1: building anyway (every part will fail)"
fi
say "device: $device_line"

# ---- 1. tools --------------------------------------------------------------------
missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
# Ninja builds where make is missing (a CUDA image often ships cmake and
# ninja without make).
generator=()
if ! command -v make >/dev/null 2>&1; then
  if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); else missing+=(make); fi
fi
catch2_found() {
  [[ -e /usr/include/catch2/catch.hpp ]] && return 0
  local p
  IFS=: read -ra prefixes <<<"${CMAKE_PREFIX_PATH:-}"
  for p in "${prefixes[@]}"; do
    [[ -n $p && -e $p/include/catch2/catch.hpp ]] && return 0
  done
  return 1
}
command -v g++ >/dev/null 2>&1 || missing+=(g++)
catch2_found || missing+=(catch2)
cuda_include=$(find_cuda_include)
if [[ ${#missing[@]} -gt 0 || -z $cuda_include ]]; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    pkgs=("${missing[@]}")
    [[ -z $cuda_include ]] && pkgs+=(nvidia-cuda-dev)  # Debian non-free: /usr/include/cuda.h
    say "installing missing Debian packages: ${pkgs[*]}"
    export DEBIAN_FRONTEND=noninteractive
    if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${pkgs[@]}"; } \
        >"$work/apt.log" 2>&1; then
      say "apt-get could not install ${pkgs[*]}:"
    fi
    tail -n 3 "$work/apt.log" 2>/dev/null
    [[ -f /usr/include/cuda.h && -z $cuda_include ]] && cuda_include=/usr/include
  fi
  for tool in cmake g++; do
    command -v $tool >/dev/null 2>&1 ||
      die 2 "cannot build: $tool is missing (Debian: apt-get install $tool)"
  done
  command -v make >/dev/null 2>&1 || command -v ninja >/dev/null 2>&1 ||
    die 2 "cannot build: neither make nor ninja is there (Debian: apt-get install make)"
  [[ ${#generator[@]} -gt 0 ]] || command -v make >/dev/null 2>&1 || generator=(-G Ninja)
  catch2_found ||
    die 2 "cannot build: Catch2 2.x is missing (Debian: apt-get install catch2)"
  [[ -n $cuda_include ]] ||
    die 2 "cannot build: cuda.h not found in \$CUDA_HOME/include, /usr/local/cuda/include" \
      "or /usr/include (install the CUDA toolkit headers)"
fi
say "cuda.h: $cuda_include/cuda.h"

# ---- 2. build ----------------------------------------------------------------------
# tests/CMakeLists.txt wants python3 and doxygen for tests this check does not
# run: stand-ins satisfy it where they are missing.
python=$(command -v python3 || command -v true)
doxygen=$(command -v doxygen || command -v true)
say "configuring in $build"
if ! cmake "${generator[@]}" -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHURRAY_BUILD_TESTS=ON \
    -DHURRAY_WERROR=OFF -DHURRAY_BUILD_BENCH=OFF -DHURRAY_ABI_CHECKS=OFF \
    -DHURRAY_BACKEND_VULKAN=OFF -DHURRAY_BACKEND_OPENCL=OFF -DHURRAY_BACKEND_HIP=OFF \
    -DHURRAY_BACKEND_LEVEL_ZERO=OFF -DHURRAY_CUDA_INCLUDE_DIR="$cuda_include" \
    -DHURRAY_PYTHON="$python" -DHURRAY_DOXYGEN="$doxygen" >"$work/configure.log" 2>&1; then
  tail -n 30 "$work/configure.log"
  die 2 "cannot build: cmake configure failed"
fi
targets=(hurray hurray-cuda hurray_conformance_tests hurray_cuda_tests hurray_cuda_device_tests)
say "building ${targets[*]} (-j$jobs)"
if ! cmake --build "$build" -j "$jobs" --target "${targets[@]}" >"$work/build.log" 2>&1; then
  tail -n 40 "$work/build.log"
  if grep -Eq "No rule to make target.*hurray-cuda'|unknown target 'hurray-cuda'" "$work/build.log"; then
    die 2 "cannot build: the cuda plugin was not configured (see $build/CMakeCache.txt)"
  fi
  if grep -Eq "No rule to make target.*hurray_cuda|unknown target 'hurray_cuda" "$work/build.log"; then
    die 2 "cannot build: tests/CMakeLists.txt does not add tests/backends/cuda"
  fi
  die 2 "cannot build: see the errors above"
fi
# The IPC channel's tests, apart: a failure here fails the ipc-channel part
# only, and the device parts above still run.
ipc_targets=(hurray_ipc_tests hurray_ipc_test_peer hurray_cuda_ipc_tests hurray_cuda_ipc_peer)
ipc_built=1
say "building ${ipc_targets[*]} (-j$jobs)"
if ! cmake --build "$build" -j "$jobs" --target "${ipc_targets[@]}" >"$work/build-ipc.log" 2>&1; then
  tail -n 40 "$work/build-ipc.log"
  say "could not build ${ipc_targets[*]}: the ipc-channel part will fail (errors above)"
  ipc_built=0
fi
say "built in $(( $(date +%s) - start )) s"

# ---- 3. parts ----------------------------------------------------------------------
declare -a summary=()
failed=0
run_part() {  # run_part NAME GREP_FOR_DETAIL COMMAND...
  local name=$1 detail_pattern=$2; shift 2
  local log="$work/$name.log" t0 rc detail
  t0=$(date +%s)
  say "--- $name: $*"
  (cd "$build" && timeout --kill-after=10 "$part_timeout" "$@") >"$log" 2>&1
  rc=$?
  detail=$(grep -E "$detail_pattern" "$log" | tail -n 1)
  [[ -z $detail ]] && detail=$(grep -E 'test cases|assertions' "$log" | tail -n 1)
  local secs=$(( $(date +%s) - t0 ))
  if [[ $rc == 0 ]]; then
    summary+=("PASS  $name (${secs} s): $detail")
  else
    failed=1
    local why="exit $rc"
    [[ $rc == 77 ]] && why="skipped (exit 77): $(grep -m1 '^SKIPPED' "$log")"
    [[ $rc == 124 || $rc == 137 ]] && why="timed out after ${part_timeout} s"
    summary+=("FAIL  $name (${secs} s): $why${detail:+; $detail}")
    tail -n 60 "$log"
  fi
}

run_part conformance 'test cases|device\(s\)' \
  "$build/tests/hurray_conformance_tests" --hurray-device=0x01
run_part classes '^classes:' "$build/tests/backends/cuda/hurray_cuda_device_tests" '[classes]'
run_part event '^event:' "$build/tests/backends/cuda/hurray_cuda_device_tests" '[event]'
run_part ipc '^ipc:' "$build/tests/backends/cuda/hurray_cuda_device_tests" '[ipc]'
run_part release '^release:' "$build/tests/backends/cuda/hurray_cuda_device_tests" '[release]'
# The same path through libhurray's IPC channel: the plugin is found next to
# libhurray ($build/hurray/libhurray-cuda.so); its tests print "cuda-ipc: ...".
if [[ $ipc_built == 1 ]]; then
  run_part ipc-channel '^cuda-ipc:' env HURRAY_BACKENDS=cpu,cuda \
    "$build/tests/ipc/hurray_ipc_tests" '[.cuda]'
  # Memory libhurray did not allocate, and VMM memory, between two processes
  # on the device: the fake-driver tests "[process]" against the real driver.
  run_part ipc-wrapped-vmm 'test cases' env HURRAY_CUDA_IPC_REAL=1 \
    "$build/tests/backends/cuda/hurray_cuda_ipc_tests" '[process]'
else
  failed=1
  summary+=("FAIL  ipc-channel (0 s): ${ipc_targets[*]} did not build")
  summary+=("FAIL  ipc-wrapped-vmm (0 s): ${ipc_targets[*]} did not build")
fi
# The stand-in run against the stub library is left out here: loaded into
# this one process, the stub (whose soname is libcuda.so.1 too) could answer
# for the real driver in the tests after it. CTest runs it in its own process.
run_part plugin 'test cases' "$build/tests/backends/cuda/hurray_cuda_tests" \
  '~cuda (stand-in: CUDA stub library)*'

# ---- 4. summary ----------------------------------------------------------------------
echo
echo "cuda-check summary ($device_line; $(( $(date +%s) - start )) s in all):"
for line in "${summary[@]}"; do echo "  $line"; done
if [[ $failed != 0 ]]; then
  echo "cuda-check: FAILED"
  exit 1
fi
echo "cuda-check: all parts passed"
exit 0
