#!/usr/bin/env bash
# Optional harness extras, after scripts/setup.sh: the Codex CLI, a real agent harness that
# test/runner/harness.slow.test.ts drives unmodified inside a shell sandbox (skipped without it). Installed globally
# as root (under /usr, which shell sandboxes see read-only); a ~400 MB package from the npm registry.
set -euo pipefail
if command -v codex >/dev/null 2>&1; then
  codex --version
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "setup-harness: run as root (the Codex CLI goes under /usr, where shell sandboxes can run it)" >&2
  exit 1
fi
npm install -g --no-audit --no-fund --loglevel=error @openai/codex@0.169.0 >/dev/null
codex --version
