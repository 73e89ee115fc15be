#!/usr/bin/env bash
# The compose stack as an operator runs it (`make stack`, `make stack-down`; deploy/README.md).
#
#   scripts/stack.sh up              build the images, start the stack, wait until it is healthy
#   scripts/stack.sh build           only build the images (deploy/build-images.sh)
#   scripts/stack.sh start           start (or update) the stack from the built images, and wait
#   scripts/stack.sh wait            wait until web and the sandbox worker are healthy
#   scripts/stack.sh down [ARGS]     docker-compose down ARGS (keeps the data volumes unless -v;
#                                    `-v --rmi all` also drops this project's images)
#   scripts/stack.sh compose ARGS    docker-compose ARGS with this stack's settings, e.g.
#                                    `scripts/stack.sh compose exec web python manage.py create_account ada --role learner`
#
# Settings live in an env file (MLSYS_ENV_FILE, default .env beside docker-compose.yml; git-ignored,
# mode 600) that docker-compose also reads by itself, so plain `docker-compose ps/logs/exec` address
# the same stack afterwards. One file per stack: a second stack on the same machine gets its own
# (MLSYS_ENV_FILE=.env.b COMPOSE_PROJECT_NAME=b MLSYS_PORT=8100 make stack). Each run writes into
# it (a value from the environment wins):
#   COMPOSE_PROJECT_NAME  default mlsys; also names the images (<project>-web, -postgres, -redis)
#   MLSYS_PORT            default 8000: web on http://127.0.0.1:MLSYS_PORT/
#   DOCKER_GID            detected: the group of /var/run/docker.sock (the sandbox worker needs it)
#   BASE_IMAGE, SANDBOX_IMAGE  as built by deploy/build-images.sh
#   SANDBOX_RUNTIME, SANDBOX_POOL_SIZE  only when set in the environment (runsc: gVisor, which
#                         scripts/gvisor.sh registers; 0: no pool of pre-started containers)
#   DJANGO_SECRET_KEY, POSTGRES_PASSWORD  generated on the first run, unless set in the environment
#                         (then they are not written to disk)
# Other settings (EMAIL_HOST, DJANGO_ALLOWED_HOSTS, ...) can be added to the file by hand.
# MLSYS_WAIT_S (default 600) bounds the wait for health. Needs Docker and docker-compose (or
# `docker compose`); building the base image the first time needs root (debootstrap), nothing else does.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ENV_FILE=${MLSYS_ENV_FILE:-.env}
WAIT_S=${MLSYS_WAIT_S:-600}

log() { printf 'stack: %s\n' "$*" >&2; }
die() {
    log "error: $*"
    exit 1
}

compose_cmd() {
    if command -v docker-compose >/dev/null 2>&1; then
        echo docker-compose
    elif docker compose version >/dev/null 2>&1; then
        echo "docker compose"
    else
        die "neither docker-compose nor the docker compose plugin is installed"
    fi
}
COMPOSE_BIN=$(compose_cmd)

