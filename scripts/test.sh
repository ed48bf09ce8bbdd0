#!/usr/bin/env bash
# Build libhurray and run the whole test suite (unit tests, hurray-inspect
# contract, ABI checks, consumers of the installed library).
# Installs missing Debian packages when run as root. .ci/run calls this.
# Environment: HURRAY_BUILD_DIR (default build-test), JOBS (default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh test

build=${HURRAY_BUILD_DIR:-build-test}
jobs=${JOBS:-$(nproc)}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHURRAY_WERROR=ON \
  -DHURRAY_BUILD_TESTS=ON -DHURRAY_ABI_CHECKS=ON
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" -j "$jobs" --output-on-failure --timeout 600
