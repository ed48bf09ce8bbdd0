#!/usr/bin/env bash
# Mutation testing: does the suite fail when the code it guards is broken?
#
# Reads the mutants of scripts/mutants/*.mut (one file per area; the format
# is in docs/mutation-testing.md), applies each one alone to a scratch copy
# of the repository (never to this tree), rebuilds incrementally (one build
# folder, reused), runs the CTest entries the mutant names, and prints
# caught / SURVIVED per mutant and a score per area.
#
#   scripts/mutate.sh                 every mutant of every area
#   scripts/mutate.sh --area core     one area (repeatable)
#   scripts/mutate.sh --only NAME     one mutant (repeatable)
#   scripts/mutate.sh --sample N      N mutants spread over the areas (fixed)
#   scripts/mutate.sh --ci            the fixed sample scripts/test.sh runs
#   scripts/mutate.sh --list          list the mutants and check each `find`
#                                     (no build; CTest runs this)
# Options: --jobs N (default nproc), --timeout S per ctest run (default 300),
# --no-baseline (skip the run without mutants), --keep-going (do not stop at
# the first mutant that does not build).
#
# Exit status: 0 when every `must: yes` mutant is caught; 1 when one
# survives, a `find` text is missing or not unique, a mutant does not build,
# a mutant's `tests` match no CTest entry, or the suite fails without any
# mutant (baseline); 2 on a usage error.
#
# Scratch: $HURRAY_MUTATE_DIR (default build-test/mutate): src/ (a copy of
# the tracked and untracked, not ignored, files of this tree, refreshed
# each run), src/build-test/mutate/ (the build, configured once with the
# default preset, ABI checks off, fuzz replays on), logs/ (one per mutant).
# The copy's build sits where build-test/default sits in this tree, so with
# ccache (CMAKE_*_COMPILER_LAUNCHER=ccache, CCACHE_BASEDIR=this tree or above,
# CCACHE_NOHASHDIR=1) it reuses what the default build compiled.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
exec python3 - "$repo" "$@" <<'PY'
import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time

repo = sys.argv[1]
ap = argparse.ArgumentParser(prog="scripts/mutate.sh", description="mutation testing")
ap.add_argument("--area", action="append", default=[])
ap.add_argument("--only", action="append", default=[])
ap.add_argument("--sample", type=int, default=0)
ap.add_argument("--ci", action="store_true")
ap.add_argument("--list", action="store_true")
ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
ap.add_argument("--timeout", type=int, default=300)
ap.add_argument("--no-baseline", action="store_true")
ap.add_argument("--keep-going", action="store_true")
args = ap.parse_args(sys.argv[2:])

# The fixed sample of --ci: one mutant of the rule engine, one of the
# handoff layer, one of the CPU backend; each builds only what its tests need.
CI_SAMPLE = ["core-batch-tail-ignores-ipc-minimum", "handoff-foreign-release-twice",
             "cpu-cache-ignores-alignment"]

KEYS = {"must", "file", "find", "replace", "tests", "why", "build"}


def parse(path):
    area = os.path.splitext(os.path.basename(path))[0]
    out, cur = [], None
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            m = re.fullmatch(r"\[mutant ([A-Za-z0-9_.-]+)\]\s*", line)
            if m:
                cur = {"name": m.group(1), "area": area, "where": f"{path}:{no}"}
                out.append(cur)
                continue
            m = re.fullmatch(r"([a-z]+): ?(.*)", line)
            if not m or cur is None or m.group(1) not in KEYS:
                sys.exit(f"{path}:{no}: not a mutant header or a known 'key: value' line: {line}")
            if m.group(1) in cur:
                sys.exit(f"{path}:{no}: {m.group(1)} given twice for {cur['name']}")
            cur[m.group(1)] = m.group(2)
    for mu in out:
        for k in ("must", "file", "find", "replace", "tests", "why"):
            if k not in mu:
                sys.exit(f"{mu['where']}: mutant {mu['name']} has no '{k}:'")
        if mu["must"] not in ("yes", "no"):
            sys.exit(f"{mu['where']}: must: is yes or no")
        if mu["find"] == mu["replace"]:
            sys.exit(f"{mu['where']}: replace: equals find:")
        mu["must"] = mu["must"] == "yes"
        mu["build"] = mu.get("build", "").split()
    return out


mut_dir = os.path.join(repo, "scripts", "mutants")
mutants = []
for name in sorted(os.listdir(mut_dir)):
    if name.endswith(".mut"):
        mutants += parse(os.path.join(mut_dir, name))
names = [m["name"] for m in mutants]
dups = sorted({n for n in names if names.count(n) > 1})
if dups:
    sys.exit("mutate: mutant names used twice: " + ", ".join(dups))
areas = sorted({m["area"] for m in mutants})

sel = mutants
if args.ci:
    args.only += CI_SAMPLE
if args.area:
    unknown = sorted(set(args.area) - set(areas))
    if unknown:
        sys.exit(f"mutate: no area {', '.join(unknown)} (areas: {', '.join(areas)})")
    sel = [m for m in sel if m["area"] in args.area]
