#!/usr/bin/env bash
# Build the stack's base image from Debian's packages, with no container registry.
#
# debootstrap (minbase) makes a Debian bookworm root filesystem on the host, apt installs into it
# the packages every image of the stack needs (Python 3.11 with venv, PostgreSQL 15, Redis,
# tini, libpq5, CA certificates) with security updates, docs and apt lists are stripped, and
# `docker import` turns it into the image mlsys-base:<hash12>. The hash covers this script and
# the settings below, so an unchanged script reuses the image that is already there.
#
# Prints the image tag (only that) on stdout; progress goes to stderr.
#   BASE_IMAGE=$(deploy/base/build-base-image.sh)
#
# Environment:
#   DEBIAN_MIRROR           default http://deb.debian.org/debian
#   DEBIAN_SECURITY_MIRROR  default http://deb.debian.org/debian-security
#   BASE_VARIANT            stack (default: Python, PostgreSQL, Redis, tini for web/worker/db images)
#                           or sandbox (Python 3.11 and venv only: the base of deploy/sandbox/)
#   BASE_IMAGE_NAME         default mlsys-base, or mlsys-sandbox-base for the sandbox variant
#   FORCE=1                 rebuild even if the tag exists
#   ROOTFS_DIR              where to build the rootfs (default: a fresh dir under /var/tmp);
#                           it is removed afterwards unless KEEP_ROOTFS=1
# Needs root (debootstrap, chroot) and a Debian/Ubuntu host with apt (for debootstrap itself).
set -euo pipefail

exec 3>&1 1>&2 # stdout is reserved for the tag

SUITE=bookworm
ARCH=amd64
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
DEBIAN_SECURITY_MIRROR=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
BASE_VARIANT=${BASE_VARIANT:-stack}
case "$BASE_VARIANT" in
stack)
    BASE_IMAGE_NAME=${BASE_IMAGE_NAME:-mlsys-base}
    PACKAGES=(ca-certificates tini python3 python3-venv libpq5 postgresql-15 redis-server)
    ;;
sandbox)
    # Learners' code runs here: the interpreter and nothing that could serve an attacker.
    BASE_IMAGE_NAME=${BASE_IMAGE_NAME:-mlsys-sandbox-base}
    PACKAGES=(python3 python3-venv)
    ;;
*)
    echo "error: BASE_VARIANT must be stack or sandbox, not $BASE_VARIANT" >&2
    exit 1
    ;;
esac

script_path=$(readlink -f "${BASH_SOURCE[0]}")
inputs_hash=$(
    {
        cat "$script_path"
        printf '%s\n' "$SUITE" "$ARCH" "$DEBIAN_MIRROR" "$DEBIAN_SECURITY_MIRROR" "${PACKAGES[@]}"
    } | sha256sum | cut -c1-12
)
TAG="${BASE_IMAGE_NAME}:${inputs_hash}"

if [[ "${FORCE:-0}" != 1 ]] && docker image inspect "$TAG" >/dev/null 2>&1; then
    echo "base image $TAG already exists; skipping the build (FORCE=1 rebuilds)"
    echo "$TAG" >&3
    exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
    echo "error: debootstrap and chroot need root; run this script as root (once per machine: the tag is reused afterwards)" >&2
    exit 1
fi

if ! command -v debootstrap >/dev/null 2>&1; then
    echo "installing debootstrap"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap
fi

started=$(date +%s)
if [[ -n "${ROOTFS_DIR:-}" ]]; then
    rootfs=$ROOTFS_DIR
    if [[ -e "$rootfs" ]] && [[ -n "$(ls -A "$rootfs")" ]]; then
        echo "error: ROOTFS_DIR=$rootfs exists and is not empty" >&2
        exit 1
    fi
    mkdir -p "$rootfs"
else
    rootfs=$(mktemp -d "${TMPDIR:-/var/tmp}/mlsys-rootfs.XXXXXX")
fi

