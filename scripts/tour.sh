#!/usr/bin/env bash
# Build libhurray and take the tour: hurray-demo, then hurray-inspect on a
# few handles. Installs missing Debian packages when run as root (UCX too, so
# the tour includes the network step).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh build vulkan opencl net webgpu
# Dawn, for the WebGPU device (scripts/webgpu.sh; the plugin finds it in the
# cache), on Mesa's llvmpipe through EGL without a display (the plugin picks
# EGL's surfaceless platform itself when there is no display).
scripts/webgpu.sh >/dev/null || echo "tour: Dawn could not be installed: no WebGPU device"
export POCL_CACHE_DIR=${POCL_CACHE_DIR:-$(mktemp -d)} XDG_CACHE_HOME=${XDG_CACHE_HOME:-$(mktemp -d)}

build=${HURRAY_BUILD_DIR:-build-tour}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHURRAY_BUILD_TESTS=OFF -DHURRAY_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j "${JOBS:-$(nproc)}" >/dev/null

run() { echo; echo "\$ $*"; "$@" || echo "(exit status $?)"; }
run "$build/hurray-inspect" --devices
run "$build/hurray-demo"
run "$build/hurray-example-handoff"
run "$build/hurray-inspect" --hex 00100000000000004000000000000000
run "$build/hurray-inspect" --transport rdma --hex 64000000000000003000000000010101
run "$build/hurray-inspect" --json --hex 00001000000000000001000001010200
