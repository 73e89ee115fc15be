#!/usr/bin/env bash
# Build the sandbox image with no container registry, and print its tag (only that) on stdout.
#
#   SANDBOX_IMAGE=$(deploy/sandbox/build-sandbox-image.sh)
#
# 1. The base: a Debian bookworm root filesystem with Python 3.11 (debootstrap + docker import,
#    deploy/base/build-base-image.sh with BASE_VARIANT=sandbox), reused while its inputs are
#    unchanged. Set SANDBOX_BASE_IMAGE to skip this (e.g. python:3.11-slim-bookworm where one can pull).
# 2. The wheels of deploy/sandbox/requirements.txt, downloaded on the host (hash-checked) into
#    deploy/.sandbox-wheels, so nothing is fetched inside the build.
# 3. `docker build` of deploy/sandbox/Dockerfile on that base.
#
# The tag is mlsys-sandbox:<hash12> (and :latest, the settings' default), the hash of every input (the base image's tag, the
# Dockerfile, the requirements, the in-container code): an unchanged image is never rebuilt.
# FORCE=1 rebuilds. PYTHON is the host Python whose pip downloads wheels (default python3).
set -euo pipefail
exec 3>&1 1>&2 # stdout is reserved for the tag

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
PYTHON=${PYTHON:-python3}
NAME=${SANDBOX_IMAGE_NAME:-mlsys-sandbox}

if ! command -v docker >/dev/null 2>&1; then
    echo "error: docker: command not found; the sandbox image cannot be built" >&2
    exit 2
fi
if ! engine=$(docker version --format '{{.Server.Version}}' 2>&1); then
    echo "error: no Docker Engine is reachable; the sandbox image cannot be built" >&2
    # Docker's own words say which: not running, or running but not this user's to use.
    printf '%s\n' "$engine" | tail -n 3 >&2
    exit 2
fi

# Not BASE_IMAGE: that names the stack's base (deploy/build-images.sh exports it).
BASE_IMAGE=${SANDBOX_BASE_IMAGE:-}
if [[ -z "$BASE_IMAGE" ]]; then
    BASE_IMAGE=$(BASE_VARIANT=sandbox BASE_IMAGE_NAME=mlsys-sandbox-base deploy/base/build-base-image.sh)
fi

inputs_hash=$(
    {
        echo "$BASE_IMAGE"
        cat deploy/sandbox/Dockerfile deploy/sandbox/requirements.txt
        find apps/sandbox/container -type f -name '*.py' -print0 | sort -z | xargs -0 cat
    } | sha256sum | cut -c1-12
)
TAG="$NAME:$inputs_hash"
if [[ "${FORCE:-0}" != 1 ]] && docker image inspect "$TAG" >/dev/null 2>&1; then
    echo "sandbox image $TAG already exists"
    docker tag "$TAG" "$NAME:latest"
    echo "$TAG" >&3
    exit 0
fi

started=$(date +%s)
wheels=deploy/.sandbox-wheels
mkdir -p "$wheels"
cleanup() { if [[ "${KEEP_WHEELS:-0}" != 1 ]]; then rm -rf "$wheels"; fi; }
trap cleanup EXIT
echo "downloading the sandbox's wheels into $wheels"
# Explicit target (CPython 3.11, manylinux x86_64) so the host's own Python does not matter.
PIP_FIND_LINKS= "$PYTHON" -m pip download --quiet --disable-pip-version-check \
    --require-hashes -r deploy/sandbox/requirements.txt -d "$wheels" \
    --only-binary=:all: --implementation cp --python-version 3.11 --abi cp311 \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_28_x86_64
echo "$(find "$wheels" -name '*.whl' | wc -l) wheels, $(du -sh "$wheels" | cut -f1)"

echo "building $TAG on $BASE_IMAGE"
# The classic builder: it needs no buildx plugin and never pulls a base that exists locally.
DOCKER_BUILDKIT=0 docker build --quiet -f deploy/sandbox/Dockerfile \
    --build-arg BASE_IMAGE="$BASE_IMAGE" --build-arg WHEELS="$wheels" \
    --label mlsys.sandbox.inputs-hash="$inputs_hash" \
    -t "$TAG" . >/dev/null
docker tag "$TAG" "$NAME:latest"
echo "built $TAG (also $NAME:latest) in $(($(date +%s) - started))s ($(docker image inspect -f '{{.Size}}' "$TAG" | numfmt --to=iec))"
echo "$TAG" >&3
