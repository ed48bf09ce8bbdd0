#!/usr/bin/python3
"""One version everywhere: the CMake project's, hurray.h's, the Python
package's and the Debian packages' must be the same release.

usage: check_versions.py PROJECT_VERSION ROOT
Exit status 0 when they agree, 1 otherwise (each place printed)."""
import re
import sys


def find(path, pattern):
    with open(path, encoding="utf-8") as f:
        m = re.search(pattern, f.read(), re.M)
    return m.group(1) if m else None


def main(argv):
    version, root = argv[1], argv[2]
    header = root + "/include/hurray.h"
    places = {
        "CMakeLists.txt project()": version,
        "hurray.h HURRAY_VERSION_STRING": find(header, r'^#define HURRAY_VERSION_STRING "([^"]*)"'),
        "hurray.h MAJOR.MINOR.PATCH": ".".join(
            find(header, r"^#define HURRAY_VERSION_%s (\d+)" % part) or "?"
            for part in ("MAJOR", "MINOR", "PATCH")),
        "python/pyproject.toml": find(root + "/python/pyproject.toml", r'^version = "([^"]*)"'),
        "debian/changelog": find(root + "/debian/changelog", r"^libhurray \(([^)]*)\)"),
    }
    for where, v in places.items():
        print("%-32s %s" % (where, v))
    if len(set(places.values())) != 1:
        print("check_versions: FAILED: the versions differ")
        return 1
    print("check_versions: OK, %s everywhere" % version)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
