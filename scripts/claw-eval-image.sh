#!/usr/bin/env bash
# A Claw-Eval worker image (k8s/Dockerfile.claw-eval) for the kubernetes backend's `claw-eval` template: FROM the
# worker image (scripts/images.sh), a copy of the checkout DIR at /opt/grove-claw-eval/checkout (the template's
# default `clawEval`), and its Python environment built at build time under /opt/grove-claw-eval/cache (the
# template's default `clawEvalCache`) from a local package index (pods have no
# egress; the build itself needs no PyPI either). Needs root and podman.
# Also the image of the shell pods that run its episodes' sandbox tools (k8s/Dockerfile.claw-eval-sandbox: the worker
# image with a venv of DIR's requirements-sandbox-server.txt, no checkout), for the shell template the claw-eval
# template names as `sandboxTemplate`.
# Usage: scripts/claw-eval-image.sh DIR [-t IMAGE] [--sandbox-tag IMAGE] [--worker IMAGE] [--index URL] [--extra-index URL] [--find-links DIR]
#   IMAGE default localhost/grove-claw-eval-<basename of DIR>:<sha256 of DIR's real path, 12 digits> (k8s/claw-eval-image.ts); the sandbox
#   image's default localhost/grove-claw-eval-sandbox-<basename>:<the same digits>; the worker image default localhost/grove-worker:dev;
#   the index default file:///opt/pypi/simple (+ file:///opt/pypi-more/simple, /opt/wheels when present). Local
#   index folders (file:// URLs, --find-links) are mounted read-only into the build at the same paths.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=""
TAG=""
STAG=""
WORKER=localhost/grove-worker:dev
INDEX=file:///opt/pypi/simple
EXTRA=""
LINKS=""
[ -d /opt/pypi-more/simple ] && EXTRA=file:///opt/pypi-more/simple
[ -d /opt/wheels ] && LINKS=/opt/wheels
while [ $# -gt 0 ]; do
  case "$1" in
    -t) TAG=$2; shift 2 ;;
    --sandbox-tag) STAG=$2; shift 2 ;;
    --worker) WORKER=$2; shift 2 ;;
    --index) INDEX=$2; shift 2 ;;
    --extra-index) EXTRA=$2; shift 2 ;;
    --find-links) LINKS=$2; shift 2 ;;
    -*) echo "claw-eval-image: unknown option $1" >&2; exit 2 ;;
    *) DIR=$1; shift ;;
  esac
done
[ -n "$DIR" ] && [ -d "$DIR/tasks" ] || { echo "claw-eval-image: give a Claw-Eval checkout (a folder with tasks/)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "claw-eval-image: needs root (podman storage)" >&2; exit 1; }
DIR=$(realpath "$DIR")
NAME=$(basename "$DIR" | tr 'A-Z_' 'a-z-' | tr -cd 'a-z0-9.-')
HASH=$(printf %s "$DIR" | sha256sum | cut -c1-12)
[ -n "$TAG" ] || TAG="localhost/grove-claw-eval-$NAME:$HASH"
[ -n "$STAG" ] || STAG="localhost/grove-claw-eval-sandbox-$NAME:$HASH"
podman image exists "$WORKER" || { echo "claw-eval-image: no worker image $WORKER (scripts/images.sh worker)" >&2; exit 1; }
t0=$(date +%s)
ctx=$(mktemp -d /var/tmp/grove-claw-eval-ctx.XXXXXX)
trap 'rm -rf "$ctx"' EXIT
mkdir -p "$ctx/checkout"
# the checkout as it is, without its git history and caches
tar -C "$DIR" --exclude=.git --exclude=__pycache__ --exclude='*.pyc' -cf - . | tar -C "$ctx/checkout" -xf -
vols=()
conf="$ctx/pip.conf"
{
  echo "[global]"
  echo "index-url = $INDEX"
  [ -z "$EXTRA" ] || echo "extra-index-url = $EXTRA"
  [ -z "$LINKS" ] || echo "find-links = $LINKS"
} >"$conf"
for u in "$INDEX" "$EXTRA" "$LINKS"; do
  p=${u#file://}
  case "$p" in /*) p=${p%/simple}; [ -d "$p" ] && vols+=(-v "$p:$p:ro") ;; esac
done
vols+=(-v "$conf:/run/grove/pip.conf:ro")
if ! podman build --pull=never --layers --force-rm -f k8s/Dockerfile.claw-eval --build-arg "WORKER=$WORKER" \
     "${vols[@]}" -t "$TAG" "$ctx" >"$ctx.log" 2>&1; then
  echo "claw-eval-image: build failed:" >&2; tail -30 "$ctx.log" >&2; rm -f "$ctx.log"; exit 1
fi
grep -E '^[0-9]+ ready|ready' "$ctx.log" | tail -1 || true
rm -f "$ctx.log"
size=$(podman image inspect -f '{{.Size}}' "$TAG")
echo "claw-eval-image: $TAG ($DIR at /opt/grove-claw-eval/checkout, its venv under /opt/grove-claw-eval/cache) $(( size / 1000000 )) MB in $(( $(date +%s) - t0 )) s; load $(cut -d' ' -f1-3 /proc/loadavg)"
# The sandbox tools' image: its context only the server's requirements (the agent's shell gets no checkout).
t1=$(date +%s)
sctx="$ctx/sandbox"
mkdir -p "$sctx"
if [ -f "$DIR/requirements-sandbox-server.txt" ]; then cp "$DIR/requirements-sandbox-server.txt" "$sctx/"; else printf 'fastapi\npydantic\n' >"$sctx/requirements-sandbox-server.txt"; fi
if ! podman build --pull=never --layers --force-rm -f k8s/Dockerfile.claw-eval-sandbox --build-arg "WORKER=$WORKER" \
     "${vols[@]}" -t "$STAG" "$sctx" >"$ctx.log" 2>&1; then
  echo "claw-eval-image: the sandbox image's build failed:" >&2; tail -30 "$ctx.log" >&2; rm -f "$ctx.log"; exit 1
fi
grep -E '^sandbox python' "$ctx.log" || true
rm -f "$ctx.log"
size=$(podman image inspect -f '{{.Size}}' "$STAG")
echo "claw-eval-image: $STAG (the sandbox tools' shell pods: python at /opt/grove-claw-eval/sandbox/bin/python, no checkout) $(( size / 1000000 )) MB in $(( $(date +%s) - t1 )) s"
