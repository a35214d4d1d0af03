#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for Grove: Debian's Chromium (+ fonts) and bubblewrap (shell sandboxes)
# when missing, then npm ci.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v /usr/bin/chromium >/dev/null 2>&1 || ! fc-list 2>/dev/null | grep -qi liberation || ! command -v /usr/bin/bwrap >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium fonts-liberation bubblewrap >/dev/null
fi
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
# The Codex CLI (~400 MB, for one harness test) is a separate, optional step: scripts/setup-harness.sh.
/usr/bin/chromium --version 2>/dev/null | head -1
