#!/usr/bin/env bash
# Base OCI images for SWE environments, built from Debian's packages with debootstrap (no registry) and
# imported into podman's local storage: grove-swe-base:bookworm (Python 3.11) and grove-swe-base:bullseye
# (Python 3.9) by default; trixie (3.13) and buster (3.7, archived: from http://archive.debian.org/debian unless
# DEBIAN_MIRROR says otherwise) when named. Idempotent: an image that exists is kept; the debootstrap trees are
# cached under /var/cache/grove/debootstrap. Needs root. Usage: scripts/swe-images.sh [bookworm] [bullseye] [trixie] [buster]
set -euo pipefail
CACHE=${GROVE_IMAGE_CACHE:-/var/cache/grove}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
RELEASES=("$@")
[ ${#RELEASES[@]} -gt 0 ] || RELEASES=(bookworm bullseye)
PACKAGES=python3,python3-venv,python3-pip,python3-setuptools,python3-wheel,git,patch,ca-certificates,procps,less

need() { command -v "$1" >/dev/null || { echo "swe-images: $1 is missing: apt-get install -y podman buildah skopeo umoci runc debootstrap uidmap" >&2; exit 1; }; }
need podman; need debootstrap
[ "$(id -u)" = 0 ] || { echo "swe-images: needs root (debootstrap, podman storage)" >&2; exit 1; }

# podman here: runc (crun refuses hybrid cgroups), file limits a package build can live with.
if [ ! -f /etc/containers/containers.conf ] || ! grep -q 'runtime *= *"runc"' /etc/containers/containers.conf; then
  mkdir -p /etc/containers
  cat > /etc/containers/containers.conf <<'CONF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
fi

mkdir -p "$CACHE/debootstrap"
for rel in "${RELEASES[@]}"; do
  tag="localhost/grove-swe-base:$rel"
  if podman image exists "$tag"; then echo "swe-images: $tag exists ($(podman image inspect -f '{{.Id}}' "$tag" | cut -c1-12))"; continue; fi
  t0=$(date +%s)
  mirror=$MIRROR
  [ "$rel" = buster ] && [ -z "${DEBIAN_MIRROR:-}" ] && mirror=http://archive.debian.org/debian
  # Fail fast when the mirror does not serve the release (buster left deb.debian.org for archive.debian.org).
  if ! python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=20)' "$mirror/dists/$rel/Release" 2>/dev/null; then
    echo "swe-images: $mirror does not serve $rel (dists/$rel/Release unreachable): set DEBIAN_MIRROR to a mirror that has it" >&2; exit 1
  fi
  tree="$CACHE/debootstrap/$rel"
  if [ ! -f "$tree/.grove-complete" ]; then
    rm -rf "$tree"
    debootstrap --variant=minbase --include="$PACKAGES" "$rel" "$tree" "$mirror" >"$CACHE/debootstrap/$rel.log" 2>&1 \
      || { echo "swe-images: debootstrap $rel failed, see $CACHE/debootstrap/$rel.log" >&2; exit 1; }
    chroot "$tree" apt-get clean
    rm -rf "$tree"/var/lib/apt/lists/*
    touch "$tree/.grove-complete"
  fi
  tar -C "$tree" --exclude=./.grove-complete -c . | podman import --change 'CMD ["/bin/bash"]' - "$tag" >/dev/null
  echo "swe-images: $tag built in $(( $(date +%s) - t0 )) s ($(podman image inspect -f '{{.Id}}' "$tag" | cut -c1-12)); load $(cut -d' ' -f1-3 /proc/loadavg)"
done
