#!/usr/bin/env python3
"""Every Catch2 test case runs under CTest, and no CTest entry runs nothing.

Usage: check_catch_registration.py CTEST BUILD_DIR ALLOWED PROGRAM...

PROGRAM: every Catch2 program that registers tests (cmake/Catch.cmake
collects them). For each program this lists its test cases (visible ones
with `--list-test-names-only`, hidden ones with the spec `[.]`) and every
CTest entry whose command runs it (`ctest --show-only=json-v1`). Each entry's
own arguments, given to `--list-test-names-only`, say which test cases it
runs; the check fails when
  - an entry runs no test case (a filter matching nothing, such as the two
    halves of a name CTest split at a ';'; Catch2 2.13 would exit 0);
  - an entry registered by catch_discover_tests lacks `-w NoTests`;
  - a test case, visible or hidden, is run by no entry, unless ALLOWED
    (tests/catch_unregistered.txt) lists it with the reason;
  - a line of ALLOWED matches no test case of a program that is built.
It prints the counts, including "vacuous entries: 0" when all is well.
"""
import fnmatch
import json
import os
import subprocess
import sys


def list_names(program, args):
    """The test cases `program args...` would run (Catch2's listing)."""
    out = subprocess.run([program, "--list-test-names-only", *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, timeout=120)
    # Catch2 2.13 exits with the number of names listed; only a crash or an
    # unknown option is an error here.
    if out.returncode < 0 or (out.returncode and not out.stdout.strip()):
        if out.stderr.strip():
            raise RuntimeError(f"{program} {' '.join(args)}: {out.stderr.strip()}")
    return [line for line in out.stdout.splitlines() if line.strip()]


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    ctest, build_dir, allowed_file, programs = argv[1], argv[2], argv[3], sorted(set(argv[4:]))
    allowed = []  # (program, glob, why, line number)
    with open(allowed_file, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            if line.strip() and not line.lstrip().startswith("#"):
                parts = [p.strip() for p in line.split("|", 2)]
                if len(parts) != 3 or not all(parts):
                    print(f"{allowed_file}:{no}: not PROGRAM | GLOB | why")
                    return 1
                allowed.append((*parts, no))
    shown = subprocess.run([ctest, "--test-dir", build_dir, "--show-only=json-v1"],
                           stdout=subprocess.PIPE, text=True, check=True)
    tests = json.loads(shown.stdout)["tests"]
    real = {os.path.realpath(p): p for p in programs}
    failures = []
    entries_checked = vacuous = cases_total = 0
    allowed_count = [0]
    for path in sorted(real):
        if not os.path.exists(path):
            failures.append(f"{real[path]}: not built, so none of its test cases run")
            continue
        visible = list_names(path, [])
        hidden = list_names(path, ["[.]"])
        cases = set(visible) | set(hidden)
        cases_total += len(cases)
        covered = set()
        mine = [t for t in tests
                if t.get("command") and os.path.realpath(t["command"][0]) == path]
        for t in mine:
            args = t["command"][1:]
            entries_checked += 1
            runs = list_names(path, args)
            if not runs:
                vacuous += 1
                failures.append(f"vacuous entry: '{t['name']}' runs no test case of "
                                f"{os.path.basename(path)} (arguments {args})")
            # catch_discover_tests' entries name one test case each.
            discovered = len(args) >= 1 and args[0] not in ("", "*") and not args[0].startswith("[")
            if discovered and not any(a == "-w" and b == "NoTests" for a, b in zip(args, args[1:])):
                failures.append(f"entry '{t['name']}' runs without -w NoTests")
            covered.update(runs)
        prog = os.path.basename(path)
        mine_allowed = [a for a in allowed if a[0] == prog]
        for a in mine_allowed:
            if not any(fnmatch.fnmatchcase(c, a[1]) for c in cases):
                failures.append(f"{allowed_file}:{a[3]}: stale, matches no test case of {prog}")
        for name in sorted(cases - covered):
            why = [a[2] for a in mine_allowed if fnmatch.fnmatchcase(name, a[1])]
            if why:
                allowed_count[0] += 1
                print(f"  without an entry, as {os.path.basename(allowed_file)} allows: '{name}' ({why[0]})")
            else:
                failures.append(f"test case without a CTest entry: {prog}: '{name}'")
        print(f"{os.path.basename(path)}: {len(cases)} test cases ({len(hidden)} hidden), "
              f"{len(mine)} CTest entries, {len(cases & covered)} cases run")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(real)} Catch2 programs, {cases_total} test cases, {entries_checked} entries; "
          f"vacuous entries: {vacuous}; test cases without an entry: "
          f"{sum(1 for f in failures if f.startswith('test case without'))} "
          f"(and {allowed_count[0]} allowed)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
