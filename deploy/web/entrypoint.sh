#!/bin/sh
# Entrypoint of the Django image (runs under tini as the non-root user `app`).
#   web     migrate, sync_content, then gunicorn on 0.0.0.0:8000
#   worker  the Celery worker for the default queue
#   sandbox-worker  the Celery worker for learners' code (queue sandbox; needs the Docker socket)
#   beat    the Celery beat scheduler
#   migrate migrate + sync_content only, then exit
#   other   run as a command (e.g. `python manage.py shell`, or `mlsys-watchdog`: the sandbox
#           worker's watchdog, deploy/web/watchdog.py)
# `docker-compose exec web ...` does not pass through here: it runs its command as given, in /app
# (e.g. `docker-compose exec web python manage.py create_account ada --role learner`).
set -eu

# sync_content computes some code exercises' expected values in the sandbox; on a first start the
# sandbox worker may still be running its self-test, so it waits for it (only when it must).
prepare() {
    python manage.py migrate --noinput
    python manage.py sync_content --wait-for-sandbox "${SYNC_WAIT_FOR_SANDBOX_S:-240}"
}

cmd=${1:-web}
if [ "$#" -gt 0 ]; then shift; fi

case "$cmd" in
web)
    prepare
    exec gunicorn config.wsgi:application \
        --bind 0.0.0.0:8000 \
        --workers "${GUNICORN_WORKERS:-2}" \
        --timeout "${GUNICORN_TIMEOUT:-60}" \
        --access-logfile - \
        --error-logfile - \
        "$@"
    ;;
worker)
    exec celery -A config.celery_app worker -Q celery -l info --prefetch-multiplier 1 "$@"
    ;;
sandbox-worker)
    # One process per core: each run is pinned to one CPU (its cpuset) by the worker's slot.
    exec celery -A config.celery_app worker -Q sandbox -n "sandbox@%h" -l info --prefetch-multiplier 1 \
        --concurrency "${SANDBOX_CONCURRENCY:-2}" "$@"
    ;;
beat)
    # The file scheduler keeps its state in a writable place (the app tree is read-only).
    exec celery -A config.celery_app beat -l info --schedule /tmp/celerybeat-schedule "$@"
    ;;
migrate)
    prepare
    ;;
*)
    exec "$cmd" "$@"
    ;;
esac
