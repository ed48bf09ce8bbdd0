#!/usr/bin/python3
"""A released version node of a linker version script is closed.

usage: check_closed_nodes.py MAP FROZEN...

Each FROZEN file (abi/<NODE>.symbols, written once at the release that
closed NODE by scripts/update-abi-baseline.sh) lists the global names of
NODE, one a line. The check fails when NODE is missing from MAP, or when its
global names in MAP differ from the frozen list (a name added to a released
node, or removed from it): new exports go into a new node that inherits the
last one (`HURRAY_1.1 { ... } HURRAY_1.0;`), which this check accepts.
Exit status 0 when every frozen node is unchanged, 1 otherwise.
"""
import os
import re
import sys


def map_nodes(path):
    """{node: [global names]} of a version script, comments stripped."""
    text = re.sub(r"/\*.*?\*/", " ", open(path, encoding="utf-8").read(), flags=re.S)
    text = re.sub(r"#[^\n]*", " ", text)
    nodes = {}
    for m in re.finditer(r"([\w.]+)\s*\{(.*?)\}\s*[\w.]*\s*;", text, re.S):
        section, names = "global", []
        for label, sym in re.findall(r"\b(global|local)\s*:|([^\s;:]+)\s*;", m.group(2)):
            if label:
                section = label
            elif section == "global":
                names.append(sym)
        nodes[m.group(1)] = names
    return nodes


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    mapfile, frozen_files = argv[1], argv[2:]
    nodes = map_nodes(mapfile)
    print("%s: nodes %s" % (mapfile, ", ".join(nodes) or "none"))
    problems = []
    for frozen in frozen_files:
        node = os.path.basename(frozen)[: -len(".symbols")]
        with open(frozen, encoding="utf-8") as f:
            closed = [line.strip() for line in f if line.strip() and not line.startswith("#")]
        if node not in nodes:
            problems.append("released node %s is missing from %s" % (node, mapfile))
            continue
        now = nodes[node]
        for name in sorted(set(now) - set(closed)):
            problems.append("%s added to the closed node %s: put it in a new node "
                            "after the last one (see abi/README.md)" % (name, node))
        for name in sorted(set(closed) - set(now)):
            problems.append("%s removed from the closed node %s: programs built "
                            "against it would no longer load" % (name, node))
        print("%s: %d names, frozen in %s: %d" % (node, len(now), frozen, len(closed)))
    for p in problems:
        print("  FAIL: " + p)
    if problems:
        print("check_closed_nodes: FAILED, %d problem(s)" % len(problems))
        return 1
    print("check_closed_nodes: OK, %d closed node(s) unchanged" % len(frozen_files))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
