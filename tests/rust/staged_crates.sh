#!/bin/sh
# The Rust crates against the staged install (tests/abi's `abi: install`):
# hurray-sys finds libhurray through the staged hurray.pc (pkg-config, no
# HURRAY_LIB_DIR), and the quick start runs against it.
#   staged_crates.sh STAGE LIBDIR RUST_DIR TARGET_DIR CARGO RUSTC RUSTDOC
set -eu
stage=$1 libdir=$2 rust_dir=$3 target=$4 cargo=$5 rustc=$6 rustdoc=$7
unset HURRAY_LIB_DIR HURRAY_INCLUDE_DIR HURRAY_STATIC
PKG_CONFIG_PATH=$stage/$libdir/pkgconfig
export PKG_CONFIG_PATH
# The staged hurray.pc must be the one found, not an installed one.
test "$(pkg-config --variable=pcfiledir hurray)" = "$stage/$libdir/pkgconfig"
test -f "$stage/include/hurray.hpp"
export RUSTC="$rustc" RUSTDOC="$rustdoc" CARGO_TARGET_DIR="$target"
export LD_LIBRARY_PATH="$stage/$libdir"
cd "$rust_dir"
set -x
"$cargo" run --offline -p hurray --example quickstart
