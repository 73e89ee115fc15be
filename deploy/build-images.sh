#!/usr/bin/env bash
# Build every image of the stack without pulling anything from a container registry:
#   1. the Debian bookworm base image (deploy/base/build-base-image.sh: debootstrap + docker
#      import, reused while its inputs are unchanged), unless BASE_IMAGE is already set;
#   2. the Python wheels of requirements/base.lock, downloaded on the host into deploy/.wheels
#      (hash-checked), so the web image installs them with `pip --no-index`;
#   3. the sandbox image (deploy/sandbox/build-sandbox-image.sh);
#   4. `docker-compose build` with BASE_IMAGE set to that base image.
# Extra arguments go to `docker-compose build` (default: postgres redis web; worker, beat,
# sandbox-worker and sandbox-watchdog run the image that web builds). The images are named after
# the compose project: ${COMPOSE_PROJECT_NAME:-mlsys}-web:latest, -postgres, -redis.
#
# Built once: each of those three is also tagged mlsys-<service>:<hash12>, the hash of its inputs
# (the base image and every file that reaches the image: deploy/<service>/ and, for web,
# requirements/base.lock, manage.py, config, apps but their tests, templates, static and fixtures). A later build
# whose inputs are unchanged, for any project, tags that image with the project's name instead of
# building it again (FORCE=1 rebuilds). The three newest keys of each service are kept.
#
# Environment:
#   BASE_IMAGE   use this base instead of building one (e.g. python:3.11-slim-bookworm where a
#                registry exists; the postgres/redis images then need apt inside the build)
#   PYTHON       the host Python whose pip downloads the wheels (default python3)
#   KEEP_WHEELS=1  keep deploy/.wheels afterwards (it is removed by default)
#   COMPOSE      the compose command (default: docker-compose, else `docker compose`)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

if [[ -z "${COMPOSE:-}" ]]; then
    if command -v docker-compose >/dev/null 2>&1; then COMPOSE=docker-compose; else COMPOSE="docker compose"; fi
fi
PYTHON=${PYTHON:-python3}
wheels=deploy/.wheels

t0=$(date +%s)
if [[ -z "${BASE_IMAGE:-}" ]]; then
    echo "== base image"
    BASE_IMAGE=$(deploy/base/build-base-image.sh)
fi
export BASE_IMAGE
t1=$(date +%s)
echo "== base image: $BASE_IMAGE ($((t1 - t0))s)"

echo "== sandbox image (learners' code)"
SANDBOX_IMAGE=$(deploy/sandbox/build-sandbox-image.sh)
export SANDBOX_IMAGE
echo "== sandbox image: $SANDBOX_IMAGE"

project=${COMPOSE_PROJECT_NAME:-mlsys}
# The inputs of each image (a file's path and content), under the base image it builds on.
inputs_key() {
    {
        echo "$BASE_IMAGE"
        # Not apps/*/tests: deploy/web/Dockerfile leaves them out of the image.
        find "$@" -type f ! -path '*/__pycache__/*' ! -name '*.pyc' ! -path 'apps/*/tests/*' -print0 | sort -z | xargs -0 sha256sum
    } | sha256sum | cut -c1-12
}
declare -A KEYS=(
    [web]=$(inputs_key deploy/web requirements/base.lock manage.py config apps templates static fixtures)
    [postgres]=$(inputs_key deploy/postgres)
    [redis]=$(inputs_key deploy/redis)
)

# web, worker, beat and the sandbox worker share the image <project>-web:latest: only `web` builds
# it, so all of them run the same snapshot of the code.
requested=("$@")
if [[ $# -eq 0 ]]; then requested=(postgres redis web); fi
build_args=()
for service in "${requested[@]}"; do
    key=${KEYS[$service]:-}
    if [[ -n $key && "${FORCE:-0}" != 1 ]] && docker image inspect "mlsys-$service:$key" >/dev/null 2>&1; then
        docker tag "mlsys-$service:$key" "$project-$service:latest"
        echo "== $service: mlsys-$service:$key is built from the same inputs; tagged $project-$service:latest"
    else
        build_args+=("$service")
    fi
done
t2=$(date +%s)
if [[ ${#build_args[@]} -gt 0 ]]; then
    echo "== downloading wheels for requirements/base.lock into $wheels"
    mkdir -p "$wheels"
    # Explicit target (CPython 3.11, manylinux x86_64) so the host's own Python version does not matter.
    "$PYTHON" -m pip download --quiet --disable-pip-version-check \
        --require-hashes -r requirements/base.lock -d "$wheels" \
        --only-binary=:all: --implementation cp --python-version 3.11 --abi cp311 \
        --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64
    echo "$(find "$wheels" -name '*.whl' | wc -l) wheels, $(du -sh "$wheels" | cut -f1)"
    t2=$(date +%s)

    cleanup_wheels() {
        if [[ "${KEEP_WHEELS:-0}" != 1 ]]; then rm -rf "$wheels"; fi
    }
    trap cleanup_wheels EXIT

    echo "== $COMPOSE build ${build_args[*]} (BASE_IMAGE=$BASE_IMAGE)"
    # Building needs no secrets, but the compose file refuses to load without them: placeholders
    # are enough here and are not baked into any image.
    DJANGO_SECRET_KEY=${DJANGO_SECRET_KEY:-build-only-placeholder} \
        POSTGRES_PASSWORD=${POSTGRES_PASSWORD:-build-only-placeholder} \
        DOCKER_GID=${DOCKER_GID:-0} \
        $COMPOSE build "${build_args[@]}"
    for service in "${build_args[@]}"; do
        key=${KEYS[$service]:-}
        [[ -n $key ]] || continue
        docker tag "$project-$service:latest" "mlsys-$service:$key"
        # Older keys beyond the three newest: untagged (an image a stack still runs keeps its
        # project's tag, so nothing in use is removed).
        docker image ls "mlsys-$service" --format '{{.CreatedAt}}\t{{.Repository}}:{{.Tag}}' | sort -r |
            tail -n +4 | cut -f2 | xargs -r docker rmi >/dev/null 2>&1 || true
    done
fi
t3=$(date +%s)

echo "== done: base image $((t1 - t0))s, wheels $((t2 - t1))s, compose build $((t3 - t2))s"
docker image ls --format '{{.Repository}}:{{.Tag}}\t{{.Size}}' |
    grep -E "^(${project//./\\.}-(web|postgres|redis):latest|${BASE_IMAGE//./\\.})\b" || true
echo "BASE_IMAGE=$BASE_IMAGE"
echo "SANDBOX_IMAGE=$SANDBOX_IMAGE"
keyed=()
for service in "${requested[@]}"; do
    if [[ -n ${KEYS[$service]:-} ]]; then keyed+=("mlsys-$service:${KEYS[$service]}"); fi
done
echo "KEYED_IMAGES=${keyed[*]}"
