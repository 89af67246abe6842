#!/usr/bin/env bash
# The loom suites: model-checked concurrency rules of rs-impl's building blocks and the
# rs-tck loom harness over every built-in implementation.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${LOOM_TARGET_DIR:-target/loom}"
export RUSTFLAGS="--cfg rs_loom"
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-2}"
export LOOM_MAX_BRANCHES="${LOOM_MAX_BRANCHES:-10000}"
targets=()
for crate in rs-impl:rs-impl tck:rs-tck; do
  dir=${crate%%:*}; pkg=${crate##*:}
  if [ -e "$dir/tests/loom.rs" ] || [ -e "$dir/tests/loom/main.rs" ]; then
    targets+=("$pkg")
  fi
done
if [ ${#targets[@]} -eq 0 ]; then
  echo "no loom suites found" >&2
  exit 1
fi
for pkg in "${targets[@]}"; do
  echo "-- loom: $pkg"
  cargo test --release -p "$pkg" --test loom -- --test-threads=1
done
