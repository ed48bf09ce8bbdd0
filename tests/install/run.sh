#!/usr/bin/env bash
# The install test of the Debian packages (docs/packaging.md); scripts/test.sh
# runs it after scripts/package.sh. As root, on a machine it may change:
#   tests/install/run.sh DEBDIR
# 1. dpkg -i every .deb of DEBDIR (none of them may be installed before);
# 2. with an empty environment (env -i, PATH only), against /usr alone:
#    the README's C quick start built with `pkg-config hurray` and run; the
#    installed C++ headers (hurray*.hpp) each compiled alone, with and without
#    exceptions, and the C++ quick start built and run; a CMake
#    consumer with find_package(hurray 1.0 COMPONENTS net); examples/net's
#    server and client built with `pkg-config hurray-net`, the client PUTting
#    to the server on loopback; examples/backend-private built against the
#    installed hurray_backend.h and loaded (hurray-inspect --devices lists it);
#    `/usr/bin/python3 -c "import hurray"` with a numpy round trip;
#    `man -w` of both tools; `hurray-inspect --devices` lists every installed
#    plugin;
# 3. dpkg --purge of every package, then no file any of them listed is left.
# Any failing step fails the test, naming the step; the packages are purged
# on the way out whatever happened.
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: tests/install/run.sh DEBDIR" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "install test: needs root (dpkg -i)" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
debdir=$(cd "$1" && pwd)
mapfile -t debs < <(ls "$debdir"/*.deb)
[[ ${#debs[@]} -gt 0 ]] || { echo "install test: no .deb in $debdir" >&2; exit 1; }
pkgs=()
for d in "${debs[@]}"; do pkgs+=("$(dpkg-deb -f "$d" Package)"); done
work=$(mktemp -d)
step=start
purged=0
finish() {
  local rc=$?
  if [[ $purged == 0 ]]; then dpkg --purge "${pkgs[@]}" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
  if [[ $rc -ne 0 ]]; then
    echo "install test: FAILED at step '$step' (exit status $rc)" >&2
  fi
}
trap finish EXIT
begin() { step=$1; echo "--- install test: $step"; }
# The clean environment of a new user's shell: no LD_LIBRARY_PATH,
# PKG_CONFIG_PATH, CMAKE_PREFIX_PATH, PYTHONPATH, HURRAY_*.
clean() { env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$work/home" "$@"; }
mkdir -p "$work/home"

begin "none of the packages installed before"
for p in "${pkgs[@]}"; do
  if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
    echo "install test: $p is already installed; purge it first" >&2
    exit 1
  fi
done

begin "dpkg -i ${pkgs[*]}"
dpkg -i "${debs[@]}"
for p in "${pkgs[@]}"; do dpkg -L "$p" >"$work/$p.list"; done

begin "README quick start with pkg-config hurray"
awk '/^## Quick start in C/{f=1} f&&/^```c$/{c=1;next} c&&/^```$/{exit} c' \
  "$root/README.md" >"$work/quickstart.c"
grep -q 'hurray_table_validate' "$work/quickstart.c"
clean sh -c 'cc -std=c99 -Wall -Wextra -Werror "$1/quickstart.c" -o "$1/quickstart" \
  $(pkg-config --cflags --libs hurray)' sh "$work"
clean "$work/quickstart" | tee "$work/quickstart.out"
grep -q '^valid ' "$work/quickstart.out"

begin "C++ headers from /usr/include: each compiles alone, the C++ quick start runs"
# tests/header/header_<t>.cpp includes /usr/include/<header> (pkg-config <pc>)
for spec in hpp:hurray.hpp:hurray dlpack_hpp:hurray_dlpack.hpp:hurray \
  net_hpp:hurray_net.hpp:hurray-net; do
  IFS=: read -r t header pc <<<"$spec"
  test -f "/usr/include/$header"
  for extra in "" -fno-exceptions; do
    clean sh -c 'c++ -std=c++17 -Wall -Wextra -Werror -pedantic $3 -fsyntax-only "$1" \
      $(pkg-config --cflags "$2")' sh "$root/tests/header/header_$t.cpp" "$pc" "$extra"
  done
done
clean sh -c 'c++ -std=c++17 -Wall -Wextra -Werror "$1" -o "$2" $(pkg-config --cflags --libs hurray)' \
  sh "$root/examples/quickstart.cpp" "$work/quickstart-cxx"
clean "$work/quickstart-cxx" | tee "$work/quickstart-cxx.out"
grep -q 'the consumer sees "hello"' "$work/quickstart-cxx.out"

begin "CMake consumer with find_package(hurray 1.0 COMPONENTS net)"
clean cmake -S "$root/tests/install/cmake" -B "$work/cmake" >"$work/cmake.log" ||
  { cat "$work/cmake.log"; exit 1; }
grep -qx 'hurray_DIR:PATH=/usr/lib/[^/]*/cmake/hurray' "$work/cmake/CMakeCache.txt"
clean cmake --build "$work/cmake"
clean "$work/cmake/app"

begin "examples/net with pkg-config hurray-net: client PUTs to server on loopback"
for ex in server client; do
  clean sh -c 'cc -std=c99 -Wall -Wextra -Werror "$1" -o "$2" \
    $(pkg-config --cflags --libs hurray-net)' sh "$root/examples/net/$ex.c" "$work/net-$ex"
done
clean timeout 60 "$work/net-server" --port 0 --count 1 >"$work/server.out" 2>&1 &
server=$!
port=
for _ in $(seq 1 100); do
  port=$(sed -n 's/^listening on port \([0-9]*\)$/\1/p' "$work/server.out" | head -n 1)
  [[ -n $port ]] && break
  sleep 0.1
done
[[ -n $port ]] || { cat "$work/server.out"; exit 1; }
clean timeout 60 "$work/net-client" 127.0.0.1 "$port" --size 4096
wait "$server" || { cat "$work/server.out"; exit 1; }
cat "$work/server.out"

begin "examples/backend-private against the installed hurray_backend.h, loaded"
test -f /usr/include/hurray_backend.h
mkdir -p "$work/plugins"
clean sh -c 'cc -std=c99 -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden "$1" \
  -o "$2/libhurray-example-private.so" $(pkg-config --cflags hurray)' sh \
  "$root/examples/backend-private/private_backend.c" "$work/plugins"
clean HURRAY_BACKEND_PATH="$work/plugins" hurray-inspect --devices >"$work/private.out"
cat "$work/private.out"
grep -q "$work/plugins/libhurray-example-private.so" "$work/private.out"
grep -q '0xF0' "$work/private.out"

begin "/usr/bin/python3: import hurray, numpy round trip"
(cd "$work" && clean /usr/bin/python3 -c '
import gc
import numpy as np
import hurray
assert hurray.library_path.startswith(("/usr/lib/", "/lib/")), hurray.library_path
buf = hurray.Buffer.alloc(4096)
src = np.arange(1024, dtype=np.float32)
mv = buf.memoryview()
mv[:] = src.tobytes()
mv.release()
a = np.from_dlpack(buf.tensor("float32", (32, 32)))
assert a.ctypes.data == buf.address and (a.ravel() == src).all(), "hurray -> numpy"
del a
gc.collect()
buf.close()
owner = np.zeros(64 + 16, dtype=np.float64)
off = (-owner.ctypes.data % 64) // 8
x = owner[off:off + 64]
x[:] = np.arange(64)
h = hurray.from_dlpack(x)
assert h.address == x.ctypes.data and h.nbytes == 512, "numpy -> hurray"
h.check()
h.release()
print("python3-hurray %s from %s (library %s): numpy round trips ok"
      % (hurray.version(), hurray.__file__, hurray.library_path))
')

begin "man -w hurray-inspect hurray-demo"
clean man -w hurray-inspect
clean man -w hurray-demo

begin "hurray-inspect --devices lists every installed plugin"
clean hurray-inspect --devices >"$work/devices.out"
cat "$work/devices.out"
plugins=$(cat "$work"/hurray-backend-*.list 2>/dev/null | grep '/hurray/libhurray-.*\.so$' || true)
[[ -n $plugins ]] || { echo "no plugin package installed" >&2; exit 1; }
for so in $plugins; do
  # Loaded: "vulkan (/usr/lib/.../libhurray-vulkan.so), 1 device"; loaded
  # but without a device: "unavailable: hip: <why>".
  name=$(basename "$so" .so)
  name=${name#libhurray-}
  grep -Eq "(^| )$name( \\(|: )" "$work/devices.out" ||
    { echo "hurray-inspect --devices does not list $so" >&2; exit 1; }
done

begin "dpkg --purge ${pkgs[*]}; nothing of them left"
dpkg --purge "${pkgs[@]}"
purged=1
left=0
for p in "${pkgs[@]}"; do
  if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -qv 'not-installed'; then
    echo "still known to dpkg: $p" >&2; left=1
  fi
  while read -r f; do
    # Folders other packages share (/usr, /usr/lib/...) stay; files and the
    # packages' own folders must go.
    if [[ -e $f && ! -d $f ]] || [[ -d $f && $f == */hurray* ]]; then
      echo "left after purge ($p): $f" >&2; left=1
    fi
  done <"$work/$p.list"
done
for f in /usr/lib/python3/dist-packages/hurray /usr/lib/*/hurray /usr/include/hurray.h; do
  [[ ! -e $f ]] || { echo "left after purge: $f" >&2; left=1; }
done
[[ $left == 0 ]]
step="done"
echo "install test: OK (${#pkgs[@]} packages installed, used and purged)"
