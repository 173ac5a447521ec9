#!/usr/bin/env bash
# Checks that the project builds, passes its tests and runs its demo on a
# fresh Debian 12 system, from nothing but the repository: builds a minimal
# Debian 12 root with mmdebstrap (or debootstrap) from this machine's own apt
# sources, clones the repository's HEAD into it and runs `make test` and
# `make demo` inside (chroot, with /proc, /sys and /dev mounted).
#
#   sudo scripts/fresh_root_check.sh [ROOT_DIR]    (default /var/tmp/collage-fresh-root)
#
# Needs root and network access to the apt mirrors; takes long (installing
# the packages, a full build, the zoo export, the whole test suite). Not run
# in CI. The root directory is reused when it exists (delete it for a truly
# fresh run).
set -euo pipefail

root="${1:-/var/tmp/collage-fresh-root}"
repo="$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
suite=bookworm

if [ "$(id -u)" -ne 0 ]; then
  echo "fresh_root_check: run as root (it builds a chroot)" >&2
  exit 2
fi

step() { echo "== $*"; }

# The machine's own sources (deb822 or one-line style), so that a snapshot
# mirror the machine pins is used inside too.
sources=""
for candidate in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
  if [ -s "$candidate" ] && grep -q '^[^#]' "$candidate"; then
    sources="$candidate"
    break
  fi
done
if [ -z "$sources" ]; then
  echo "fresh_root_check: no apt sources found on this machine" >&2
  exit 2
fi

if [ ! -x "$root/usr/bin/apt-get" ]; then
  if ! command -v mmdebstrap >/dev/null && ! command -v debootstrap >/dev/null; then
    step "installing mmdebstrap"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap
  fi
  mkdir -p "$root"
  if command -v mmdebstrap >/dev/null; then
    step "building a minimal $suite root in $root with mmdebstrap ($sources)"
    mmdebstrap --variant=minbase --include=ca-certificates,git,make,sudo \
      "$suite" "$root" "$sources"
  else
    mirror="$(awk '/^URIs:/ {print $2; exit} /^deb / {print $2; exit}' "$sources")"
    step "building a minimal $suite root in $root with debootstrap ($mirror)"
    debootstrap --variant=minbase --include=ca-certificates,git,make,sudo \
      "$suite" "$root" "$mirror"
    cp "$sources" "$root/etc/apt/$( [ "${sources##*.}" = sources ] && echo sources.list.d/debian.sources || echo sources.list)"
  fi
fi

step "cloning $repo (HEAD) into $root/src/collage"
rm -rf "$root/src/collage"
mkdir -p "$root/src"
git clone --quiet --no-hardlinks "$repo" "$root/src/collage"
cp /etc/resolv.conf "$root/etc/resolv.conf"

mounted=()
cleanup() {
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" || true; done
}
trap cleanup EXIT
for fs in proc sys dev; do
  mkdir -p "$root/$fs"
  case "$fs" in
    proc) mount -t proc proc "$root/proc" ;;
    sys) mount -t sysfs sys "$root/sys" ;;
    dev) mount --bind /dev "$root/dev" ;;
  esac
  mounted+=("$root/$fs")
done

step "make test && make demo inside the fresh root"
chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin \
  LANG=C.UTF-8 bash -c 'cd /src/collage && make test && make demo'
step "fresh root check passed"
