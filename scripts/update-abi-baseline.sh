#!/bin/sh
# Regenerate the ABI baseline in abi/ from the current sources: builds
# libhurray, libhurray-net and the example device plugin (RelWithDebInfo,
# tests off) in a scratch directory, then writes
#   abi/libhurray.abi      abidw's description of libhurray.so.1's public ABI
#   abi/libhurray-net.abi  the same for libhurray-net.so.1
#   abi/plugin.abi         the plugin ABI: the table a plugin returns from
#                          hurray_backend_entry (from examples/backend-private)
#   abi/hurray.h, abi/hurray_net.h, abi/hurray_backend.h  exact copies of the
#                          public headers those describe
#   abi/<NODE>.symbols     for each version node of hurray.map and
#                          src/net/hurray-net.map that has no such file yet:
#                          its names, closing the node (never rewritten)
# Usage: scripts/update-abi-baseline.sh [BUILD_DIR]
#   BUILD_DIR: an existing RelWithDebInfo build of these sources to use (the
#   three targets are brought up to date there) instead of a scratch build.
# Only run it deliberately, at a release (see abi/README.md), and explain why
# in CHANGELOG.md.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -gt 0 ]; then
  scratch=$(cd "$1" && pwd)
  grep -q '^CMAKE_BUILD_TYPE:STRING=RelWithDebInfo$' "$scratch/CMakeCache.txt" ||
    { echo "update-abi-baseline: $1 is not a RelWithDebInfo build" >&2; exit 1; }
else
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  cmake -S "$root" -B "$scratch" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DHURRAY_BUILD_TESTS=OFF -DHURRAY_BUILD_BENCH=OFF >/dev/null
fi
cmake --build "$scratch" --target hurray hurray-net hurray-example-private --parallel
built() {  # built PATH: PATH below the build folder (fails when absent)
  [ -f "$scratch/$1" ] || { echo "update-abi-baseline: $1 was not built" >&2; exit 1; }
  echo "$scratch/$1"
}

# Public types only (--headers-dir, --drop-private-types), and no absolute
# path of this machine in the output (file names only in locations).
dump() {  # dump LIBRARY OUTPUT
  abidw --no-corpus-path --no-comp-dir-path --short-locs --drop-private-types \
    --headers-dir "$root/include" --out-file "$root/abi/$2" "$1"
}
dump "$(built libhurray.so.1)" libhurray.abi
dump "$(built libhurray-net.so.1)" libhurray-net.abi
dump "$(built example-plugins/libhurray-example-private.so)" plugin.abi
for h in hurray.h hurray_net.h hurray_backend.h; do
  cp "$root/include/$h" "$root/abi/$h"
done

# Close every node released now: its names, once.
for map in "$root/hurray.map" "$root/src/net/hurray-net.map"; do
  /usr/bin/python3 - "$map" "$root/abi" <<'EOF'
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(sys.argv[2]), "tests", "abi"))
from check_closed_nodes import map_nodes
mapfile, abi = sys.argv[1], sys.argv[2]
rel = os.path.relpath(mapfile, os.path.dirname(abi))
for node, names in map_nodes(mapfile).items():
    path = os.path.join(abi, node + ".symbols")
    if not os.path.exists(path):
        with open(path, "w", encoding="utf-8") as f:
            f.write("# The global names of %s in %s, closed at its release.\n" % (node, rel))
            f.write("# Never edit: tests/abi/check_closed_nodes.py (see abi/README.md).\n")
            f.write("".join(n + "\n" for n in names))
        print("closed %s (%d names): abi/%s.symbols" % (node, len(names), node))
EOF
done
echo "updated abi/ from the build of $(
  sed -n 's/^#define HURRAY_VERSION_STRING "\(.*\)"$/\1/p' "$root/include/hurray.h")"
