#!/usr/bin/python3
"""Write a Debian symbols file (deb-symbols(5)) from a linker version script.

usage: map-to-symbols.py MAP SONAME PACKAGE DEV_PACKAGE > debian/PACKAGE.symbols

Every global name of node <PREFIX>_<major>.<minor> becomes
"name@NODE <major>.<minor>.0": a program that uses it needs the release that
added the node. The node itself (dpkg-gensymbols lists the version
definition as NODE@NODE) gets the same version. debian/rules runs this
before dh_makeshlibs with DPKG_GENSYMBOLS_CHECK_LEVEL=4, so a library that
exports a name the map does not list, or lacks one it lists, fails the build.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "abi"))
from check_closed_nodes import map_nodes  # noqa: E402


def main(argv):
    if len(argv) != 5:
        sys.stderr.write(__doc__)
        return 2
    mapfile, soname, package, dev = argv[1:]
    out = ["%s %s #MINVER#" % (soname, package), "* Build-Depends-Package: %s" % dev]
    for node, names in map_nodes(mapfile).items():
        m = re.fullmatch(r"[A-Z_]+_(\d+)\.(\d+)", node)
        if not m:
            sys.stderr.write("map-to-symbols: node %s is not NAME_<major>.<minor>\n" % node)
            return 1
        version = "%s.%s.0" % m.groups()
        out.append(" %s@%s %s" % (node, node, version))
        out += [" %s@%s %s" % (name, node, version) for name in names]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
