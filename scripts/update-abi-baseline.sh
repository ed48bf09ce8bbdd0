#!/bin/sh
# Regenerate the ABI baseline in abi/ from the current sources: builds
# libhurray (RelWithDebInfo, tests off) in a scratch directory, then writes
#   abi/libhurray.abi  abidw's description of the public ABI
#   abi/hurray.h       an exact copy of include/hurray.h
# Only run it deliberately (see abi/README.md) and explain why in CHANGELOG.md.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

cmake -S "$root" -B "$scratch" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DHURRAY_BUILD_TESTS=OFF >/dev/null
cmake --build "$scratch" --target hurray --parallel
lib=$(find "$scratch" -name libhurray.so.1 | head -n 1)
test -n "$lib"

# Public types only (--headers-dir, --drop-private-types), and no absolute
# path of this machine in the output (file names only in locations).
abidw --no-corpus-path --no-comp-dir-path --short-locs --drop-private-types \
  --headers-dir "$root/include" --out-file "$root/abi/libhurray.abi" "$lib"
cp "$root/include/hurray.h" "$root/abi/hurray.h"
echo "updated abi/libhurray.abi and abi/hurray.h from $(basename "$lib") $(
  sed -n 's/^#define HURRAY_VERSION_STRING "\(.*\)"$/\1/p' "$root/include/hurray.h")"
