#!/usr/bin/env bash
# Every test of the workspace: unit, integration, doctests, the TCK self-tests, and the loom
# models (in a separate target dir, so the loom cfg does not throw away the normal build cache).
# Runs on a fresh machine with the Rust toolchain and python3 (venv, pip) installed: the
# RSocket interoperability tests install their Python peer from PyPI (scripts/rsocket-py.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== the RSocket interoperability tests' Python peer (rsocket 0.4.20 from PyPI, into a venv)"
RSOCKET_PY="$(bash scripts/rsocket-py.sh)"
export RSOCKET_PY

echo "== cargo test --workspace --release (unit, integration, doctests, TCK self-tests)"
cargo test --workspace --release

echo "== loom models (RUSTFLAGS=--cfg rs_loom, LOOM_MAX_PREEMPTIONS=2)"
bash scripts/loom.sh
