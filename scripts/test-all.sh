#!/usr/bin/env bash
# Every test of the workspace: unit, integration, doctests, the TCK self-tests, and the loom
# models (in a separate target dir, so the loom cfg does not throw away the normal build cache).
# Runs on a fresh machine with only the Rust toolchain installed.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo test --workspace --release (unit, integration, doctests, TCK self-tests)"
cargo test --workspace --release

echo "== loom models (RUSTFLAGS=--cfg rs_loom, LOOM_MAX_PREEMPTIONS=2)"
bash scripts/loom.sh
