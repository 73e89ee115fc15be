#!/usr/bin/env bash
# make run: the platform on its embedded default (SQLite under var/, Celery in-process) at
# http://127.0.0.1:8000, DEBUG off and static files collected and served by WhiteNoise as in
# production (DJANGO_DEBUG=true opts in to the debug pages).
#
# One line per step on the terminal; the sandbox image's build output goes to
# var/log/sandbox-image.log (scripts/sandbox-image.sh), and when the image cannot be built the
# platform starts anyway, with the reason, and code exercises say they cannot be graded. The
# demo accounts and their passwords are the last thing printed, after the server's banner
# (manage.py serve_demo).
set -euo pipefail
cd "$(dirname "$0")/.."
unset DATABASE_URL REDIS_URL # the embedded default, whatever the shell has
PY=.venv/bin/python
# The setup commands' INFO logs ("content synced ...") would repeat what their own lines say.
setup() { LOG_LEVEL=WARNING "$PY" manage.py "$@"; }

if ! bash scripts/sandbox-image.sh; then
    echo "   the platform starts without it: code exercises will say they cannot be graded until it is built" >&2
fi
echo "== database: migrating (SQLite under var/)"
setup migrate --noinput -v0
echo "== static files: collecting"
setup collectstatic --noinput -v0
echo "== workbooks: loading"
setup sync_content | sed 's/^/   /'
echo "== demo accounts: setting up"
setup seed_demo -v0
echo "== serving (Ctrl-C stops it)"
exec "$PY" manage.py serve_demo 127.0.0.1:8000
