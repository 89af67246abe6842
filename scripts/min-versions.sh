#!/usr/bin/env bash
# Checks that the library crates (rs-api, rs-impl, rs-tck) build with every direct dependency at
# the lowest version their manifests allow: each caret requirement of the workspace's
# `[workspace.dependencies]` that a library uses is lowered to its stated minimum with
# `cargo update --precise` in a scratch copy of the lock file, then the libraries are checked
# with every feature. (Cargo's own `-Z minimal-versions` needs a nightly toolchain, which this
# project does not use; this lowers the direct dependencies only, which is what a user's
# resolver can pick for them.) The committed Cargo.lock is left as it was.
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/min-versions}"
scratch=$(mktemp -d)
cp Cargo.lock "$scratch/Cargo.lock"
restore() { cp "$scratch/Cargo.lock" Cargo.lock; rm -rf "$scratch"; }
trap restore EXIT

# The library crates' direct dependencies and the minimum each manifest states.
deps=$(python3 - <<'EOF'
import re
text = open("Cargo.toml").read()
section = text.split("[workspace.dependencies]", 1)[1].split("\n[", 1)[0]
# loom is left out: it exists only in the loom build, which scripts/loom.sh runs.
# tokio-util and bytes come before tokio: the newest tokio-util needs a newer tokio than
# tokio's own minimum, so tokio can only go down once tokio-util has.
libs = ("thiserror", "futures", "async-trait", "crossbeam-utils", "tokio-util", "bytes", "tokio",
        "libtest-mimic", "serde", "serde_json")
found = {}
for line in section.splitlines():
    m = re.match(r'^([a-z0-9_-]+)\s*=\s*(?:\{[^}]*version\s*=\s*)?"\^?([0-9][^"]*)"', line)
    if m and m.group(1) in libs:
        name, version = m.group(1), m.group(2)
        parts = (version.split(".") + ["0", "0"])[:3]
        found[name] = '.'.join(parts)
for name in libs:
    if name in found:
        print(f"{name} {found[name]}")
EOF
)

while read -r name version; do
  [ -n "$name" ] || continue
  echo "== $name: lowest allowed, $version"
  cargo update -p "$name" --precise "$version" 2>&1 | grep -v "^ *Updating\|^ *Locking\|^ *Downgrading\|^ *Adding\|^ *Removing" || true
done <<< "$deps"

echo "== cargo check of the libraries at those versions (every feature)"
cargo check -p rs-api -p rs-impl -p rs-tck --all-features
echo "== minimum versions: ok"
