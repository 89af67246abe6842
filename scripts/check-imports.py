#!/usr/bin/env python3
"""Checks that the modules of rs-impl import each other without a circle.

Every `.rs` file under rs-impl/src is a node; an edge runs from a file to every file whose
items it names through a path (`use crate::a::b::C`, `use super::x`, or `crate::a::b` inside
code). A folder's `mod.rs` (or `lib.rs`) that only declares its children and re-exports them
(`mod x;`, `pub use x::Y;`) is a table of contents: those lines are not edges (a child naming
an item its parent defines, such as `super::IslandError`, is an edge child -> parent, and a
circle only if the parent's own code names the child's items).
The script prints each strongly connected component of more than one file and exits 1 if there
is any; it prints the number of files and edges otherwise.
"""

import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "rs-impl", "src")
ROOT = os.path.normpath(ROOT)


def module_of(path):
    """The module path (a list of names) of a file under ROOT."""
    rel = os.path.relpath(path, ROOT)[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib"):
        rel = rel[:-1]
    return rel


def file_of(module):
    """The file defining `module` (a list of names), or None."""
    base = os.path.join(ROOT, *module) if module else ROOT
    for cand in (base + ".rs", os.path.join(base, "mod.rs")):
        if os.path.isfile(cand):
            return os.path.normpath(cand)
    if not module:
        return os.path.join(ROOT, "lib.rs")
    return None


def resolve(module, segments):
    """The file of the deepest module named by the leading `segments` of a path."""
    best = None
    for n in range(len(segments), -1, -1):
        f = file_of(module + segments[:n])
        if f:
            best = f
            break
    return best


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(l.split("//")[0] for l in text.split("\n"))


def expand_use(tree):
    """The paths of a `use` tree: `a::{b, c::d}` -> [a::b, a::c::d]."""
    tree = tree.strip()
    m = re.match(r"^(.*?)::\{(.*)\}$", tree, flags=re.S)
    if not m:
        return [tree]
    prefix, inner = m.group(1), m.group(2)
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        p = p.strip()
        if not p:
            continue
        if p == "self":
            out.append(prefix)
        else:
            out.extend(expand_use(prefix + "::" + p))
    return out


def reexports(path):
    """For a table of contents (mod.rs, lib.rs): item name -> the child file it re-exports."""
    out = {}
    if os.path.basename(path) not in ("mod.rs", "lib.rs"):
        return out
    module = module_of(path)
    code = strip_comments(open(path).read())
    for m in re.finditer(r"(?m)^\s*pub(?:\([^)]*\))?\s+use\s+([^;]+);", code):
        for p in expand_use(m.group(1)):
            p = p.strip()
            alias = re.search(r"\s+as\s+(\w+)$", p)
            p = re.sub(r"\s+as\s+\w+$", "", p)
            segs = [x for x in p.split("::") if x]
            if segs and segs[0] == "self":
                segs = segs[1:]
            if not segs or not file_of(module + [segs[0]]):
                continue
            f = resolve(module, segs)
            name = alias.group(1) if alias else segs[-1]
            if f:
                out[name] = f
    return out


def targets(path, text):
    module = module_of(path)
    is_toc = os.path.basename(path) in ("mod.rs", "lib.rs")
    found = set()
    code = strip_comments(text)
    for m in re.finditer(r"(?m)^\s*(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);", code):
        public, tree = m.group(1), m.group(2)
        for p in expand_use(tree):
            p = re.sub(r"\s+as\s+\w+$", "", p.strip())
            segs = [s for s in p.split("::") if s]
            if not segs:
                continue
            if segs[0] == "crate":
                base, rest = [], segs[1:]
            elif segs[0] == "super":
                base, rest = list(module), segs
                while rest and rest[0] == "super":
                    base = base[:-1]
                    rest = rest[1:]
            elif segs[0] == "self":
                base, rest = list(module), segs[1:]
            else:
                # a child module of this one, or an external crate
                if file_of(module + [segs[0]]):
                    base, rest = list(module), segs
                else:
                    continue
            f = resolve(base, rest)
            if f is None:
                continue
            # An item reached through its folder's re-export depends on the file defining it.
            if rest and os.path.basename(f) in ("mod.rs", "lib.rs"):
                f = reexports(f).get(rest[-1], f)
            child_of_me = module_of(f)[: len(module)] == module and len(module_of(f)) > len(module)
            if is_toc and public and child_of_me:
                continue  # a table of contents re-exporting its children
            found.add(f)
    for m in re.finditer(r"\bcrate((?:::\w+)+)", code):
        segs = [s for s in m.group(1).split("::") if s]
        f = resolve([], segs)
        if f and os.path.basename(f) in ("mod.rs", "lib.rs"):
            f = reexports(f).get(segs[-1], f)
        if f:
            found.add(f)
    found.discard(os.path.normpath(path))
    return found


def main():
    files = []
    for d, _, names in os.walk(ROOT):
        for n in names:
            if n.endswith(".rs"):
                files.append(os.path.normpath(os.path.join(d, n)))
    graph = {f: targets(f, open(f).read()) for f in files}
    # Tarjan's strongly connected components.
    index, low, stack, on, sccs = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            sccs.append(comp)

    sys.setrecursionlimit(10000)
    for v in graph:
        if v not in index:
            strong(v)
    circles = [c for c in sccs if len(c) > 1]
    edges = sum(len(t) for t in graph.values())
    if circles:
        for c in circles:
            rel = sorted(os.path.relpath(x, ROOT) for x in c)
            print("import circle:", " <-> ".join(rel))
            for x in sorted(c):
                for t in sorted(graph[x] & set(c)):
                    print(f"    {os.path.relpath(x, ROOT)} -> {os.path.relpath(t, ROOT)}")
        sys.exit(1)
    print(f"no import circle: {len(files)} files, {edges} edges")


if __name__ == "__main__":
    main()
