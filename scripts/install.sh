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

# The editable install always points at the repository's main checkout (the
# first of `git worktree list`): a second worktree running this must not
# re-point everyone's `rhema_lsp` at itself; scripts/test.sh puts its own
# checkout first on PYTHONPATH instead.
main_checkout=$(git worktree list --porcelain 2>/dev/null | awk 'NR == 1 { print $2 }')
main_checkout=${main_checkout:-$PWD}

# llama.cpp's default build uses every instruction the compiling CPU reports
# (-march=native); some virtual machines report AMX without enabling it, and
# the embedded model then dies of SIGILL on its first long prompt. Build it
# for the AVX2 baseline instead (any x86-64 from the last decade).
portable_llama="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
if [[ $(uname -m) == x86_64 ]]; then
    export CMAKE_ARGS="${CMAKE_ARGS:-$portable_llama}"
fi

echo "== install: Python packages (the first run compiles llama-cpp-python, several minutes)"
python3 -m pip install --quiet --disable-pip-version-check -e "$main_checkout[test,local]" 2>&1 \
    | grep -v "^WARNING: Location .* is ignored" || true
python3 -c "import rhema_lsp, pygls, pytest_lsp, llama_cpp" # the install really happened

# A llama-cpp-python built natively before this script knew better: rebuild it
# once if a long prompt kills it (the probe runs in a child, so only it dies).
if ! python3 scripts/probe_llama.py; then
    echo "== install: llama-cpp-python dies on this CPU; rebuilding it for the AVX2 baseline"
    python3 -m pip cache remove llama_cpp_python >/dev/null 2>&1 || true
    python3 -m pip install --quiet --disable-pip-version-check --no-cache-dir --force-reinstall \
        --no-deps "llama-cpp-python==0.3.36" 2>&1 | grep -v "^WARNING: Location .* is ignored" || true
    python3 scripts/probe_llama.py
fi
[[ "${1:-}" == --python ]] && exit 0

echo "== install: Emacs, eglot and lsp-mode for the Emacs tests (Debian's emacs-nox, elpa-eglot, elpa-lsp-mode)"
if ! command -v emacs >/dev/null || ! dpkg -s elpa-eglot elpa-lsp-mode >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq emacs-nox elpa-eglot elpa-lsp-mode >/dev/null
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
echo "== install: the ACP TypeScript SDK client the ACP tests drive the agent with"
npm_tree tests/acp/ts_client
