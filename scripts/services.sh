#!/usr/bin/env bash
# Starts (or stops) the throwaway PostgreSQL and Redis that `make test` and `make bench` use,
# and makes sure Chromium is there for the browser tests.
# Both listen on 127.0.0.1 only and keep their data under var/. Installs Debian's packages
# when the binaries are missing (a fresh CI machine). Idempotent: a running server is reused.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PG_PORT=${PG_PORT:-54329}
REDIS_PORT=${REDIS_PORT:-63799}
VAR="$ROOT/var"
PGDATA="$VAR/pg"
REDIS_DIR="$VAR/redis"

log() { printf 'services: %s\n' "$*" >&2; }

apt_install() {
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    log "installing $* from Debian's packages"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

pg_bindir() {
    ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

# Run a command as the cluster owner: initdb and postgres refuse to run as root.
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

start_postgres() {
    [ -n "$(pg_bindir)" ] || apt_install postgresql
    local bin
    bin=$(pg_bindir)
    if as_owner "$bin/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT"; then
        log "postgres already up on 127.0.0.1:$PG_PORT"
        return
    fi
    mkdir -p "$VAR"
    if [ ! -s "$PGDATA/PG_VERSION" ]; then
        mkdir -p "$PGDATA"
        [ "$(id -u)" -ne 0 ] || chown postgres:postgres "$PGDATA"
        chmod 700 "$PGDATA"
        # trust on loopback only: a throwaway cluster that exists for the test run.
        as_owner "$bin/initdb" -D "$PGDATA" -U postgres --auth-local=trust --auth-host=trust \
            --encoding=UTF8 --locale=C.UTF-8 >/dev/null
    fi
    # fsync off and friends: the cluster holds nothing worth keeping across a crash.
    as_owner "$bin/pg_ctl" -D "$PGDATA" -l "$PGDATA/server.log" -w -t 60 start -o \
        "-c listen_addresses=127.0.0.1 -p $PG_PORT -c unix_socket_directories=$PGDATA \
         -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" >/dev/null
    as_owner "$bin/psql" -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 <<'SQL'
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'mlsys') THEN
    CREATE ROLE mlsys LOGIN SUPERUSER;
  END IF;
END $$;
SQL
    if ! as_owner "$bin/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -tAc \
        "SELECT 1 FROM pg_database WHERE datname='mlsys'" | grep -q 1; then
        as_owner "$bin/createdb" -h 127.0.0.1 -p "$PG_PORT" -U postgres -O mlsys mlsys
    fi
    log "postgres up on 127.0.0.1:$PG_PORT (data in $PGDATA)"
}

start_redis() {
    command -v redis-server >/dev/null || apt_install redis-server
    if redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG; then
        log "redis already up on 127.0.0.1:$REDIS_PORT"
        return
    fi
    mkdir -p "$REDIS_DIR"
    # 64 databases: each pytest-xdist worker takes two (config/settings/test.py).
    redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --daemonize yes --dir "$REDIS_DIR" --databases 64 \
        --save '' --appendonly no --logfile "$REDIS_DIR/redis.log" --pidfile "$REDIS_DIR/redis.pid"
    for _ in $(seq 50); do
        redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG && break
        sleep 0.1
    done
    redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping | grep -q PONG
    log "redis up on 127.0.0.1:$REDIS_PORT"
}

# The browser tests drive Debian's Chromium through Playwright (no browser download: no registry).
ensure_browser() {
    command -v "${CHROMIUM:-chromium}" >/dev/null || apt_install chromium fonts-dejavu-core
    log "browser: $(command -v "${CHROMIUM:-chromium}")"
}

stop_all() {
    local bin
    bin=$(pg_bindir)
    if [ -n "$bin" ] && [ -s "$PGDATA/postmaster.pid" ]; then
        as_owner "$bin/pg_ctl" -D "$PGDATA" -m fast stop >/dev/null || true
    fi
    if command -v redis-cli >/dev/null; then
        redis-cli -h 127.0.0.1 -p "$REDIS_PORT" shutdown nosave 2>/dev/null || true
    fi
    log "stopped"
}

case "${1:-start}" in
    start) start_postgres; start_redis; ensure_browser ;;
    stop) stop_all ;;
    browser) ensure_browser ;;
    *) echo "usage: $0 start|stop|browser" >&2; exit 2 ;;
esac
