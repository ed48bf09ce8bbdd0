#!/bin/sh
# Build and run a quick start of README.md against this build's libhurray:
#   run_quickstart.sh python|py|python3|zig README WORKDIR LIBDIR INCLUDEDIR TOOL
# It takes the one ```LANG block of README.md, verbatim (```py: the Python
# IPC example, run as ```python is). TOOL: the Python
# interpreter (with PYTHONPATH set to python/), or scripts/zig.sh. The Rust
# quick start uses the crates and is run by tests/rust.
set -eu
lang=$1 readme=$2 work=$3 libdir=$4 include=$5 tool=${6:-}
rm -rf "$work"
mkdir -p "$work"
case $lang in python|py|python3) ext=py ;; zig) ext=zig ;;
  *) echo "run_quickstart.sh: unknown language $lang" >&2; exit 2 ;; esac
src=$work/quickstart.$ext
/usr/bin/python3 - "$readme" "$lang" >"$src" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
blocks = re.findall(r"```%s\n(.*?)```" % re.escape(sys.argv[2]), text, re.S)
if len(blocks) != 1:
    sys.exit("README.md has %d ```%s blocks, expected 1" % (len(blocks), sys.argv[2]))
sys.stdout.write(blocks[0])
PY
set -x
case $lang in
python|py|python3)
  HURRAY_LIBRARY=$libdir/libhurray.so.1 PYTHONDONTWRITEBYTECODE=1 "$tool" "$src"
  ;;
zig)
  zig=$("$tool")
  cache=$(dirname "$(dirname "$(dirname "$(dirname "$zig")")")")/zig-cache
  ZIG_GLOBAL_CACHE_DIR=$cache ZIG_LOCAL_CACHE_DIR=$work/zig-cache "$zig" build-exe "$src" \
    -I "$include" -L "$libdir" -lhurray -lc -femit-bin="$work/app"
  LD_LIBRARY_PATH=$libdir "$work/app"
  ;;
esac
