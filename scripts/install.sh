#!/usr/bin/env bash
# Installs everything the tests need, from scratch on a fresh machine (Debian 12,
# Python 3.11, Node 20; root for apt-get). Idempotent: a step whose result is
# already in place is skipped (apt packages present, code-server's stamp, npm
# trees that match their lock files), so a second run takes seconds.
#   scripts/install.sh          everything (Python packages, Emacs, code-server,
#                               Chromium, the extension's, driver's and MCP
#                               servers' npm trees)
#   scripts/install.sh --python only the Python packages (enough for the fast lane)
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== install: Python packages (the first run compiles llama-cpp-python, several minutes)"
python3 -m pip install --quiet --disable-pip-version-check -e '.[test,local]' 2>&1 \
    | grep -v "^WARNING: Location .* is ignored" || true
python3 -c "import rhema_lsp, pygls, pytest_lsp, llama_cpp" # the install really happened
[[ "${1:-}" == --python ]] && exit 0

echo "== install: Emacs and eglot for the Emacs tests (Debian's emacs-nox, elpa-eglot)"
if ! command -v emacs >/dev/null || ! dpkg -s elpa-eglot >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq emacs-nox elpa-eglot >/dev/null
fi

echo "== install: code-server and chromium for the VS Code tests"
bash scripts/install-code-server.sh >/dev/null

# npm ci only when the tree does not match the lock file (npm writes its own
# copy of the lock into node_modules/.package-lock.json on install).
npm_tree() {
    local dir=$1
    if [[ -f "$dir/node_modules/.rhema-lock" ]] && cmp -s "$dir/package-lock.json" "$dir/node_modules/.rhema-lock"; then
        return
    fi
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
    cp "$dir/package-lock.json" "$dir/node_modules/.rhema-lock"
}
echo "== install: the extension's and the VS Code driver's npm packages"
npm_tree editors/vscode
npm_tree tests/editors/vscode/driver
echo "== install: the reference MCP servers the MCP tests run (server-everything, server-filesystem)"
npm_tree tests/mcp_servers
