#!/usr/bin/env bash
# Build every Debian package of libhurray into OUTDIR (docs/packaging.md).
# Usage: scripts/package.sh OUTDIR
# Copies the checkout's files (tracked and untracked, not ignored ones) to a
# scratch folder, runs dpkg-buildpackage (debian/) there and moves the .deb
# files to OUTDIR, then runs lintian on them: an error, or a warning without
# an override, fails. Installs the build dependencies as root (deps.sh
# package). Environment: JOBS (default nproc); HURRAY_DEB_PROFILES, the build
# profiles (default: pkg.hurray.cuda, the CUDA plugin's package, where cuda.h
# is found; empty: none); CMAKE_*_COMPILER_LAUNCHER=ccache and
# CCACHE_* are passed on (scripts/test.sh shares stage 1's cache this way).
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: scripts/package.sh OUTDIR" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
"$root/scripts/deps.sh" build package net vulkan opencl gpu

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
src=$scratch/libhurray-1.0.0
mkdir "$src"
(cd "$root" && git ls-files -z --cached --others --exclude-standard |
   xargs -0 tar --no-recursion -cf - 2>/dev/null) | tar -xf - -C "$src"
[[ -f $src/debian/control ]] || { echo "package.sh: no debian/control copied" >&2; exit 1; }

# A shared ccache: paths relative to the copy, as the caller's were to its
# checkout, so that objects built there (CI's stage 1) are reused.
if [[ -n ${CCACHE_BASEDIR:-} ]]; then export CCACHE_BASEDIR=$src; fi
# The CUDA plugin's package where cuda.h is found (nvidia-cuda-dev, or
# NVIDIA's toolkit in /usr/local/cuda or $CUDA_HOME): build profile pkg.hurray.cuda.
profiles=${HURRAY_DEB_PROFILES-auto}
if [[ $profiles == auto ]]; then
  profiles=
  for h in /usr/include/cuda.h /usr/local/cuda/include/cuda.h ${CUDA_HOME:+$CUDA_HOME/include/cuda.h}; do
    if [[ -f $h ]]; then profiles=pkg.hurray.cuda; echo "package.sh: $h found: building the CUDA plugin's package"; break; fi
  done
fi
jobs=${JOBS:-$(nproc)}
echo "=== [package] dpkg-buildpackage in $src ($jobs jobs)"
(cd "$src" && DEB_BUILD_OPTIONS="parallel=$jobs nocheck noautodbgsym" \
   DEB_BUILD_PROFILES="$profiles" \
   dpkg-buildpackage -b -us -uc --no-sign)
rm -f "$out"/*.deb
mv "$scratch"/*.deb "$out"/
ls -l "$out"/*.deb

echo "=== [package] lintian"
# --fail-on error,warning: a warning without an override fails too.
lintian --fail-on error,warning --info "$out"/*.deb 2>&1 | tee "$out/lintian.log"
echo "package.sh: $(ls "$out"/*.deb | wc -l) packages in $out, lintian clean"