if args.only:
    unknown = sorted(set(args.only) - set(names))
    if unknown:
        sys.exit(f"mutate: no mutant {', '.join(unknown)}")
    sel = [m for m in sel if m["name"] in args.only]
if args.sample:
    # Fixed: the mutants in the order of a hash of their names, round-robin
    # over the areas, the first N.
    by_area = {}
    for m in sorted(sel, key=lambda m: hashlib.sha1(m["name"].encode()).hexdigest()):
        by_area.setdefault(m["area"], []).append(m)
    picked = []
    while len(picked) < args.sample and any(by_area.values()):
        for a in sorted(by_area):
            if by_area[a] and len(picked) < args.sample:
                picked.append(by_area[a].pop(0))
    sel = picked


def check_find(m, root):
    path = os.path.join(root, m["file"])
    if not os.path.isfile(path):
        return f"{m['file']} does not exist"
    n = open(path, encoding="utf-8").read().count(m["find"])
    return None if n == 1 else f"find: occurs {n} times in {m['file']} (must be exactly once)"


bad_finds = [(m, e) for m in sel for e in [check_find(m, repo)] if e]
for m, e in bad_finds:
    print(f"INVALID  {m['name']}: {e} ({m['where']})")

if args.list:
    for m in sel:
        print(f"{m['area']:8} {m['name']:44} must:{'yes' if m['must'] else 'no ':3} "
              f"{m['file']}  tests: {m['tests']}")
        print(f"{'':8} {m['why']}")
    print(f"{len(sel)} mutants in {len({m['area'] for m in sel})} areas; "
          f"{len(bad_finds)} with a find: that is not exactly once in its file")
    sys.exit(1 if bad_finds else 0)
if bad_finds:
    sys.exit(1)
if not sel:
    sys.exit("mutate: no mutant selected")

# ---- the scratch copy ------------------------------------------------------
scratch = os.path.abspath(os.environ.get("HURRAY_MUTATE_DIR", os.path.join(repo, "build-test", "mutate")))
# build/ sits in the copy as build-test/default sits in the tree, so that the
# compiler sees the same relative paths and ccache (CCACHE_BASEDIR) hits.
src, logs = os.path.join(scratch, "src"), os.path.join(scratch, "logs")
build = os.path.join(src, "build-test", "mutate")
os.makedirs(src, exist_ok=True)
in_git = subprocess.run(["git", "-C", repo, "rev-parse", "--git-dir"], stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL).returncode == 0
if in_git and os.path.realpath(scratch).startswith(os.path.realpath(repo) + os.sep) and subprocess.run(
        ["git", "-C", repo, "check-ignore", "-q", scratch]).returncode != 0:
    sys.exit(f"mutate: {scratch} is inside the tree and not ignored by git: it would copy itself")
