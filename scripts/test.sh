#!/usr/bin/env bash
# `make test`: every check of the project, each phase timed, a table of the phases at the end.
#
#   venv          the dev virtualenv (scripts/venv.sh: reused while requirements/dev.lock is unchanged)
#   services      PostgreSQL, Redis and Chromium (scripts/services.sh)
#   images        the sandbox image (reused while its inputs are unchanged) and gVisor's runtime
#   lint          ruff (check and format), mypy, import-linter's contracts
#   check_content every workbook's content checks; code runs come from the verdict cache when the
#                 image, tests and source are unchanged (apps/sandbox/cache.py). A passing run is
#                 recorded in var/check-content.json, which the suite's own check reads
#                 (apps/exercises/tests/test_commands.py) instead of repeating it
#   pytest        the whole suite on PYTEST_WORKERS pytest-xdist workers (default 2), the long tests
#                 first on workers of their own (conftest.py), and the 25 slowest tests listed
#
# PYTEST_ARGS are added to pytest's (e.g. a path, or -k); PYTEST_WORKERS=0 runs it in one process.
set -euo pipefail
cd "$(dirname "$0")/.."

: "${PG_PORT:=54329}" "${REDIS_PORT:=63799}" "${PYTEST_WORKERS:=2}"
export PG_PORT REDIS_PORT
VENV=.venv

declare -a TIMES=()
STARTED=$SECONDS

summary() {
    local rc=$?
    printf '\n== phase times (make test)\n'
    local line
    for line in "${TIMES[@]}"; do printf '  %s\n' "$line"; done
    printf '  %-14s %5ds\n' total $((SECONDS - STARTED))
    exit "$rc"
}
trap summary EXIT

phase() {
    local name=$1 t0=$SECONDS rc=0
    shift
    printf '\n== %s\n' "$name"
    # A subshell with errexit, not `"$@" || rc=$?`: bash ignores -e inside a command tested by ||.
    set +e
    (
        set -e
        "$@"
    )
    rc=$?
    set -e
    TIMES+=("$(printf '%-14s %5ds%s' "$name" $((SECONDS - t0)) "$([[ $rc -eq 0 ]] || echo "  FAILED (exit $rc)")")")
    return "$rc"
}

lint() {
    $VENV/bin/ruff check .
    $VENV/bin/ruff format --check .
    $VENV/bin/mypy
    $VENV/bin/lint-imports
}

images() {
    make --no-print-directory sandbox-image
    bash scripts/gvisor.sh
}

# Our content only: a course's roots exported for `make run` (CONTENT_DIRS) are not the suite's.
test_env() {
    env -u CONTENT_DIRS DATABASE_URL="postgres://mlsys@127.0.0.1:$PG_PORT/mlsys" REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0" \
        SANDBOX_IMAGE="$(cat var/sandbox-image)" "$@"
}

run_pytest() {
    local workers=()
    if [[ $PYTEST_WORKERS != 0 ]]; then
        workers=(-n "$PYTEST_WORKERS" --dist loadgroup --no-loadscope-reorder)
    fi
    # shellcheck disable=SC2086 # PYTEST_ARGS is a list of arguments
    test_env $VENV/bin/pytest "${workers[@]}" --durations=25 ${PYTEST_ARGS:-}
}

phase venv bash scripts/venv.sh dev
phase services bash scripts/services.sh start
phase images images
phase lint lint
# Recorded (output and a fingerprint of its inputs): the suite's own check_content test reads it.
rm -f var/check-content.json
phase check_content test_env DJANGO_SETTINGS_MODULE=config.settings.test $VENV/bin/python manage.py check_content \
    --record var/check-content.json
phase pytest run_pytest
