#!/usr/bin/env python3
"""Every file a doc or comment names resolves in the repository (issue 20, item 13).

Scans the sources, tests, examples and Markdown of the workspace for references to files
(`path/to/name.md`, `tests/fanout.rs`, ...) and to sections of design documents that live
outside the repository (`§`), and fails listing each one that a reader of the repository alone
cannot open. A path is checked when it starts with one of the repository's folders, a
crate's `src/`, or a module folder (`island/stages.rs`); it resolves when it exists relative to
the repository root, to the file's own directory, to the crate the file belongs to, or to a
crate's `src/`. URLs and `owner/repo` GitHub references
(`rsocket/rsocket Protocol.md`) are public sources, not files here, and are skipped.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCAN_DIRS = ["rs-api", "rs-impl", "tck", "benches", "docs", "scripts", ".ci"]
SCAN_FILES = ["README.md"]
EXTS = (".rs", ".md", ".toml", ".sh", ".py")
PATH = re.compile(r"(?<![\w./:@-])((?:\.\./)*(?:[\w.-]+/)+[\w.-]+\.(?:md|rs|txt|toml|sh|py|json))")
OUTSIDE = re.compile(r"(seed-designs|api-notes|conventions|wave3|peers|architecture)\.md|spec/rules\.md|§")


# Paths that name this repository's files: its top-level folders, a crate's `src/`, and the
# module folders of the crates' sources (`island/stages.rs`).
ANCHORED = set(SCAN_DIRS) | {"src"} | {
    n
    for c in ("rs-api", "rs-impl", "tck", "benches")
    for n in (os.listdir(os.path.join(ROOT, c, "src")) if os.path.isdir(os.path.join(ROOT, c, "src")) else [])
    if os.path.isdir(os.path.join(ROOT, c, "src", n))
} | {"island", "boundary", "compat", "subscriber"}


def crate_root(path):
    d = os.path.dirname(path)
    while d.startswith(ROOT) and d != ROOT:
        if os.path.exists(os.path.join(d, "Cargo.toml")):
            return d
        d = os.path.dirname(d)
    return ROOT


def files():
    for f in SCAN_FILES:
        yield os.path.join(ROOT, f)
    for d in SCAN_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, d)):
            dirnames[:] = [n for n in dirnames if n not in ("target", ".venv", "node_modules")]
            for n in filenames:
                if n.endswith(EXTS):
                    yield os.path.join(dirpath, n)


def main():
    bad = []
    me = os.path.abspath(__file__)
    for path in files():
        if os.path.abspath(path) == me:
            continue
        rel = os.path.relpath(path, ROOT)
        with open(path, encoding="utf-8", errors="replace") as fh:
            for no, line in enumerate(fh, 1):
                if "http://" in line or "https://" in line:
                    line = re.sub(r"https?://\S+", "", line)
                if OUTSIDE.search(line):
                    bad.append(f"{rel}:{no}: names a document outside the repository: {line.strip()}")
                    continue
                for m in PATH.finditer(line):
                    ref = m.group(1)
                    if ref.split("/")[0] not in ANCHORED:
                        continue  # a user's file, an output path, a MIME type: not ours to open
                    bases = [ROOT, os.path.dirname(path), crate_root(path)] + [
                        os.path.join(ROOT, c, "src") for c in ("rs-api", "rs-impl", "tck", "benches")
                    ]
                    if any(os.path.exists(os.path.normpath(os.path.join(b, ref))) for b in bases):
                        continue
                    # `owner/repo/path`: a file of a public GitHub repository, named as such.
                    if re.search(r"github|repository|repo\b|PR #|#\d", line, re.I):
                        continue
                    bad.append(f"{rel}:{no}: `{ref}` does not resolve in the repository")
    if bad:
        print("references a reader of the repository cannot open:")
        print("\n".join(bad))
        return 1
    print("every file reference resolves in the repository")
    return 0


if __name__ == "__main__":
    sys.exit(main())
