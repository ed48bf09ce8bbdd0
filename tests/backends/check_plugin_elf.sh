#!/bin/sh
# check_plugin_elf.sh needed|exports PLUGIN   (the ELF checks of every backend plugin)
#   needed:  the plugin has NEEDED entries, and none of them is a vendor
#            runtime (libvulkan, libOpenCL, libze_*, libcuda, libcudart,
#            libnvidia-*, libamdhip64, libhsa-runtime64, a WebGPU library:
#            libwebgpu*, libwgpu*, libdawn*) or libhurray: a plugin
#            dlopens its runtime in probe() and uses libhurray's headers only.
#            (A machine whose LIBRARY_PATH holds the CUDA stubs would link a
#            stray -lcuda silently; this catches it.)
#   exports: the only dynamic symbol it defines is hurray_backend_entry
set -eu
mode=$1
plugin=$2
case $mode in
  needed)
    dyn=$(readelf -d "$plugin") || { echo "readelf -d $plugin failed"; exit 1; }
    needed=$(printf '%s\n' "$dyn" | grep NEEDED) || { echo "no NEEDED entry in $plugin"; exit 1; }
    printf '%s\n' "$needed"
    if printf '%s\n' "$needed" |
        grep -E -q 'libvulkan|libOpenCL|libze_|libcuda|libcudart|libnvidia|libamdhip64|libhsa-runtime|libwebgpu|libwgpu|libdawn|libhurray'; then
      echo "FAIL: $plugin must not link a vendor runtime or libhurray"
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
