#!/usr/bin/env bash
# Makes (once) the Python virtual environment of the RSocket interoperability tests:
# rsocket 0.4.20 (rsocket-py) from PyPI, at target/rsocket-py. Prints the interpreter's path.
# Needs python3 with venv and pip, and PyPI; nothing else is installed by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${RSOCKET_PY_VENV:-$PWD/target/rsocket-py}"
if ! "$venv/bin/python" -c 'import rsocket, sys; sys.exit(0)' >/dev/null 2>&1; then
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "rsocket==0.4.20" >&2
fi
echo "$venv/bin/python"