unmount_all() {
    # Deepest first; ignore what is not mounted.
    local m
    for m in dev/pts proc sys; do
        if mountpoint -q "$rootfs/$m" 2>/dev/null; then umount -l "$rootfs/$m" || true; fi
    done
}
cleanup() {
    unmount_all
    if [[ "${KEEP_ROOTFS:-0}" != 1 ]]; then
        rm -rf --one-file-system "$rootfs"
    else
        echo "rootfs kept at $rootfs"
    fi
}
trap cleanup EXIT

echo "debootstrap $SUITE ($ARCH, minbase) into $rootfs from $DEBIAN_MIRROR"
debootstrap --variant=minbase --arch="$ARCH" --components=main --include=ca-certificates \
    "$SUITE" "$rootfs" "$DEBIAN_MIRROR"

# Everything installed from here on leaves out docs, man pages and translations.
mkdir -p "$rootfs/etc/dpkg/dpkg.cfg.d" "$rootfs/etc/apt/apt.conf.d"
cat >"$rootfs/etc/dpkg/dpkg.cfg.d/90-mlsys-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
cat >"$rootfs/etc/apt/apt.conf.d/90-mlsys" <<'EOF'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Languages "none";
EOF
cat >"$rootfs/etc/apt/sources.list" <<EOF
deb $DEBIAN_MIRROR $SUITE main
deb $DEBIAN_MIRROR $SUITE-updates main
deb $DEBIAN_SECURITY_MIRROR $SUITE-security main
EOF
# No services start inside the chroot; no default PostgreSQL cluster is created (the postgres
# image runs initdb into its volume on first start).
printf '#!/bin/sh\nexit 101\n' >"$rootfs/usr/sbin/policy-rc.d"
chmod 0755 "$rootfs/usr/sbin/policy-rc.d"
mkdir -p "$rootfs/etc/postgresql-common/createcluster.d"
echo "create_main_cluster = false" >"$rootfs/etc/postgresql-common/createcluster.d/00-mlsys.conf"
cp -L /etc/resolv.conf "$rootfs/etc/resolv.conf"

mount -t proc proc "$rootfs/proc"
in_root() {
    chroot "$rootfs" /usr/bin/env -i \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}
echo "installing ${PACKAGES[*]}"
in_root apt-get update -q
in_root apt-get -y -q upgrade
in_root apt-get install -y -q --no-install-recommends "${PACKAGES[@]}"
in_root python3 --version
if [[ "$BASE_VARIANT" == stack ]]; then
    in_root /usr/lib/postgresql/15/bin/postgres --version
    in_root redis-server --version
    in_root tini --version
fi

echo "slimming the rootfs"
in_root apt-get clean
unmount_all
rm -f "$rootfs/usr/sbin/policy-rc.d"
rm -rf "$rootfs/etc/postgresql/15/main" "$rootfs/var/lib/postgresql/15/main"
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/debconf/*-old \
    "$rootfs"/var/lib/dpkg/*-old "$rootfs"/tmp/* "$rootfs"/var/tmp/* "$rootfs"/root/.cache
find "$rootfs/var/log" -type f -delete
# Docs and translations that debootstrap's first stage installed before the dpkg excludes.
find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
rm -rf "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/usr/share/lintian/* \
    "$rootfs"/usr/share/groff/*
find "$rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
: >"$rootfs/etc/resolv.conf"
: >"$rootfs/etc/machine-id"
echo "rootfs: $(du -sh --one-file-system "$rootfs" | cut -f1)"

echo "importing as $TAG"
tar --numeric-owner --xattrs -C "$rootfs" \
    --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' -c . |
    docker import \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'ENV LANG=C.UTF-8' \
        --change "LABEL org.opencontainers.image.title=$BASE_IMAGE_NAME mlsys.base.inputs-hash=$inputs_hash mlsys.base.suite=$SUITE" \
        --change 'CMD ["/bin/bash"]' \
        --message "debootstrap $SUITE minbase + ${PACKAGES[*]}" \
        - "$TAG" >/dev/null
echo "built $TAG in $(($(date +%s) - started))s ($(docker image inspect -f '{{.Size}}' "$TAG" | numfmt --to=iec))"
echo "$TAG" >&3
