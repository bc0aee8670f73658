#!/usr/bin/env bash
# Installs what the end-to-end test needs, idempotently (a second run takes about a second):
# Debian packages (chromium, and what code-server's native modules build with), then
# code-server and playwright-core into test/e2e/node_modules (pinned in test/e2e/package.json:
# code-server 4.100.3 is the newest whose engines.node is 20).
set -euo pipefail
cd "$(dirname "$0")"

packages=(chromium libkrb5-dev build-essential pkg-config python3 ripgrep)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
  if [ "$(id -u)" != 0 ]; then
    echo "e2e setup: missing Debian packages (${missing[*]}); install them as root: apt-get install ${missing[*]}" >&2
    exit 1
  fi
  echo "e2e setup: installing ${missing[*]}"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

stamp=node_modules/.episode-lab-e2e-installed
want="$(sha1sum package.json | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f node_modules/code-server/out/node/entry.js ]; then
  exit 0
fi
echo "e2e setup: installing code-server and playwright-core (about 75 s)"
# @vscode/ripgrep's postinstall downloads ripgrep unless it finds it in this cache: seed it with Debian's rg.
export TMPDIR="${TMPDIR:-/tmp}"
cache="$TMPDIR/vscode-ripgrep-cache-1.15.11"
mkdir -p "$cache"
tar czf "$cache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C /usr/bin rg
# node-pty runs `npx node-gyp` (needs yes), Node's headers are in /usr/include/node, and
# code-server's postinstall refuses to run as root without --unsafe-perm.
npm_config_yes=true npm_config_nodedir=/usr npm install --unsafe-perm --no-audit --no-fund --loglevel=error
echo "$want" >"$stamp"
