#!/usr/bin/env bash
# build-ze-null.sh DEST - build the Level Zero loader's own null driver
# (libze_null.so.1) from Debian's `level-zero` source package and copy it to
# DEST. With ZE_ENABLE_NULL_DRIVER=1 and DEST on LD_LIBRARY_PATH, Debian's
# libze_loader.so.1 loads it as a stand-in GPU driver; the level-zero plugin's
# stand-in tests (tests/backends/level-zero) run against it. It is NOT a GPU:
# every call succeeds with dummy handles, and nothing is computed or copied.
#
# The source comes from `apt-get source` with a private apt configuration: a
# temporary folder holding its own sources.list (one deb-src line for Debian
# bookworm) and its own package lists, passed to apt-get with -o options. The
# system's sources and lists are neither read nor written. apt checks the
# downloaded files against the hashes of the Sources index, whose Release file
# it verifies with Debian's archive keyring (signed-by in the deb-src line).
#
# The version fetched is the one of the installed libze1 (the null driver must
# match the loader that loads it); without libze1, bookworm's current one.
# Only the CMake target ze_null is built. Missing build tools (cmake, make,
# g++: the package's Build-Depends are debhelper and cmake, and debhelper is
# not needed to build one CMake target) are installed when run as root.
#
# Idempotent: when DEST already holds libze_null.so.1 it says so and stops.
# Environment: JOBS (default 2), ZE_NULL_KEEP=1 keeps the work folder.
set -euo pipefail

log() { echo "build-ze-null: $*"; }
die() { echo "build-ze-null: error: $*" >&2; exit 1; }

[[ $# -eq 1 && -n $1 ]] || { echo "usage: $0 DEST" >&2; exit 2; }
dest=$1

if [[ -e $dest/libze_null.so.1 ]]; then
  log "$dest/libze_null.so.1 already exists: nothing to do"
  exit 0
fi

# --- build tools -----------------------------------------------------------
need=(cmake make g++ dpkg-dev)  # dpkg-dev: dpkg-source, which apt-get source runs
missing=()
for pkg in "${need[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$pkg")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  if [[ $(id -u) -ne 0 ]]; then
    die "missing Debian packages ${missing[*]}; run: sudo apt-get install -y ${missing[*]}"
  fi
  log "installing missing build tools: ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  log "build tools present: ${need[*]}"
fi

# --- private apt configuration and the source --------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/ze-null.XXXXXX")
if [[ ${ZE_NULL_KEEP:-0} == 1 ]]; then
  log "keeping the work folder $work"
else
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/src"
cat >"$work/apt/sources.list" <<'EOF'
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main
EOF
apt_opts=(
  -o "Dir::Etc::SourceList=$work/apt/sources.list"
  -o "Dir::Etc::SourceParts=/dev/null"
  -o "Dir::State::Lists=$work/apt/lists"
  -o "Dir::Cache=$work/apt/cache"
  -o "Dir::Cache::pkgcache="
  -o "Dir::Cache::srcpkgcache="
  # the work folder is root's and private: download as the caller, not _apt
  -o "APT::Sandbox::User=$(id -un)"
)
log "private apt configuration in $work/apt (sources.list: $(cat "$work/apt/sources.list"))"
log "apt-get update (private lists)"
apt-get "${apt_opts[@]}" update -qq || die "apt-get update with the private sources.list failed"

want=level-zero
libze1=$(dpkg-query -W -f='${source:Version}' libze1 2>/dev/null || true)
if [[ -n $libze1 ]]; then
  want="level-zero=$libze1"
  log "installed libze1 is $libze1: fetching the same source version"
else
  log "libze1 is not installed: fetching bookworm's level-zero"
fi
log "apt-get source $want"
(cd "$work/src" && apt-get "${apt_opts[@]}" source -q "$want") \
  || die "apt-get source $want failed (see above)"
srcdir=$(find "$work/src" -mindepth 1 -maxdepth 1 -type d -name 'level-zero-*' | head -n 1)
[[ -n $srcdir && -f $srcdir/source/drivers/null/CMakeLists.txt ]] \
  || die "the unpacked source has no source/drivers/null (looked in $work/src)"
log "source unpacked in $srcdir"

# --- build ze_null only -----------------------------------------------------
log "configure (CMake, Release) and build the target ze_null only"
cmake -S "$srcdir" -B "$work/build" -DCMAKE_BUILD_TYPE=Release >"$work/configure.log" 2>&1 \
  || { cat "$work/configure.log"; die "cmake configure failed"; }
cmake --build "$work/build" --target ze_null -j "${JOBS:-2}" >"$work/build.log" 2>&1 \
  || { cat "$work/build.log"; die "building ze_null failed"; }

mkdir -p "$dest"
shopt -s nullglob
libs=("$work/build/lib"/libze_null.so*)
[[ ${#libs[@]} -gt 0 ]] || die "the build produced no libze_null.so* in $work/build/lib"
cp -P "${libs[@]}" "$dest/"
[[ -e $dest/libze_null.so.1 ]] || die "no libze_null.so.1 among ${libs[*]##*/}"
log "copied ${libs[*]##*/} to $dest"
log "use: ZE_ENABLE_NULL_DRIVER=1 LD_LIBRARY_PATH=$dest\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
