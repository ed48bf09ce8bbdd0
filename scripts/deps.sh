#!/usr/bin/env bash
# Install the Debian packages a command needs, when they are missing.
# Usage: scripts/deps.sh PROFILE...
#   (profiles: build, test, vulkan, opencl, gpu, fuzz, interop, net, webgpu, package)
# As root it runs apt-get itself; otherwise it prints the command to run.
set -euo pipefail

declare -A PROFILE=(
  [build]="cmake make g++ pkg-config"
  [test]="cmake make g++ pkg-config catch2 python3 binutils abigail-tools libffi-dev libbenchmark-dev doxygen valgrind ccache libuv1-dev"
  [vulkan]="libvulkan-dev mesa-vulkan-drivers glslang-tools vulkan-tools"
  [opencl]="ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo"
  [gpu]="libamdhip64-dev libze-dev libze1"
  [fuzz]="clang-14 libclang-rt-14-dev"
  # numpy and PyTorch (CPU) for the Python package tests (Debian's /usr/bin/python3); Zig comes from npm (scripts/zig.sh).
  # Debian's Rust toolchain for bindings/rust (cargo --offline against librust-*-dev; rustfmt
  # and bindgen regenerate hurray-sys's bindings in CI, scripts/rust-bindings.sh).
  # python3-dev: hurray._native (python/CMakeLists.txt); venv, setuptools and wheel: the
  # offline install README shows.
  [interop]="python3-numpy python3-torch python3-pip python3-dev python3-venv python3-setuptools python3-wheel rustc cargo rustfmt bindgen librust-pkg-config-dev"
  # UCX for hurray_net_*, ucx_perftest for its benchmark, iproute2 for the netns tests,
  # libssl-dev for the bootstrap's HMAC-SHA256 (libcrypto).
  [net]="libucx-dev ucx-utils iproute2 libssl-dev"
  # The WebGPU plugin's tests: Dawn (from npm, scripts/webgpu.sh) opens the unversioned
  # libEGL.so (libegl-dev) and runs OpenGL ES on Mesa's llvmpipe (EGL_PLATFORM=surfaceless).
  [webgpu]="libegl-dev libegl-mesa0 libgl1-mesa-dri"
  # The Debian packages (scripts/package.sh, debian/) and their install test
  # (tests/install/): debhelper, dh-python, lintian, man for `man -w`.
  [package]="debhelper dh-python dpkg-dev fakeroot lintian python3 man-db python3-numpy"
)

want=()
for p in "$@"; do
  [[ -n "${PROFILE[$p]+x}" ]] || { echo "deps.sh: unknown profile '$p'" >&2; exit 2; }
  read -r -a pkgs <<<"${PROFILE[$p]}"
  want+=("${pkgs[@]}")
done

# interop (issue 7): the Rust consumer needs rustc; rustup's (~/.cargo/bin) will do,
# else Debian's. Zig comes from npm (scripts/zig.sh installs npm if it must).
if [[ " $* " == *" interop "* ]] && ! command -v rustc >/dev/null 2>&1 &&
   [[ ! -x ${HOME:-/nonexistent}/.cargo/bin/rustc ]]; then
  want+=(rustc)
fi

missing=()
for pkg in $(printf '%s\n' "${want[@]}" | sort -u); do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "deps.sh: installing missing Debian packages: ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
  echo "deps.sh: not root; run: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
