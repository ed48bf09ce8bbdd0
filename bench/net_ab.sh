#!/bin/bash
# Paired A/B of two hurray_net_bench configurations at one size.
#
#   bench/net_ab.sh BUILD_DIR SIZE PAIRS "A" "B"
#
# A and B are each a list of VAR=value environment settings and
# hurray_net_bench options, for example "--window 2" against
# "UCX_NET_DEVICES=lo --window 2". Each pair runs A and B back to back, in a
# random order, client on CPU 0 and server on CPU 1; the result is the median
# (and quartiles) of the pairs' B/A throughput ratios. Runs next to each other
# in time share the machine's mood, so on a noisy machine a few tens of pairs
# resolve a few per cent where whole sweeps cannot.
# NET_AB_BYTES (default 1G): bytes each run moves (at least 3 PUTs).
set -eu
if [ $# -ne 5 ]; then
  echo "usage: $0 BUILD_DIR SIZE PAIRS \"A\" \"B\"  (A, B: VAR=value... and hurray_net_bench options)" >&2
  exit 2
fi
exe=$1/bench/hurray_net_bench
size=$2 pairs=$3 a=$4 b=$5
[ -x "$exe" ] || { echo "$0: $exe not built" >&2; exit 2; }

# One run of configuration $1: prints its MB/s.
run() {
  local envs=() opts=() w
  for w in $1; do
    case $w in
      -*) opts+=("$w") ;;
      *=*) if [ ${#opts[@]} -eq 0 ]; then envs+=("$w"); else opts+=("$w"); fi ;;
      *) opts+=("$w") ;;
    esac
  done
  env UCX_TLS="${UCX_TLS:-tcp}" "${envs[@]}" "$exe" --sizes "$size" \
    --min-bytes "${NET_AB_BYTES:-1G}" --client-cpu 0 --server-cpu 1 "${opts[@]}" 2>/dev/null |
    sed -n 's/.*MBps=\([0-9.]*\).*/\1/p'
}

ratios=()
for _ in $(seq "$pairs"); do
  if [ $((RANDOM % 2)) -eq 0 ]; then x=$(run "$a"); y=$(run "$b"); else y=$(run "$b"); x=$(run "$a"); fi
  [ -n "$x" ] && [ -n "$y" ] || { echo "$0: a run failed" >&2; exit 1; }
  ratios+=("$(awk -v x="$x" -v y="$y" 'BEGIN { printf "%.3f", y / x }')")
done
printf '%s\n' "${ratios[@]}" | sort -n | awk -v s="$size" -v a="$a" -v b="$b" '
  { v[NR] = $1 }
  END { printf "%s: [%s] / [%s]: median %.3f, quartiles %.3f-%.3f (%d pairs)\n",
        s, b, a, v[int((NR + 1) / 2)], v[int(NR / 4) + 1], v[int(3 * NR / 4)], NR }'
