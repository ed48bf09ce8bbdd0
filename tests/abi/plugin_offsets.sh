#!/bin/sh
# usage: plugin_offsets.sh CC ROOT SCRATCH
# Builds tests/abi/plugin_offsets.c against the 1.0.0 baseline header (abi/)
# and the current one (include/) and fails when any 1.0 member of
# hurray_backend_v1 moved or the table's size changed.
set -eu
cc=$1 root=$2 scratch=$3
mkdir -p "$scratch"
"$cc" -std=c99 -I"$root/abi" -o "$scratch/baseline" "$root/tests/abi/plugin_offsets.c"
"$cc" -std=c99 -I"$root/include" -o "$scratch/current" "$root/tests/abi/plugin_offsets.c"
"$scratch/baseline" >"$scratch/baseline.txt"
"$scratch/current" >"$scratch/current.txt"
if diff -u "$scratch/baseline.txt" "$scratch/current.txt"; then
  echo "abi: hurray_backend_v1 keeps the layout of 1.0.0 ($(wc -l <"$scratch/current.txt") lines compared)"
else
  echo "abi: FAILED: a member of hurray_backend_v1 moved, or its size changed, since 1.0.0"
  exit 1
fi
