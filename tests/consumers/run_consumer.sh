#!/bin/sh
# Drives the tests of the installed library (registered by tests/abi):
#   run_consumer.sh install CMAKE BUILD_DIR STAGE [CONFIG]
#   run_consumer.sh c99|cxx STAGE LIBDIR SOURCE WORKDIR
#   run_consumer.sh cmake   STAGE LIBDIR SOURCE_DIR WORKDIR CMAKE
# c99/cxx compile SOURCE with the flags of the staged hurray.pc; cmake builds
# the project in SOURCE_DIR with find_package(hurray). Any failing step fails.
set -eu
mode=$1
shift

fresh_dir() {
  rm -rf "${1:?}"
  mkdir -p "$1"
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
  PKG_CONFIG_PATH=$stage/$libdir/pkgconfig
  export PKG_CONFIG_PATH
  pkg_config=${PKG_CONFIG:-pkg-config}
  # The staged hurray.pc must be the one found, not an installed one.
  test "$("$pkg_config" --variable=pcfiledir hurray)" = "$stage/$libdir/pkgconfig"
  flags=$("$pkg_config" --cflags --libs hurray)
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
*)
  echo "usage: $0 install|c99|cxx|cmake ..." >&2
  exit 2
  ;;
esac
