#!/bin/sh
# The layering rule of the dispatch layer (src/runtime/dispatch.h): no code
# in src/ calls a plugin's table (hurray_backend_v1) except the plugins
# themselves (src/backends/) and the dispatch layer (src/runtime/dispatch.*);
# the loader (src/runtime/backends.cpp) checks and probes a table through it
# too, and reads no field of a table itself. Fails, listing them, when a
# direct call (or, in the loader, a read) appears anywhere else.
# Usage: check_dispatch.sh <source root>
set -u
root=${1:?usage: check_dispatch.sh <source root>}
cd "$root" || exit 2
[ -f src/runtime/dispatch.h ] || { echo "no src/runtime/dispatch.h under $root"; exit 2; }
entries='probe|shutdown|device_count|device_info|alloc|free|copy_to_host|copy_from_host|classify|event_record|event_wait|event_release|ipc_export_memory|ipc_import_memory|ipc_export_event|ipc_import_event|native'
# a table reached through a pointer (table->, tbl->), or an entry called
# through one (x->alloc(...), x.table->free(...))
pattern="(\\b(table|tbl)->)|((->|\\.)($entries)[[:space:]]*\\()"
files=$(find src -type f \( -name '*.c' -o -name '*.cc' -o -name '*.cpp' -o -name '*.h' -o -name '*.hpp' \) \
          ! -path 'src/backends/*' ! -path 'src/runtime/dispatch.*' | sort)
[ -n "$files" ] || { echo "no source files found under $root/src"; exit 2; }
n=$(printf '%s\n' "$files" | wc -l)
hits=$(printf '%s\n' "$files" | xargs grep -nE "$pattern" || true)
# the loader holds tables before they are Backends (a plugin's, `t`): no
# field of one is read there but through dispatch.h
loader=src/runtime/backends.cpp
[ -f "$loader" ] || { echo "no $loader under $root"; exit 2; }
more=$(grep -nE "(\bt->)|(->(api_version|device_tag)\b)" "$loader" || true)
[ -n "$more" ] && hits=$(printf '%s\n%s' "$hits" "$(printf '%s\n' "$more" | sed "s|^|$loader:|")")
hits=$(printf '%s\n' "$hits" | sed '/^$/d' | awk '!seen[$0]++')
if [ -n "$hits" ]; then
  echo "direct calls of a plugin table outside src/backends and src/runtime/dispatch.*"
  echo "(call it through hurray::detail::dispatch, src/runtime/dispatch.h):"
  printf '%s\n' "$hits"
  exit 1
fi
echo "layering: $n files of src/ call plugin tables only through src/runtime/dispatch.h"
