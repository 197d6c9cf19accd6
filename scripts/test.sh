#!/usr/bin/env bash
# Installs everything the tests need, from scratch on a fresh machine, then
# runs every check: ruff (lint and format), mypy, and the whole pytest suite.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet --disable-pip-version-check -e '.[test,local]'

echo "== ruff check";  python3 -m ruff check .
echo "== ruff format"; python3 -m ruff format --check .
echo "== mypy";        python3 -m mypy
echo "== pytest";      python3 -m pytest "$@"
