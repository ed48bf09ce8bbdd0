#!/bin/sh
# Drives the tests of the installed library (registered by tests/abi):
#   run_consumer.sh install CMAKE BUILD_DIR STAGE [CONFIG]
#   run_consumer.sh c99|cxx STAGE LIBDIR SOURCE WORKDIR
#   run_consumer.sh cmake   STAGE LIBDIR SOURCE_DIR WORKDIR CMAKE
#   run_consumer.sh rust    STAGE LIBDIR SOURCE WORKDIR
#   run_consumer.sh zig     STAGE LIBDIR SOURCE WORKDIR ZIG_SH
#   run_consumer.sh python  STAGE LIBDIR SOURCE WORKDIR PYTHON PACKAGE_DIR
#   run_consumer.sh net     STAGE LIBDIR SOURCE WORKDIR
#   run_consumer.sh plugin  STAGE LIBDIR SOURCE WORKDIR
# net links SOURCE (examples/net/client.c) with the staged hurray-net.pc;
# plugin builds SOURCE (examples/backend-private) against the staged
# hurray_backend.h and has hurray-inspect --devices load it.
# c99/cxx compile SOURCE with the flags of the staged hurray.pc; cmake builds
# the project in SOURCE_DIR with find_package(hurray). Any failing step fails.
set -eu
mode=$1
shift

fresh_dir() {
  rm -rf "${1:?}"
  mkdir -p "$1"
}

# staged_flags MODULE [OPTION]: the flags (OPTION: --cflags; default --cflags
# --libs) of the staged MODULE.pc (hurray, hurray-net), which must be the one
# found, not an installed one.
staged_flags() {
  PKG_CONFIG_PATH=$stage/$libdir/pkgconfig
  export PKG_CONFIG_PATH
  pkg_config=${PKG_CONFIG:-pkg-config}
  test "$("$pkg_config" --variable=pcfiledir "$1")" = "$stage/$libdir/pkgconfig"
  if [ $# -gt 1 ]; then "$pkg_config" "$2" "$1"; else "$pkg_config" --cflags --libs "$1"; fi
}

case $mode in
install)
  cmake=$1 build=$2 stage=$3 config=${4:-}
  fresh_dir "$stage"
  set -x
  "$cmake" --install "$build" --prefix "$stage" ${config:+--config "$config"}
  ;;
c99|cxx)
  stage=$1 libdir=$2 source=$3 work=$4
  fresh_dir "$work"
  set -x
  flags=$(staged_flags hurray)
  if [ "$mode" = c99 ]; then
    ${CC:-cc} -std=c99 -pedantic -Wall -Wextra -Werror -o "$work/app" "$source" $flags
  else
    ${CXX:-c++} -std=c++17 -pedantic -Wall -Wextra -Werror -o "$work/app" "$source" $flags
  fi
  LD_LIBRARY_PATH=$stage/$libdir "$work/app"
  ;;
cmake)
  stage=$1 libdir=$2 source=$3 work=$4 cmake=$5
  fresh_dir "$work"
  set -x
  "$cmake" -S "$source" -B "$work" -DCMAKE_PREFIX_PATH="$stage"
  # The staged package must be the one found, not an installed one.
  grep -qxF "hurray_DIR:PATH=$stage/$libdir/cmake/hurray" "$work/CMakeCache.txt"
  "$cmake" --build "$work"
  "$work/app"
  ;;
# ---- interop consumers (issue 7): Rust, Zig, Python ctypes ----
# rust: rustc with extern "C" declarations and -l hurray (rustc on PATH, or
# rustup's in ~/.cargo/bin). zig: Zig 0.11.0 from ZIG_SH (scripts/zig.sh),
# @cImport of the staged headers. python: `pip install` of PACKAGE_DIR
# (python/) offline into WORKDIR/site, then SOURCE run with PYTHON against the
# staged libhurray.so.1. A missing toolchain fails the test.
rust)
  stage=$1 libdir=$2 source=$3 work=$4
  fresh_dir "$work"
  rustc=$(command -v rustc || true)
  if [ -z "$rustc" ] && [ -x "${HOME:-/nonexistent}/.cargo/bin/rustc" ]; then
    rustc=$HOME/.cargo/bin/rustc
  fi
  if [ -z "$rustc" ]; then
    echo "run_consumer.sh: no rustc on PATH or in ~/.cargo/bin (scripts/deps.sh interop installs Debian's)" >&2
    exit 1
  fi
  set -x
  "$rustc" --version
  "$rustc" --edition 2021 -D warnings -O -o "$work/app" "$source" \
    -L "native=$stage/$libdir" -l hurray
  LD_LIBRARY_PATH=$stage/$libdir "$work/app"
  ;;
zig)
  stage=$1 libdir=$2 source=$3 work=$4 zig_sh=$5
  fresh_dir "$work"
  set -x
  zig=$("$zig_sh")
  # Zig's own build cache persists next to the compiler (compiled once).
  cache=$(dirname "$(dirname "$(dirname "$(dirname "$zig")")")")/zig-cache
  ZIG_GLOBAL_CACHE_DIR=$cache ZIG_LOCAL_CACHE_DIR=$work/zig-cache "$zig" build-exe "$source" \
    -I "$stage/include" -L "$stage/$libdir" -lhurray -lc -femit-bin="$work/app"
  LD_LIBRARY_PATH=$stage/$libdir "$work/app"
  ;;
python)
  stage=$1 libdir=$2 source=$3 work=$4 python=$5 package=$6
  fresh_dir "$work"
  set -x
  # pip install ./python, offline: Debian's setuptools builds it (no build
  # isolation, which would fetch setuptools); from a copy, so that the
  # source tree gets no build/ or egg-info.
  cp -R "$package" "$work/src"
  "$python" -m pip install --no-build-isolation --no-deps --no-index --no-cache-dir \
    --disable-pip-version-check --root-user-action=ignore --target "$work/site" "$work/src"
  HURRAY_CONSUMER_SITE=$work/site PYTHONPATH=$work/site PYTHONDONTWRITEBYTECODE=1 \
    "$python" "$source" "$stage/$libdir/libhurray.so.1"
  ;;
net)
  stage=$1 libdir=$2 source=$3 work=$4
  fresh_dir "$work"
  set -x
  flags=$(staged_flags hurray-net)
  ${CC:-cc} -std=c99 -pedantic -Wall -Wextra -Werror -o "$work/app" "$source" $flags
  LD_LIBRARY_PATH=$stage/$libdir "$work/app" --help 2>&1 | grep -q usage
  ;;
plugin)
  stage=$1 libdir=$2 source=$3 work=$4
  fresh_dir "$work"
  set -x
  test -f "$stage/include/hurray_backend.h"
  flags=$(staged_flags hurray --cflags)
  ${CC:-cc} -std=c99 -pedantic -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden \
    -o "$work/libhurray-example-private.so" "$source" $flags
  HURRAY_BACKEND_PATH=$work LD_LIBRARY_PATH=$stage/$libdir \
    "$stage/bin/hurray-inspect" --devices >"$work/devices.txt"
  cat "$work/devices.txt"
  grep -q "$work/libhurray-example-private.so" "$work/devices.txt"
  ;;
*)
  echo "usage: $0 install|c99|cxx|cmake|rust|zig|python|net|plugin ..." >&2
  exit 2
  ;;
esac
