#!/usr/bin/python3
"""libhurray-net exports exactly the hurray_net_* functions of hurray_net.h,
each versioned with the node of its map that lists it (HURRAY_NET_1.0, then
HURRAY_NET_1.1 ... for later additions), and they are the global names of its map.

usage: check_exports.py LIBRARY HEADER MAP"""
import re
import subprocess
import sys

lib, header, mapfile = sys.argv[1:4]
problems = []
text = re.sub(r"/\*.*?\*/", " ", open(header).read(), flags=re.S)
declared = set(re.findall(r"\bHURRAY_API\b[^;(]*?\b(hurray_net_\w+)\s*\(", text))
mtext = re.sub(r"/\*.*?\*/", " ", open(mapfile).read(), flags=re.S)
nodes = re.findall(r"([\w.]+)\s*\{", mtext)
node_of = {}  # name -> the node that lists it
for node, body in re.findall(r"([\w.]+)\s*\{(.*?)\}", mtext, re.S):
    for name in re.findall(r"^\s*(hurray_net_\w+)\s*;", body, re.M):
        node_of[name] = node
mapped = set(node_of)
out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True,
                     check=True).stdout
exported = {}
for line in out.splitlines():
    parts = line.split()
    if len(parts) < 3 or parts[1] == "A":
        continue
    name, _, version = parts[2].partition("@")
    exported[name] = version.lstrip("@")
soname = subprocess.run(["readelf", "-d", lib], capture_output=True, text=True,
                        check=True).stdout
if "[libhurray-net.so.1]" not in soname:
    problems.append("SONAME is not libhurray-net.so.1")
if nodes != ["HURRAY_NET_1.%d" % i for i in range(len(nodes))]:
    problems.append("map nodes are %s, expected HURRAY_NET_1.0, HURRAY_NET_1.1, ..." % nodes)
for name, version in sorted(exported.items()):
    if not name.startswith("hurray_net_"):
        problems.append("exported without the hurray_net_ prefix: " + name)
    if version != node_of.get(name, "HURRAY_NET_1.0"):
        problems.append("%s has version '%s', its map node is %s"
                        % (name, version, node_of.get(name)))
for a, b, what in ((declared, set(exported), "declared in the header but not exported"),
                   (set(exported), declared, "exported but not declared in the header"),
                   (mapped, declared, "in the map but not in the header"),
                   (declared, mapped, "in the header but not in the map")):
    for name in sorted(a - b):
        problems.append("%s: %s" % (what, name))
print("hurray_net.h: %d functions, map: %d, exported: %d"
      % (len(declared), len(mapped), len(exported)))
for p in problems:
    print("  FAIL: " + p)
sys.exit(1 if problems or not declared else 0)