# The value of KEY in the env file (empty if absent); surrounding quotes are dropped.
file_get() {
    [[ -f "$ENV_FILE" ]] || return 0
    local line value
    line=$(grep -E "^[[:space:]]*$1=" "$ENV_FILE" | tail -n 1) || return 0
    value=${line#*=}
    value=${value%\"}
    value=${value#\"}
    value=${value%\'}
    value=${value#\'}
    printf '%s' "$value"
}

# Set KEY=VALUE in the env file, replacing an existing line or appending one.
file_set() {
    local key=$1 value=$2 tmp
    tmp=$(mktemp "$ENV_FILE.XXXXXX")
    if [[ -f "$ENV_FILE" ]]; then
        grep -vE "^[[:space:]]*$key=" "$ENV_FILE" >"$tmp" || true
    fi
    printf '%s=%s\n' "$key" "$value" >>"$tmp"
    chmod 600 "$tmp"
    mv "$tmp" "$ENV_FILE"
}

random_secret() { python3 -c "import secrets; print(secrets.token_$1($2))"; }

# Decide every setting (environment > env file > default), record it, export it.
configure() {
    if [[ ! -f "$ENV_FILE" ]]; then
        (umask 077 && printf '# Settings of the compose stack, written by scripts/stack.sh. Keep out of git.\n' >"$ENV_FILE")
        log "created $ENV_FILE"
    fi
    docker version --format '{{.Server.Version}}' >/dev/null 2>&1 ||
        die "no Docker Engine is reachable (is it running, and are you root or in the docker group?)"

    local key value
    for key in DJANGO_SECRET_KEY POSTGRES_PASSWORD; do
        if [[ -z "${!key:-}" && -z "$(file_get "$key")" ]]; then
            if [[ $key == DJANGO_SECRET_KEY ]]; then value=$(random_secret urlsafe 48); else value=$(random_secret hex 24); fi
            file_set "$key" "$value"
            log "generated $key into $ENV_FILE"
        fi
    done

    local recorded
    recorded=$(file_get COMPOSE_PROJECT_NAME)
    if [[ -n "${COMPOSE_PROJECT_NAME:-}" && -n "$recorded" && "$COMPOSE_PROJECT_NAME" != "$recorded" ]]; then
        die "$ENV_FILE belongs to the stack '$recorded'; for a second stack give it its own file:" \
            "MLSYS_ENV_FILE=.env.$COMPOSE_PROJECT_NAME COMPOSE_PROJECT_NAME=$COMPOSE_PROJECT_NAME ..."
    fi
    COMPOSE_PROJECT_NAME=${COMPOSE_PROJECT_NAME:-$recorded}
    COMPOSE_PROJECT_NAME=${COMPOSE_PROJECT_NAME:-mlsys}
    [[ $COMPOSE_PROJECT_NAME =~ ^[a-z0-9][a-z0-9_-]*$ ]] ||
        die "COMPOSE_PROJECT_NAME must be lowercase letters, digits, - and _ (it names images): $COMPOSE_PROJECT_NAME"
    MLSYS_PORT=${MLSYS_PORT:-$(file_get MLSYS_PORT)}
    MLSYS_PORT=${MLSYS_PORT:-8000}
    [[ $MLSYS_PORT =~ ^[0-9]+$ ]] || die "MLSYS_PORT must be a port number, not $MLSYS_PORT"
    if [[ -z "${DOCKER_GID:-}" ]]; then
        [[ -S /var/run/docker.sock ]] ||
            die "/var/run/docker.sock is not a socket: the sandbox worker needs the local Docker Engine's socket (or set DOCKER_GID)"
        DOCKER_GID=$(stat -c %g /var/run/docker.sock)
    fi
    export COMPOSE_PROJECT_NAME MLSYS_PORT DOCKER_GID
    for key in COMPOSE_PROJECT_NAME MLSYS_PORT DOCKER_GID; do
        [[ "$(file_get "$key")" == "${!key}" ]] || file_set "$key" "${!key}"
    done
    # Images: the environment's, else what the last build recorded.
    for key in SANDBOX_IMAGE BASE_IMAGE; do
        if [[ -z "${!key:-}" && -n "$(file_get "$key")" ]]; then export "$key=$(file_get "$key")"; fi
    done
    # The sandbox's runtime and pool: the environment's are recorded, so that later runs keep them.
    for key in SANDBOX_RUNTIME SANDBOX_POOL_SIZE; do
        if [[ -n "${!key:-}" && "$(file_get "$key")" != "${!key}" ]]; then file_set "$key" "${!key}"; fi
    done
    read -r -a COMPOSE <<<"$COMPOSE_BIN"
    COMPOSE+=(--env-file "$ENV_FILE")
}

build() {
    local out
    out=$(mktemp)
    # BASE_IMAGE is recomputed (cheaply, from the base script's hash) unless the environment set
    # it: the one recorded in the env file may predate a change of the base image's inputs.
    local base=(-u BASE_IMAGE)
    if [[ -n "$BASE_IMAGE_FROM_ENV" ]]; then base=("BASE_IMAGE=$BASE_IMAGE_FROM_ENV"); fi
    if ! env "${base[@]}" COMPOSE="${COMPOSE[*]}" deploy/build-images.sh | tee "$out"; then
        rm -f "$out"
        die "building the images failed (above)"
    fi
    local key value
    for key in BASE_IMAGE SANDBOX_IMAGE; do
        value=$(grep -E "^$key=" "$out" | tail -n 1 | cut -d= -f2-)
        if [[ -n "$value" ]]; then
            export "$key=$value"
            file_set "$key" "$value"
        fi
    done
    rm -f "$out"
}

start() {
    local runtime
    runtime=${SANDBOX_RUNTIME:-$(file_get SANDBOX_RUNTIME)}
    if [[ -n "$runtime" && "$runtime" != runc ]]; then
        SANDBOX_RUNTIME_NAME=$runtime bash scripts/gvisor.sh --check ||
            die "SANDBOX_RUNTIME=$runtime does not run the sandbox image on this Docker Engine: register gVisor first (sudo scripts/gvisor.sh), or take SANDBOX_RUNTIME out of $ENV_FILE"
    fi
    log "starting project $COMPOSE_PROJECT_NAME on 127.0.0.1:$MLSYS_PORT"
    "${COMPOSE[@]}" up -d --remove-orphans
    wait_healthy
}

# Healthy: running, and its healthcheck says so. Prints the state of a service's container.
state_of() {
    local id
    id=$("${COMPOSE[@]}" ps -q "$1" 2>/dev/null | head -n 1)
    [[ -n "$id" ]] || {
        echo missing
        return
    }
    docker inspect -f '{{.State.Status}}/{{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}}' "$id" 2>/dev/null || echo missing
}

wait_healthy() {
    local started=$SECONDS deadline=$((SECONDS + WAIT_S)) service state pending id
    local services=(web sandbox-worker)
    log "waiting (up to ${WAIT_S}s) for: ${services[*]}"
    while true; do
        pending=()
        for service in "${services[@]}"; do
            state=$(state_of "$service")
            [[ $state == running/healthy ]] || pending+=("$service=$state")
        done
        if [[ ${#pending[@]} -eq 0 ]]; then
            log "healthy after $((SECONDS - started))s: http://127.0.0.1:$MLSYS_PORT/"
            log "add an account: scripts/stack.sh compose exec web python manage.py create_account <username> --role learner|instructor|author"
            return 0
        fi
        if ((SECONDS >= deadline)); then
            log "not healthy after ${WAIT_S}s: ${pending[*]}"
            "${COMPOSE[@]}" ps >&2 || true
            for service in "${services[@]}"; do
                id=$("${COMPOSE[@]}" ps -q "$service" 2>/dev/null | head -n 1)
                [[ -n "$id" ]] || continue
                log "last healthcheck of $service:"
                docker inspect -f '{{if .State.Health}}{{range .State.Health.Log}}{{.Output}}{{end}}{{end}}' "$id" >&2 || true
                log "last log lines of $service:"
                "${COMPOSE[@]}" logs --tail 30 "$service" >&2 || true
            done
            exit 1
        fi
        sleep 2
    done
}

cmd=${1:-}
[[ $# -gt 0 ]] && shift
BASE_IMAGE_FROM_ENV=${BASE_IMAGE:-}
case "$cmd" in
up)
    configure
    build
    start
    ;;
build)
    configure
    build
    ;;
start)
    configure
    start
    ;;
wait)
    configure
    wait_healthy
    ;;
down)
    [[ -f "$ENV_FILE" ]] || die "no $ENV_FILE: nothing was started with this env file"
    configure
    "${COMPOSE[@]}" down "$@"
    if [[ " $* " == *" --rmi"* ]]; then
        # The web image's build stage and earlier builds, which the classic builder leaves untagged
        # (deploy/web/Dockerfile labels them with the project).
        docker image prune -f --filter "label=mlsys.web-image-of=$COMPOSE_PROJECT_NAME" >/dev/null
    fi
    ;;
compose)
    configure
    "${COMPOSE[@]}" "$@"
    ;;
*)
    sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
