#!/usr/bin/env bash
# Install code-server 4.100.3 (VS Code 1.100.3) from npm into a cache dir, idempotently.
#
# code-server's own install scripts download from hosts this machine cannot reach, so it is
# installed in steps: npm with --ignore-scripts, then the native modules rebuilt from source,
# ripgrep taken from the system, and the helper links made by hand.
#
# Usage: scripts/install-code-server.sh            -> prints the path of the code-server binary
# Env:   RHEMA_CODE_SERVER_DIR  install root (default $HOME/.cache/rhema-lsp/code-server)
#        RHEMA_SKIP_APT=1       do not apt-get the system packages (they must be present)
# The install is complete when "$DIR/.installed-<version>" exists; a partial one is redone.
set -euo pipefail

VERSION=4.100.3
DIR="${RHEMA_CODE_SERVER_DIR:-${HOME}/.cache/rhema-lsp/code-server}"
STAMP="$DIR/.installed-$VERSION"
BIN="$DIR/node_modules/code-server/out/node/entry.js"
LAUNCHER="$DIR/bin/code-server"

log() { echo "install-code-server: $*" >&2; }

if [[ -f "$STAMP" && -x "$LAUNCHER" ]]; then
  echo "$LAUNCHER"
  exit 0
fi

need_apt=()
for pkg in build-essential libkrb5-dev ripgrep chromium; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need_apt+=("$pkg")
done
if ((${#need_apt[@]})); then
  if [[ "${RHEMA_SKIP_APT:-}" == 1 ]]; then
    log "missing system packages: ${need_apt[*]} (RHEMA_SKIP_APT=1 set)"; exit 1
  fi
  log "apt-get install ${need_apt[*]}"
  SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >&2
fi

node_major=$(node -p 'process.versions.node.split(".")[0]')
if [[ "$node_major" != 20 && "$node_major" != 22 ]]; then
  log "code-server $VERSION needs Node 20 or 22 (found $(node --version))"; exit 1
fi

RG=$(command -v rg || true)
[[ -x /usr/bin/rg ]] && RG=/usr/bin/rg
[[ -n "$RG" ]] || { log "ripgrep (rg) not found"; exit 1; }
RG=$(readlink -f "$RG")

export npm_config_yes=true npm_config_fund=false npm_config_audit=false \
  npm_config_update_notifier=false npm_config_loglevel=warn

start=$(date +%s)
rm -rf "$DIR"
mkdir -p "$DIR"
cd "$DIR"
echo '{"name":"rhema-code-server-cache","private":true}' > package.json

log "npm install code-server@$VERSION (no scripts)"
npm install --ignore-scripts --no-package-lock "code-server@$VERSION" >&2
log "npm rebuild argon2"
npm rebuild argon2 >&2

VS="$DIR/node_modules/code-server/lib/vscode"
cd "$VS"
log "lib/vscode: npm install --omit=dev (no scripts)"
npm install --omit=dev --ignore-scripts >&2
mkdir -p node_modules/@vscode/ripgrep/bin
cp "$RG" node_modules/@vscode/ripgrep/bin/rg
chmod +x node_modules/@vscode/ripgrep/bin/rg
log "lib/vscode: npm rebuild (native modules)"
npm rebuild >&2
ln -sf code-linux.sh bin/remote-cli/code-server
ln -sf browser-linux.sh bin/helpers/browser.sh
log "lib/vscode/extensions: npm install --omit=dev"
(cd extensions && npm install --omit=dev >&2)

mkdir -p "$DIR/bin"
cat > "$LAUNCHER" <<LAUNCH
#!/usr/bin/env bash
exec node "$BIN" "\$@"
LAUNCH
chmod +x "$LAUNCHER"
# A scratch config dir: code-server writes a default config.yaml on first start.
XDG_CONFIG_HOME="$DIR/.version-check-config" "$LAUNCHER" --version >&2
touch "$STAMP"
log "installed in $(( $(date +%s) - start ))s: $LAUNCHER"
echo "$LAUNCHER"
