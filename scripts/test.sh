#!/usr/bin/env bash
# Installs everything the tests need, from scratch on a fresh machine (Debian 12,
# Python 3.11, Node 20; root for apt-get), then runs every check: ruff (lint and
# format), mypy, the VS Code extension's type check, lint and unit tests, and the
# whole pytest suite (unit, real peers, end to end, real Neovim, real Emacs + eglot,
# real VS Code).
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== install: Python packages (the first run compiles llama-cpp-python, several minutes)"
python3 -m pip install --quiet --disable-pip-version-check -e '.[test,local]'

echo "== install: Emacs and eglot for the Emacs tests (Debian's emacs-nox, elpa-eglot)"
if ! command -v emacs >/dev/null || ! dpkg -s elpa-eglot >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq emacs-nox elpa-eglot >/dev/null
fi

echo "== install: code-server and chromium for the VS Code tests"
bash scripts/install-code-server.sh >/dev/null

echo "== install: the extension's and the VS Code driver's npm packages"
(cd editors/vscode && npm ci --no-audit --no-fund --loglevel=error)
(cd tests/editors/vscode/driver && npm ci --no-audit --no-fund --loglevel=error)

echo "== ruff check";  python3 -m ruff check .
echo "== ruff format"; python3 -m ruff format --check .
echo "== mypy";        python3 -m mypy
echo "== extension: tsc, eslint, unit tests"
(cd editors/vscode && npm run --silent check && npm test --silent)
echo "== pytest";      python3 -m pytest "$@"
