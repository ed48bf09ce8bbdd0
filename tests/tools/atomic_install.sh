# shellcheck shell=bash
# The checks both atomic-install tests make (scripts/lib/locked_install.sh,
# used by scripts/webgpu.sh and scripts/zig.sh), sourced by
# tests/tools/zig_atomic_test.sh and tests/backends/webgpu/webgpu_sh_test.sh.
# The caller has written a slow fake npm that appends a line to
# $work/installs each time it installs, and exported the script's cache and
# npm variables.
#
# check_atomic_install SCRIPT NPM_VAR CHECK
#   Two calls of SCRIPT on an empty cache, the second while the first is
#   installing: both succeed and print what CHECK PATH accepts; npm ran once;
#   no temporary tree is left; a third call (NPM_VAR pointing nowhere) needs
#   no npm.
check_atomic_install() {
  local script=$1 npm_var=$2 check=$3 a b rc=0 f n
  : "${work:?set by the caller: its scratch directory}"
  "$script" >"$work/a.out" 2>"$work/a.err" &
  a=$!
  sleep 0.3  # the second call comes while the first is installing
  "$script" >"$work/b.out" 2>"$work/b.err" &
  b=$!
  wait $a || { echo "FAIL: the first call failed:"; cat "$work/a.err"; rc=1; }
  wait $b || { echo "FAIL: the second call failed:"; cat "$work/b.err"; rc=1; }
  [[ $rc -eq 0 ]] || exit 1
  for f in a b; do
    "$check" "$(cat "$work/$f.out")" || { echo "FAIL: call $f printed '$(cat "$work/$f.out")'"; exit 1; }
  done
  n=$(wc -l <"$work/installs")
  [[ $n -eq 1 ]] || { echo "FAIL: npm ran $n times, not once"; exit 1; }
  if compgen -G "$work/cache/.install.*" >/dev/null; then
    echo "FAIL: a temporary tree was left"; exit 1
  fi
  env "$npm_var=/nonexistent" "$script" >/dev/null ||
    { echo "FAIL: a third call needed npm again"; exit 1; }
}
