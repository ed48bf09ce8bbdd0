#!/bin/sh
# usage: run_abidiff.sh ABIDIFF BASELINE.abi BASELINE_HEADERS_DIR LIBRARY HEADERS_DIR [SUPPRESSIONS]
#
# Compares the ABI baseline (abi/libhurray.abi, its header in abi/) with a
# freshly built libhurray; the headers dirs make abidiff ignore changes to
# private types. abidiff's exit status is a bit field: 1 error, 2 usage error,
# 4 ABI change, 8 incompatible ABI change (a removed symbol...). 1, 2 or 8
# fail. 4 alone passes only for additions: abidiff also reports a changed
# layout of a public struct with 4, so a report that counts anything Removed
# or Changed fails too. Harmless changes (new enumerators) are filtered by
# abidiff and end in 0. The report is always shown. The library needs debug
# info (RelWithDebInfo or Debug builds).
abidiff=$1 baseline=$2 baseline_headers=$3 library=$4 headers=$5
# SUPPRESSIONS: a libabigail suppression file naming deliberate, compatible
# changes (abi/plugin.suppr: an entry taking a reserved slot).
suppressions=${6:-}

# Without DWARF, abidiff (2.2) silently compares symbols only and passes a
# changed struct layout, even with --fail-no-debug-info.
if ! readelf -S --wide "$library" | grep -q '[.]debug_info'; then
  echo "abi: FAILED: $library has no debug info; build it with" \
    "CMAKE_BUILD_TYPE=RelWithDebInfo or Debug so abidiff can compare types"
  exit 1
fi

set -- "$abidiff" ${suppressions:+--suppressions "$suppressions"} \
  --headers-dir1 "$baseline_headers" --headers-dir2 "$headers" \
  "$baseline" "$library"
echo "$*"
report=$("$@")
rc=$?
echo "---- abidiff report (exit status $rc) ----"
[ -n "$report" ] && printf '%s\n' "$report"
echo "---- end of report ----"

if [ $((rc & 3)) -ne 0 ]; then
  echo "abi: FAILED: abidiff could not compare (error or usage error)"
  exit 1
elif [ $((rc & 8)) -ne 0 ]; then
  echo "abi: FAILED: incompatible ABI change against the baseline (see abi/README.md)"
  exit 1
elif [ $((rc & 4)) -ne 0 ]; then
  if printf '%s\n' "$report" | grep -Eq '[1-9][0-9]* (Removed|Changed)|changed'; then
    echo "abi: FAILED: public types or functions changed, not only added (see abi/README.md)"
    exit 1
  fi
  echo "abi: OK: compatible ABI change (additions only)"
else
  echo "abi: OK: no ABI change against the baseline"
fi
exit 0
