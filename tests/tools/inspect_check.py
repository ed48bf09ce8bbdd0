#!/usr/bin/env python3
"""Run hurray-inspect twice (text, then --json) and check its contract.

usage: inspect_check.py --exe PATH --exit N [--errors R,R] [--warnings R,R]
                        [--contains TEXT]... [--lacks TEXT]... [--stdin-hex HEX]
                        [--no-json]
                        -- ARGS...

--errors/--warnings give the exact ordered rule IDs expected in the JSON
output (omit to not check; pass "" for none). Text output must name each.
"""
import argparse
import json
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--exit", type=int, required=True)
    ap.add_argument("--errors")
    ap.add_argument("--warnings")
    ap.add_argument("--contains", action="append", default=[])
    ap.add_argument("--lacks", action="append", default=[])
    ap.add_argument("--stdin-hex", default="")
    ap.add_argument("--buffers", type=int)
    ap.add_argument("--no-json", action="store_true")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    o = ap.parse_args()
    args = o.args[1:] if o.args[:1] == ["--"] else o.args
    stdin = bytes.fromhex(o.stdin_hex)
    failures = []

    def run(extra):
        p = subprocess.run([o.exe] + extra + args, input=stdin, capture_output=True)
        return p.returncode, p.stdout.decode(), p.stderr.decode()

    rc, out, err = run([])
    print("$ hurray-inspect", " ".join(args))
    print(out + err, end="")
    if rc != o.exit:
        failures.append(f"text mode: exit {rc}, expected {o.exit}")
    for text in o.contains:
        if text not in out + err:
            failures.append(f"text mode: output lacks {text!r}")
    for text in o.lacks:
        if text in out + err:
            failures.append(f"text mode: output has {text!r}")
    for ids in (o.errors, o.warnings):
        for rule in (ids or "").split(","):
            if rule and rule not in out:
                failures.append(f"text mode: output does not name {rule}")

    if o.exit != 2 and not o.no_json:
        rc, out, err = run(["--json"])
        print("$ hurray-inspect --json", " ".join(args))
        print(out + err, end="")
        if rc != o.exit:
            failures.append(f"json mode: exit {rc}, expected {o.exit}")
        try:
            doc = json.loads(out)
        except ValueError as e:
            failures.append(f"json mode: not one JSON object: {e}")
            doc = None
        if doc is not None:
            for key in ("valid", "buffers", "errors", "warnings"):
                if key not in doc:
                    failures.append(f"json: missing key {key}")
            if doc.get("valid") is not (o.exit == 0):
                failures.append(f"json: valid={doc.get('valid')} but exit {o.exit}")
            for item in doc.get("errors", []) + doc.get("warnings", []):
                for key in ("rule", "buffer", "offset", "message"):
                    if key not in item:
                        failures.append(f"json: diagnostic lacks {key}: {item}")
                if not item.get("message", "").startswith(item.get("rule", "?")):
                    failures.append(f"json: message does not start with its rule: {item}")
            for name, want in (("errors", o.errors), ("warnings", o.warnings)):
                if want is None:
                    continue
                got = [d["rule"] for d in doc.get(name, [])]
                exp = [r for r in want.split(",") if r]
                if got != exp:
                    failures.append(f"json: {name} {got}, expected {exp}")
            if o.buffers is not None and len(doc.get("buffers", [])) != o.buffers:
                failures.append(f"json: {len(doc.get('buffers', []))} buffers, expected {o.buffers}")

    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