os.makedirs(logs, exist_ok=True)
listed = subprocess.run(["git", "-C", repo, "ls-files", "-z", "-co", "--exclude-standard"],
                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
if listed.returncode == 0:
    files = listed.stdout.decode().split("\0")
else:  # not a git checkout: every file but build folders (as .gitignore says)
    files = []
    for d, subdirs, names in os.walk(repo):
        subdirs[:] = [x for x in subdirs if not (x.startswith("build") or x in (".git", "out", "__pycache__"))]
        files += [os.path.relpath(os.path.join(d, n), repo) for n in names if not n.endswith(".pyc")]
copied = 0
for rel in filter(None, files):
    a, b = os.path.join(repo, rel), os.path.join(src, rel)
    if not os.path.isfile(a) or os.path.islink(a):
        continue
    data = open(a, "rb").read()
    if os.path.isfile(b) and open(b, "rb").read() == data:
        continue  # unchanged: keep its time stamp, the build stays incremental
    os.makedirs(os.path.dirname(b), exist_ok=True)
    shutil.copy2(a, b)
    copied += 1
# Files copied by an earlier run and gone from the tree since go too.
manifest = os.path.join(scratch, "manifest.txt")
now = sorted(rel for rel in filter(None, files) if os.path.isfile(os.path.join(repo, rel)))
if os.path.exists(manifest):
    for rel in set(open(manifest).read().splitlines()) - set(now):
        if os.path.isfile(os.path.join(src, rel)):
            os.remove(os.path.join(src, rel))
open(manifest, "w").write("\n".join(now) + "\n")
print(f"mutate: scratch copy {src} ({copied} files refreshed), build {build}", flush=True)


def run(cmd, log, timeout=None):
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        try:
            return subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            f.write(f"(timed out after {timeout} s)\n")
            return 124


setup_log = os.path.join(logs, "_setup.log")
open(setup_log, "w").close()
if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
    if run(["cmake", "--preset", "default", "-S", src, "-B", build, "-DHURRAY_ABI_CHECKS=OFF",
            "-DHURRAY_FUZZ=ON"], setup_log):
        sys.exit(f"mutate: configuring the scratch build failed, see {setup_log}")


def build_for(ms, log):
    targets = sorted({t for m in ms for t in m["build"]}) if all(m["build"] for m in ms) else []
    cmd = ["cmake", "--build", build, "-j", str(args.jobs)]
    if targets:
        cmd += ["--target", *targets]
    return run(cmd, log)


def ctest(regex, log):
    return run(["ctest", "--test-dir", build, "-R", regex, "-j", str(args.jobs), "--timeout",
                str(args.timeout), "--no-tests=error", "--output-on-failure"], log,
               timeout=args.timeout * 4)


def failed_tests(log):
    text = open(log, errors="replace").read()
    return re.findall(r"^\s*\d+ - (.*?) \((?:Failed|Timeout|SEGFAULT|Subprocess aborted|"
                      r"Exception|Child aborted|Not Run)\)", text, re.M)


t0 = time.time()
if build_for(sel, setup_log):
    sys.exit(f"mutate: the scratch copy does not build without mutants, see {setup_log}")
if not args.no_baseline:
    # The union of the selected mutants' tests, by number (CMake's regular
    # expressions allow too few groups to join them).
    numbers = set()
    for regex in sorted({m["tests"] for m in sel}):
        listed = subprocess.run(["ctest", "--test-dir", build, "-N", "-R", regex],
                                stdout=subprocess.PIPE, text=True).stdout
        found = re.findall(r"^\s*Test\s+#(\d+):", listed, re.M)
        if not found:
            sys.exit(f"mutate: tests: {regex} matches no CTest entry")
        numbers.update(int(n) for n in found)
    if run(["ctest", "--test-dir", build, "-I", "0,0,0," + ",".join(map(str, sorted(numbers))),
            "-j", str(args.jobs), "--timeout", str(args.timeout), "--output-on-failure"],
           setup_log, timeout=args.timeout * 8):
        print(f"mutate: the tests fail without any mutant: {', '.join(failed_tests(setup_log))}")
        sys.exit(f"mutate: fix the suite first (see {setup_log}), or pass --no-baseline")
    print(f"mutate: baseline: the selected tests pass without mutants ({time.time() - t0:.0f} s)",
          flush=True)

results = []
for m in sel:
    log = os.path.join(logs, m["name"] + ".log")
    open(log, "w").write(f"mutant {m['name']} ({m['where']})\n{m['file']}\n"
                         f"- {m['find']}\n+ {m['replace']}\n")
    path = os.path.join(src, m["file"])
    original = open(path, "rb").read()
    text = original.decode("utf-8")
    if text.count(m["find"]) != 1:
        results.append((m, "invalid", "find: not exactly once in the scratch copy"))
        print(f"INVALID  {m['name']}", flush=True)
        continue
    t = time.time()
    try:
        open(path, "w", encoding="utf-8").write(text.replace(m["find"], m["replace"], 1))
        if build_for([m], log):
            verdict, detail = "no-build", "the mutant does not compile (see its log)"
        else:
            rc = ctest(m["tests"], log)
            failed = failed_tests(log)
            if rc == 0:
                verdict, detail = "survived", ""
            elif "No tests were found" in open(log, errors="replace").read():
                verdict, detail = "no-tests", f"tests: {m['tests']} matches no CTest entry"
            else:
                verdict = "caught"
                detail = f"{len(failed)} failed: " + "; ".join(failed[:3]) + (
                    " ..." if len(failed) > 3 else "")
    finally:
        open(path, "wb").write(original)
    results.append((m, verdict, detail))
    label = {"caught": "caught  ", "survived": "SURVIVED", "no-build": "NO-BUILD",
             "no-tests": "NO-TESTS"}[verdict]
    must = " [must]" if m["must"] and verdict == "survived" else ""
    print(f"{label} {m['area']:8} {m['name']}{must} ({time.time() - t:.0f} s) {detail}", flush=True)
    if verdict == "survived":
        print(f"         {m['why']}", flush=True)
    if verdict == "no-build" and not args.keep_going:
        print(f"mutate: stopping (log: {log}); --keep-going goes on", flush=True)
        break
# the scratch copy as it was: rebuild nothing now, the next run does

print("\nscore per area (caught / run):")
for a in sorted({m["area"] for m, _, _ in results}):
    rs = [v for m, v, _ in results if m["area"] == a]
    c = rs.count("caught")
    print(f"  {a:10} {c}/{len(rs)}  {100 * c // len(rs)}%")
c = sum(v == "caught" for _, v, _ in results)
print(f"  {'total':10} {c}/{len(results)}  {100 * c // max(1, len(results))}%  "
      f"({time.time() - t0:.0f} s)")
survivors = [m["name"] for m, v, _ in results if v == "survived"]
if survivors:
    print("survivors: " + ", ".join(survivors))
must_survivors = [m["name"] for m, v, _ in results if v == "survived" and m["must"]]
broken = [m["name"] for m, v, _ in results if v in ("no-build", "no-tests", "invalid")]
if must_survivors:
    print("FAIL: must-be-caught mutants survived: " + ", ".join(must_survivors))
if broken:
    print("FAIL: mutants that could not be judged: " + ", ".join(broken))
sys.exit(1 if must_survivors or broken or len(results) < len(sel) else 0)
PY
