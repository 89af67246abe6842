#!/usr/bin/env bash
# Benchmark smoke test: the benches compile, and bench-report runs every scenario on tiny
# sizes and writes every output. Asserts nothing about the figures (CI machines are noisy).
# Usage: bash .ci/bench-smoke.sh   (from the repository root; honours CARGO_BUILD_JOBS)
set -euo pipefail
cd "$(dirname "$0")/.."

jobs="${CARGO_BUILD_JOBS:-2}"
echo "== cargo bench -p rs-benches --no-run"
cargo bench -p rs-benches -j "$jobs" --no-run

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
echo "== bench-report --tiny --out $out"
cargo run --release -p rs-benches -j "$jobs" --bin bench-report -- --tiny --out "$out"

missing=0
expect() {
  if [ ! -s "$1" ]; then
    echo "missing or empty: $1"
    missing=1
  fi
}
expect "$out/report.json"
expect "$out/report.md"
# One chart per scenario named in report.json.
scenarios="$(sed -n 's/^      "id": "\([^"]*\)",$/\1/p' "$out/report.json")"
if [ -z "$scenarios" ]; then
  echo "report.json names no scenario"
  missing=1
fi
for id in $scenarios; do
  expect "$out/$id.svg"
  grep -q "\"scenario\": \"$id\"" "$out/report.json" || { echo "no rows for $id"; missing=1; }
done
if [ "$missing" -ne 0 ]; then
  echo "bench smoke: FAILED"
  exit 1
fi
echo "bench smoke: ok ($(echo $scenarios | wc -w) scenarios: $(echo $scenarios))"
