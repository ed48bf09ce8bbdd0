#!/bin/sh
# check_elf.sh needed|exports READELF NM PLUGIN
#   needed:  PLUGIN has no NEEDED entry for libvulkan or libhurray
#   exports: PLUGIN defines exactly one dynamic symbol, hurray_backend_entry
set -eu
mode=$1 readelf=$2 nm=$3 plugin=$4
case $mode in
  needed)
    needed=$("$readelf" -d "$plugin" | grep NEEDED || true)
    printf '%s\n' "$needed"
    [ -n "$needed" ] || { echo "no NEEDED entries read from $plugin"; exit 1; }
    if printf '%s\n' "$needed" | grep -Eq 'libvulkan|libhurray'; then
      echo "FAIL: $plugin links libvulkan or libhurray"; exit 1
    fi ;;
  exports)
    syms=$("$nm" -D --defined-only "$plugin" | awk '{print $NF}')
    printf '%s\n' "$syms"
    [ "$syms" = hurray_backend_entry ] || { echo "FAIL: $plugin must export only hurray_backend_entry"; exit 1; } ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
