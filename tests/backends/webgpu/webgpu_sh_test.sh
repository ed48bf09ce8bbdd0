#!/usr/bin/env bash
# scripts/webgpu.sh installs atomically: two concurrent calls on an empty
# cache both print the library, npm runs once, no temporary tree is left,
# and a third call needs no npm. npm is a slow fake (HURRAY_WEBGPU_NPM) that
# checks it was given the pinned lockfile, writes half the library, sleeps,
# then the rest; the expected sha256 is the stand-in's (HURRAY_WEBGPU_SHA256),
# so a reader that took the half-written tree would fail its check. A fake
# whose library does not match is refused.
# Usage: webgpu_sh_test.sh REPO_ROOT
set -euo pipefail
repo=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/fake-npm" <<'NPM'
#!/usr/bin/env bash
set -euo pipefail
[[ $1 == ci ]] || { echo "fake npm: expected 'npm ci', got '$*'" >&2; exit 1; }
grep -q '"bun-webgpu-linux-x64": "0.1.7"' package.json || { echo "fake npm: not pinned" >&2; exit 1; }
grep -q '"integrity": "sha512-' package-lock.json || { echo "fake npm: no integrity" >&2; exit 1; }
d=node_modules/bun-webgpu-linux-x64
mkdir -p "$d"
printf 'half' >"$d/libwebgpu_wrapper.so"
sleep 1
printf ' and the rest' >>"$d/libwebgpu_wrapper.so"
echo "$$" >>"$(dirname "$0")/installs"
NPM
chmod +x "$work/fake-npm"
export HURRAY_WEBGPU_NPM=$work/fake-npm HURRAY_WEBGPU_CACHE=$work/cache
HURRAY_WEBGPU_SHA256=$(printf 'half and the rest' | sha256sum | cut -d' ' -f1)
export HURRAY_WEBGPU_SHA256
# shellcheck source=tests/tools/atomic_install.sh
. "$repo/tests/tools/atomic_install.sh"
library_ok() { [[ $(cat "$1") == 'half and the rest' ]]; }
check_atomic_install "$repo/scripts/webgpu.sh" HURRAY_WEBGPU_NPM library_ok
# A package whose library is not the pinned one is refused, and not kept.
if HURRAY_WEBGPU_SHA256=0000 "$repo/scripts/webgpu.sh" "$work/other" >/dev/null 2>"$work/c.err"; then
  echo "FAIL: a library with the wrong sha256 was accepted"; exit 1
fi
grep -q "has sha256" "$work/c.err" || { echo "FAIL: no sha256 message:"; cat "$work/c.err"; exit 1; }
[[ ! -e $work/other/0.1.7 ]] || { echo "FAIL: the refused tree was kept"; exit 1; }
echo "ok: two concurrent calls on an empty cache both got the library; npm ran once"
