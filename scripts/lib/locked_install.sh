# shellcheck shell=bash
# A pinned tool installed once into a cache, atomically, by any number of
# concurrent callers (CTest runs tests that need it in parallel). Sourced by
# scripts/webgpu.sh and scripts/zig.sh; tests/tools/atomic_install.sh tests
# both through the same checks.
#
# The scheme: the installer fills a temporary directory beside the final one
# and checks it; the temporary directory is marked complete and renamed to
# the final one in one step, under the cache's lock; a reader outside the
# lock trusts only a marked tree, so it never uses a half-written install.

# hurray_need_npm TOOL WHAT: npm is there (or the caller's fake is set, pass
# a non-empty third argument), installing Debian's when root.
hurray_need_npm() {
  local tool=$1 what=$2 fake=${3:-}
  [[ -n $fake ]] && return 0
  command -v npm >/dev/null && return 0
  if [[ $(id -u) -eq 0 ]]; then
    echo "$tool: installing npm (Debian)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm >&2
  else
    echo "$tool: npm is needed to install $what: apt-get install npm" >&2
    return 1
  fi
}

# hurray_locked_install CACHE DIR MARKER PRESENT FILL
#   Under CACHE/.lock: unless the function PRESENT succeeds (checked again
#   under the lock: another caller may have installed meanwhile), the
#   function FILL TMP installs into TMP (a fresh directory in CACHE) and
#   checks it, failing with its own message; then TMP gets MARKER, a DIR
#   left by an interrupted install is moved away, and TMP is renamed DIR.
#   Returns FILL's failure (TMP removed), else 0.
hurray_locked_install() {
  local cache=$1 dir=$2 marker=$3 present=$4 fill=$5 tmp old
  mkdir -p "$cache"
  exec 9>"$cache/.lock"
  flock 9
  if ! "$present"; then
    tmp=$(mktemp -d "$cache/.install.XXXXXX")
    if ! "$fill" "$tmp"; then
      rm -rf "$tmp"
      flock -u 9
      return 1
    fi
    touch "$tmp/$marker"
    if [[ -e $dir ]]; then  # a tree without its marker: an interrupted install
      old=$(mktemp -d "$cache/.stale.XXXXXX")
      mv "$dir" "$old/"
      rm -rf "$old"
    fi
    mv "$tmp" "$dir"  # one rename: $dir appears whole
  fi
  flock -u 9
}
