#!/usr/bin/python3
"""Check what libhurray exports against include/hurray.h and hurray.map.

usage: check_exports.py LIBRARY HEADER MAP [--nm NM] [--readelf READELF]
                        [--extra-header HEADER]...

Checks, printing every discrepancy by name:
  - the SONAME is libhurray.so.<HURRAY_VERSION_MAJOR>;
  - every defined dynamic symbol starts with hurray_, is not a mangled C++
    name and carries a HURRAY_<major>.<minor> version, the one of the map node
    that lists it;
  - functions declared with HURRAY_API == exported symbols == global: names
    of hurray.map;
  - hurray.map: node names are HURRAY_<major>.<minor>, each node inherits the
    previous one, a name appears once, and the names of each node are sorted.
Exit status 0 when everything holds, 1 otherwise.
"""
import argparse
import re
import subprocess
import sys

VERSION_NODE = re.compile(r"HURRAY_(\d+)\.(\d+)")
problems = []


def problem(message):
    problems.append(message)
    print("  FAIL: " + message)


def strip_c_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def header_functions(path):
    """Names of the functions declared with HURRAY_API, and the major version."""
    text = strip_c_comments(open(path, encoding="utf-8").read())
    major = re.search(r"^\s*#\s*define\s+HURRAY_VERSION_MAJOR\s+(\d+)", text, re.M)
    # Drop preprocessor lines (with their continuations): the #define of
    # HURRAY_API itself is not a declaration.
    text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)
    names = []
    for decl in re.findall(r"\bHURRAY_API\b([^;]*);", text):
        m = re.match(r"[^(]*?\b(\w+)\s*\(", decl)
        if m:
            names.append(m.group(1))
        else:
            problem("hurray.h: cannot parse declaration: HURRAY_API%s"
                    % " ".join(decl.split()))
    print("hurray.h: %d functions declared with HURRAY_API" % len(names))
    for name in sorted(set(re.findall(r"\b(hurray_\w+)\s*\(", text)) - set(names)):
        problem("hurray.h: %s is declared without HURRAY_API" % name)
    uses = len(re.findall(r"\bHURRAY_API\b", text))
    if uses != len(names):
        problem("hurray.h: HURRAY_API appears %d times, %d declarations parsed"
                % (uses, len(names)))
    return names, int(major.group(1)) if major else None


def map_nodes(path):
    """[(node, parent, [global names])] in file order."""
    text = strip_c_comments(open(path, encoding="utf-8").read())
    nodes = []
    for m in re.finditer(r"([\w.]+)\s*\{(.*?)\}\s*([\w.]*)\s*;", text, re.S):
        name, body, parent = m.groups()
        section, names = "global", []
        for label, sym in re.findall(r"\b(global|local)\s*:|([^\s;:]+)\s*;", body):
            if label:
                section = label
            elif section == "global":
                names.append(sym)
        nodes.append((name, parent, names))
    return nodes


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("library")
    ap.add_argument("header")
    ap.add_argument("map")
    ap.add_argument("--nm", default="nm")
    ap.add_argument("--readelf", default="readelf")
    # Layer headers that add functions to the same library (hurray_dlpack.h,
    # ...): their HURRAY_API declarations count as declared too.
    ap.add_argument("--extra-header", action="append", default=[])
    args = ap.parse_args()
    print("check_exports: %s" % args.library)

    # hurray.h
    declared, major = header_functions(args.header)
    for extra in args.extra_header:
        declared += header_functions(extra)[0]
    for name in sorted({n for n in declared if declared.count(n) > 1}):
        problem("hurray.h: %s declared more than once" % name)
    if major is None:
        problem("hurray.h: no HURRAY_VERSION_MAJOR")

    # SONAME
    expected = "libhurray.so.%s" % major
    m = re.search(r"\(SONAME\).*\[(.*)\]", run(args.readelf, "-d", args.library))
    soname = m.group(1) if m else None
    print("SONAME: %s (expected %s)" % (soname, expected))
    if soname != expected:
        problem("SONAME is %s, expected %s" % (soname, expected))

    # hurray.map
    nodes = map_nodes(args.map)
    mapped = {}  # name -> node
    for i, (node, parent, names) in enumerate(nodes):
        print("hurray.map: node %s%s: %d global names"
              % (node, " (inherits %s)" % parent if parent else "", len(names)))
        v = VERSION_NODE.fullmatch(node)
        if not v:
            problem("hurray.map: node %s is not named HURRAY_<major>.<minor>" % node)
        elif major is not None and int(v.group(1)) != major:
            problem("hurray.map: node %s does not match major version %d" % (node, major))
        previous = nodes[i - 1][0] if i else ""
        if parent != previous:
            problem("hurray.map: node %s inherits '%s', expected '%s'"
                    % (node, parent, previous))
        for a, b in zip(names, names[1:]):
            if a >= b:
                problem("hurray.map: node %s is not sorted: %s before %s" % (node, a, b))
        for name in names:
            if name in mapped:
                problem("hurray.map: %s listed in %s and %s" % (name, mapped[name], node))
            mapped.setdefault(name, node)
    if not nodes:
        problem("hurray.map: no version node found")

    # Dynamic symbols the library defines ("name@@VERSION" or "name@VERSION";
    # the version definition itself shows as an absolute symbol).
    node_names = {node for node, _, _ in nodes}
    exported = {}  # name -> version
    version_defs = []
    nm_out = run(args.nm, "-D", "--defined-only", "--with-symbol-versions", args.library)
    for line in nm_out.splitlines():
        fields = line.split()
        if len(fields) < 2:
            continue
        kind, symbol = fields[-2], fields[-1]
        name, _, version = symbol.replace("@@", "@").partition("@")
        if kind == "A" and name in node_names and version in ("", name):
            version_defs.append(name)
        else:
            exported[name] = version
    mangled = sorted(n for n in exported if n.startswith("_Z"))
    print("library: %d defined dynamic symbols, %d mangled C++ symbols, "
          "version definitions: %s"
          % (len(exported), len(mangled), ", ".join(version_defs) or "none"))
    for node in sorted(node_names - set(version_defs)):
        problem("hurray.map node %s is not defined in the library" % node)
    for name, version in sorted(exported.items()):
        if name in mangled:
            problem("mangled C++ symbol exported: %s" % name)
        elif not name.startswith("hurray_"):
            problem("exported symbol without the hurray_ prefix: %s" % name)
        if not version:
            problem("exported symbol without a version: %s" % name)
        elif not VERSION_NODE.fullmatch(version):
            problem("exported symbol %s has version %s, not HURRAY_<major>.<minor>"
                    % (name, version))
        elif name in mapped and version != mapped[name]:
            problem("exported symbol %s has version %s but hurray.map lists it in %s"
                    % (name, version, mapped[name]))

    # The three sets must be equal.
    sets = {"declared in hurray.h": set(declared),
            "exported by the library": set(exported),
            "listed in hurray.map": set(mapped)}
    print("comparing hurray.h (%d) / exports (%d) / hurray.map (%d)"
          % tuple(len(s) for s in sets.values()))
    for a, sa in sets.items():
        for b, sb in sets.items():
            for name in sorted(sa - sb):
                problem("%s %s but not %s" % (name, a, b))

    if problems:
        print("check_exports: FAILED, %d problem(s)" % len(problems))
        return 1
    print("check_exports: OK, %d functions, all three agree" % len(declared))
    return 0


if __name__ == "__main__":
    sys.exit(main())
