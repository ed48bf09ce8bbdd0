#!/bin/sh
# check_plugin.sh needed|exports PLUGIN
#   needed:  the plugin has NEEDED entries, none of them libze_loader or
#            libhurray (it dlopens libze_loader.so.1 and uses libhurray's
#            headers only)
#   exports: the only dynamic symbol it defines is hurray_backend_entry
set -eu
mode=$1
plugin=$2
case $mode in
  needed)
    dyn=$(readelf -d "$plugin") || { echo "readelf -d $plugin failed"; exit 1; }
    needed=$(printf '%s\n' "$dyn" | grep NEEDED) || { echo "no NEEDED entry in $plugin"; exit 1; }
    printf '%s\n' "$needed"
    if printf '%s\n' "$needed" | grep -E -q 'libze_loader|libze_|libhurray'; then
      echo "FAIL: $plugin must not link libze_loader (or another libze_*) or libhurray"
      exit 1
    fi
    ;;
  exports)
    syms=$(nm -D --defined-only "$plugin" | awk 'NF >= 3 { print $3 }' | sort -u)
    echo "exported: $syms"
    [ "$syms" = hurray_backend_entry ] || { echo "FAIL: only hurray_backend_entry may be exported"; exit 1; }
    ;;
  *)
    echo "usage: $0 needed|exports PLUGIN"
    exit 2
    ;;
esac
