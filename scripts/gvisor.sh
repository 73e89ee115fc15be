#!/usr/bin/env bash
# Installs gVisor (Debian's `runsc`) and registers it with the Docker Engine as the runtime
# `runsc`, so that SANDBOX_RUNTIME=runsc runs learners' containers under a user-space kernel.
#
#   scripts/gvisor.sh            # install if missing, register, reload the engine, check
#   scripts/gvisor.sh --check    # only say whether `docker run --runtime runsc` works (exit 0/1)
#
# The runtime is registered with `--platform=ptrace` (no KVM needed: works inside VMs and
# containers) and `--network=none` (the sandbox never has a network). Registration merges the
# entry into /etc/docker/daemon.json and sends the engine SIGHUP: runtimes are reloaded without a
# restart, so running containers are untouched. Needs root (or sudo). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNTIME=${SANDBOX_RUNTIME_NAME:-runsc}
DAEMON_JSON=${DOCKER_DAEMON_JSON:-/etc/docker/daemon.json}
log() { printf 'gvisor: %s\n' "$*" >&2; }

sudo_=""
[ "$(id -u)" -eq 0 ] || sudo_="sudo"

registered() { docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q "\"$RUNTIME\""; }

works() {
    local image
    image=${SANDBOX_IMAGE:-$(cat var/sandbox-image 2>/dev/null || echo mlsys-sandbox:latest)}
    docker run --rm --runtime "$RUNTIME" --network none "$image" /opt/venv/bin/python -c 'print(6*7)' 2>/dev/null \
        | grep -qx 42
}

if [ "${1:-}" = "--check" ]; then
    registered && works
    exit
fi

if ! command -v runsc >/dev/null 2>&1; then
    log "installing runsc from Debian's packages"
    $sudo_ apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq --no-install-recommends runsc >/dev/null
fi
RUNSC=$(command -v runsc)

if ! registered; then
    log "registering $RUNSC as the Docker runtime '$RUNTIME' in $DAEMON_JSON"
    $sudo_ mkdir -p "$(dirname "$DAEMON_JSON")"
    tmp=$(mktemp)
    python3 - "$DAEMON_JSON" "$RUNTIME" "$RUNSC" >"$tmp" <<'PY'
import json, os, sys
path, name, binary = sys.argv[1:]
config = json.load(open(path)) if os.path.exists(path) and os.path.getsize(path) else {}
config.setdefault("runtimes", {})[name] = {"path": binary, "runtimeArgs": ["--platform=ptrace", "--network=none"]}
print(json.dumps(config, indent=2))
PY
    $sudo_ cp "$tmp" "$DAEMON_JSON"
    rm -f "$tmp"
    pid=$(pidof dockerd || true)
    if [ -n "$pid" ]; then
        $sudo_ kill -HUP "$pid"
    elif command -v systemctl >/dev/null 2>&1; then
        $sudo_ systemctl reload docker
    fi
    for _ in $(seq 50); do registered && break; sleep 0.1; done
fi

if registered; then
    log "runtime '$RUNTIME' registered: $(runsc --version | head -n 1)"
else
    log "the Docker Engine did not pick up the runtime '$RUNTIME' (see $DAEMON_JSON)"
    exit 1
fi
