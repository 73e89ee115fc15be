#!/bin/sh
# Runs as `postgres`. Initialises PGDATA on first start, then runs the server in the foreground.
# Extra arguments go to `postgres` (e.g. `-c max_connections=200`).
set -eu

: "${PGDATA:=/var/lib/postgresql/data}"
POSTGRES_USER=${POSTGRES_USER:-mlsys}
POSTGRES_DB=${POSTGRES_DB:-$POSTGRES_USER}

if [ ! -s "$PGDATA/PG_VERSION" ]; then
    if [ -z "${POSTGRES_PASSWORD:-}" ]; then
        echo "error: the database is not initialised and POSTGRES_PASSWORD is not set" >&2
        exit 1
    fi
    echo "initialising a new cluster in $PGDATA (superuser $POSTGRES_USER, database $POSTGRES_DB)"
    pwfile=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
    # Socket connections inside the container are trusted; everything over TCP needs the password.
    initdb --pgdata="$PGDATA" --username="$POSTGRES_USER" --pwfile="$pwfile" \
        --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8
    rm -f "$pwfile"
    {
        echo "# Added by the container entrypoint: any address on the compose network, with a password."
        echo "host    all    all    0.0.0.0/0    scram-sha-256"
        echo "host    all    all    ::/0         scram-sha-256"
    } >>"$PGDATA/pg_hba.conf"
    if [ "$POSTGRES_DB" != postgres ]; then
        pg_ctl --pgdata="$PGDATA" --wait --silent \
            -o "-c listen_addresses='' -c unix_socket_directories=/run/postgresql" start
        createdb --host=/run/postgresql --username="$POSTGRES_USER" --owner="$POSTGRES_USER" "$POSTGRES_DB"
        pg_ctl --pgdata="$PGDATA" --wait --silent --mode=fast stop
    fi
    echo "initialisation done"
fi

exec postgres -D "$PGDATA" \
    -c listen_addresses='*' \
    -c unix_socket_directories=/run/postgresql \
    "$@"
