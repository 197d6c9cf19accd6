#!/usr/bin/env bash
# Every check, after installing what they need (scripts/install.sh):
# ruff (lint and format), mypy, the contract's generated files, the VS Code
# extension's type check, lint and unit tests, and the whole pytest suite
# (unit, real peers, end to end, real Neovim, real Emacs + eglot and lsp-mode, real VS Code).
#
#   scripts/test.sh [PYTEST ARGS]         everything (the README's test command, CI)
#   scripts/test.sh --fast [PYTEST ARGS]  the fast lane: ruff, mypy, the contract
#                                         check and the `unit` tier's in-process
#                                         tests (not those marked `process`);
#                                         installs only the Python packages
# Extra arguments go to pytest. pytest runs on every core (pytest-xdist, at
# least 2 workers; RHEMA_TEST_WORKERS overrides), real VS Code tests kept on
# one worker (their xdist_group), so two browsers never race for the cores.
set -euo pipefail
cd "$(dirname "$0")/.."

# The checks run this checkout's code, whichever checkout the editable install names.
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

fast=0
if [[ "${1:-}" == --fast ]]; then
    fast=1
    shift
fi
start=$(date +%s)

if ((fast)); then
    bash scripts/install.sh --python
else
    bash scripts/install.sh
fi

echo "== ruff check";  python3 -m ruff check .
echo "== ruff format"; python3 -m ruff format --check .
echo "== mypy";        python3 -m mypy
echo "== contract";    python3 -m rhema_lsp.contract --check
workers=${RHEMA_TEST_WORKERS:-$(( $(nproc) > 2 ? $(nproc) : 2 ))}
if ((fast)); then
    echo "== pytest (unit tier, in process)"
    python3 -m pytest -n "$workers" -m "unit and not process" -q "$@"
    echo "== fast lane: $(( $(date +%s) - start )) s"
    exit 0
fi
echo "== extension: tsc, eslint, unit tests"
(cd editors/vscode && npm run --silent check && npm test --silent)
echo "== pytest";      python3 -m pytest -n "$workers" --dist loadgroup --durations=25 "$@"
echo "== all checks: $(( $(date +%s) - start )) s"
