#!/usr/bin/env bash
# Print the path of libwebgpu_wrapper.so, Google's Dawn (the WebGPU library
# libhurray-webgpu.so is tested on), installing it once from npm: the package
# bun-webgpu-linux-x64, pinned at exactly 0.1.7 by scripts/webgpu/package.json
# and its lockfile (npm ci checks the tarball against the lockfile's sha512
# integrity), then the library's own sha256 below. The WebGPU tests, the
# suite (scripts/test.sh) and the tour (scripts/tour.sh) call this.
# Usage: scripts/webgpu.sh [CACHE_DIR]
#   CACHE_DIR defaults to $HURRAY_WEBGPU_CACHE, else $HOME/.cache/hurray-webgpu
#   (where the plugin looks by itself when HURRAY_WEBGPU_LIBRARY is unset).
# Installs npm with apt-get when it is missing and we are root. Progress goes
# to stderr; stdout is only the path.
set -euo pipefail
version=0.1.7
pkg=bun-webgpu-linux-x64
lib=libwebgpu_wrapper.so
# sha256 of $lib in $pkg@$version. HURRAY_WEBGPU_SHA256 replaces it for
# tests/backends/webgpu/webgpu_sh_test.sh, whose fake npm installs a stand-in.
sha256=${HURRAY_WEBGPU_SHA256:-3190c3777f2c07fcf6a0640833cbf5d0cde859dc53aed6d9083946d093198788}
here=$(cd "$(dirname "$0")" && pwd)
cache=${1:-${HURRAY_WEBGPU_CACHE:-${HOME:-/tmp}/.cache/hurray-webgpu}}
dir=$cache/$version
file=$dir/node_modules/$pkg/$lib

# The install is atomic (scripts/lib/locked_install.sh): a reader trusts
# only a marked tree, so it never loads a half-written library.
# HURRAY_WEBGPU_NPM: the npm to run.
npm=${HURRAY_WEBGPU_NPM:-npm}
marker=.hurray-webgpu-complete
# shellcheck source-path=SCRIPTDIR source=lib/locked_install.sh
. "$here/lib/locked_install.sh"

installed() { [[ -f $dir/$marker && -f $file ]]; }

fill() {  # fill TMP: the pinned package, its library checked
  local tmp=$1 got
  cp "$here/webgpu/package.json" "$here/webgpu/package-lock.json" "$tmp/"
  echo "webgpu.sh: npm ci ($pkg@$version) in $tmp, then $dir" >&2
  if ! (cd "$tmp" && "$npm" ci --no-audit --no-fund --loglevel=error >&2); then
    echo "webgpu.sh: npm ci of $pkg@$version failed" >&2
    return 1
  fi
  got=$(sha256sum "$tmp/node_modules/$pkg/$lib" 2>/dev/null | cut -d' ' -f1 || true)
  if [[ $got != "$sha256" ]]; then
    echo "webgpu.sh: $pkg@$version's $lib has sha256 '${got:-none}', not $sha256" >&2
    return 1
  fi
}

if ! installed; then
  hurray_need_npm webgpu.sh "$pkg@$version" "${HURRAY_WEBGPU_NPM:-}"
  # One installer at a time (CTest starts WebGPU tests in parallel).
  hurray_locked_install "$cache" "$dir" "$marker" installed fill || exit 1
fi
installed || { echo "webgpu.sh: no $file after the install" >&2; exit 1; }
echo "$file"
