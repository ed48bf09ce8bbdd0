#!/usr/bin/env python3
"""No import circles among the files of each folder of src/ (issue 36): in
each folder that holds sources (src/net, src/runtime, src/backends/cpu, ...),
the graph whose edges are a file's #includes of another file of the folder
and a .cpp's calls of a function defined in another .cpp of the folder must
be a DAG, also with each header and
the .cpp of the same name taken as one node (a file's declarations and
definitions). A function is "defined" in a .cpp where a line starting at
column 0 names it (Class::name or name) before '(' and its body opens
before any ';'; a call is its name followed by '(' outside comments and
strings; names defined in more than one file (file-local helpers) are
skipped. Folders are checked one by one: the named ones (relative to src/),
or every folder of src/ that holds a .cpp or .h. Prints the edges with -v;
fails listing each circle found.
Usage: check_dag.py <source root> [folder ...] [-v]"""
import collections, os, re, sys

args = [a for a in sys.argv[1:] if a != '-v']
verbose = '-v' in sys.argv
root = args[0] if args else '.'
src = os.path.join(root, 'src')
if not os.path.isdir(src):
    print(f'no src/ under {root}')
    sys.exit(2)


def sources(d):
    return sorted(f for f in os.listdir(d)
                  if f.endswith(('.cpp', '.h')) and os.path.isfile(os.path.join(d, f)))


folders = args[1:] or sorted(os.path.relpath(w, src) for w, _, _ in os.walk(src) if sources(w))


def strip(t):
    t = re.sub(r'/\*.*?\*/', '', t, flags=re.S)
    t = re.sub(r'//[^\n]*', '', t)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', t)


def cycles(nodes, out):
    state, stack, found = {}, [], []

    def dfs(u):
        state[u] = 1
        stack.append(u)
        for v in sorted(out[u]):
            if state.get(v) == 1:
                found.append(stack[stack.index(v):] + [v])
            elif v not in state:
                dfs(v)
        stack.pop()
        state[u] = 2

    for n in nodes:
        if n not in state:
            dfs(n)
    return found


def node(f):  # a header and the .cpp of the same name are one node
    return os.path.splitext(f)[0]


head = re.compile(r'^(?![\s#}])[^;{()=]*?\b(?:\w+::)?(~?\w+)\s*\(', re.M)


def check(folder):
    """Prints the folder's circles (or its summary); True when it has none."""
    d = os.path.join(src, folder)
    if not os.path.isdir(d):
        print(f'no src/{folder} under {root}')
        return False
    files = sources(d)
    text = {f: open(os.path.join(d, f)).read() for f in files}
    code = {f: strip(t) for f, t in text.items()}
    defs = collections.defaultdict(set)  # function name -> the .cpp files defining it
    for f in files:
        if not f.endswith('.cpp'):
            continue
        for m in head.finditer(code[f]):
            rest = code[f][m.end():]
            brace, semi = rest.find('{'), rest.find(';')
            if brace >= 0 and (semi < 0 or brace < semi):
                defs[m.group(1)].add(f)
    edges = collections.defaultdict(dict)  # file -> {file: why}
    for f in files:
        for inc in re.findall(r'^#include "([^"/]+)"', text[f], re.M):
            if inc in files:
                edges[f][inc] = 'includes it'
        if not f.endswith('.cpp'):
            continue
        for name, where in sorted(defs.items()):
            if f in where or len(where) != 1:
                continue
            if re.search(r'(?<![\w~])' + re.escape(name) + r'\s*\(', code[f]):
                (g,) = where
                edges[f][g] = (edges[f].get(g, 'calls') + ' ' + name).replace('includes it ', '')
    merged = collections.defaultdict(set)
    for f in files:
        for g in edges[f]:
            if node(f) != node(g):
                merged[node(f)].add(node(g))
    if verbose:
        for f in files:
            for g, why in sorted(edges[f].items()):
                print(f'src/{folder}: {f} -> {g}: {why}')
    bad = [('files', c) for c in cycles(files, edges)]
    bad += [('header+source nodes', c) for c in cycles(sorted({node(f) for f in files}), merged)]
    for kind, c in bad:
        print(f'src/{folder}: circle ({kind}): ' + ' -> '.join(c))
    if bad:
        print(f'src/{folder} has import circles: move what both sides use into a file of its own')
        return False
    n = sum(len(e) for e in edges.values())
    print(f'layering: the {len(files)} files of src/{folder} include and call one another '
          f'without circles ({n} edges)')
    return True


results = [check(f) for f in folders]
sys.exit(0 if all(results) else 1)
