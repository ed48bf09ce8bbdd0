#!/bin/sh
# usage: closed_nodes_selftest.sh PYTHON CHECK MAP FROZEN NODE NAME
# Proves that check_closed_nodes.py guards NODE of MAP: on copies of MAP,
#   1. NAME added to NODE must fail the check;
#   2. NAME in a new node after the last one (NODE_NEXT { NAME; } LAST;) must pass;
#   3. the first name of NODE removed must fail.
set -u
python=$1 check=$2 map=$3 frozen=$4 node=$5 name=$6
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
# The node's opening line is "NODE {", then "global:" on the next line.
sed "/^$node {/,/global:/s/global:/global:\n    $name;/" "$map" >"$tmp/added.map"
if "$python" "$check" "$tmp/added.map" "$frozen" >"$tmp/out" 2>&1; then
  echo "FAIL: $name added to $node passed the check:"; cat "$tmp/out"; status=1
else
  grep -q "$name added to the closed node $node" "$tmp/out" ||
    { echo "FAIL: the check failed without naming $name:"; cat "$tmp/out"; status=1; }
  echo "ok: $name added to $node fails the check"
fi
last=$(sed -n 's/^\([A-Z_0-9.]*\) *{.*/\1/p' "$map" | tail -n 1)
{ cat "$map"; printf '\n%s_NEXT {\n  global:\n    %s;\n} %s;\n' "$node" "$name" "$last"; } >"$tmp/next.map"
if "$python" "$check" "$tmp/next.map" "$frozen" >"$tmp/out" 2>&1; then
  echo "ok: $name in a new node after $last passes"
else
  echo "FAIL: a new node after $last failed the check:"; cat "$tmp/out"; status=1
fi
first=$(grep -v '^#' "$frozen" | head -n 1)
sed "/^$node {/,/}/{/^ *$first;/d}" "$map" >"$tmp/removed.map"
if "$python" "$check" "$tmp/removed.map" "$frozen" >"$tmp/out" 2>&1; then
  echo "FAIL: $first removed from $node passed the check:"; cat "$tmp/out"; status=1
else
  echo "ok: $first removed from $node fails the check"
fi
exit $status
