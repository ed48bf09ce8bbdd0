# shellcheck shell=bash disable=SC2034,SC2154  # sets variables for its caller; $script is the caller's
# What the device scripts of this folder share, sourced by cuda-check.sh and
# cuda-bench.sh once they have set $script (their name, for messages and the
# scratch folder): the repository root, the job count ($JOBS, default nproc),
# a scratch folder ($work) removed at exit, say and die, and cuda.h's folder.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
jobs=${JOBS:-$(nproc 2>/dev/null || echo 4)}
work=$(mktemp -d "${TMPDIR:-/tmp}/hurray-$script.XXXXXX")
# shellcheck disable=SC2317  # called by the trap
cleanup() { rm -rf "$work"; }
trap cleanup EXIT

say() { printf '%s: %s\n' "$script" "$*"; }
die() { local code=$1; shift; say "$*" >&2; exit "$code"; }

# The first of $CUDA_HOME/include, /usr/local/cuda/include, /usr/include
# that has cuda.h (nothing where none has).
find_cuda_include() {
  local d
  for d in "${CUDA_HOME:+$CUDA_HOME/include}" /usr/local/cuda/include /usr/include; do
    [[ -n $d && -f $d/cuda.h ]] && { printf '%s\n' "$d"; return 0; }
  done
  return 0
}
