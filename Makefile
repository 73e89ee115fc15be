# The two commands a newcomer needs: `make run` and `make test`. Everything else is a helper.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
MANAGE := $(PY) manage.py
# Test services (loopback only) — see scripts/services.sh.
export PG_PORT ?= 54329
export REDIS_PORT ?= 63799
TEST_ENV := DATABASE_URL=postgres://mlsys@127.0.0.1:$(PG_PORT)/mlsys REDIS_URL=redis://127.0.0.1:$(REDIS_PORT)/0 \
	SANDBOX_IMAGE=$$(cat var/sandbox-image)

.PHONY: run test lint typecheck check-content pytest services services-stop venv venv-dev clean bench bench-burst bench-growth sandbox-image gvisor stack stack-down

## The virtualenv: built once per lock file in the machine's cache, .venv links it (scripts/venv.sh).
venv:
	@bash scripts/venv.sh base
venv-dev:
	@bash scripts/venv.sh dev

## make run: the platform on its embedded default (SQLite, Celery in-process) at http://127.0.0.1:8000,
## DEBUG off and static files collected and served by WhiteNoise as in production; DJANGO_DEBUG=true opts in.
## One line per step; the sandbox image's build output goes to var/log/sandbox-image.log, a failed build
## says why, and the demo accounts are printed last (scripts/run.sh).
run: venv
	@bash scripts/run.sh

## make test: ruff, mypy, import contracts, check_content and the whole pytest suite on real PostgreSQL,
## Redis, Docker and Chromium, each phase timed (scripts/test.sh). PYTEST_ARGS narrows or adds to pytest's
## arguments; PYTEST_WORKERS (default 2) is the number of pytest-xdist workers, 0 for one process.
test:
	@bash scripts/test.sh

## make content-dev: the authors' edit loop. The platform as make run serves it (embedded default, DEBUG off,
## on http://127.0.0.1:8000) with the content watcher in the same process: a saved chapter file (or code folder)
## is re-synced and re-checked alone, one line per change, and an open exercise or workbook page reloads itself,
## or shows the file's error until it is fixed (manage.py content_dev; README, "The edit loop"). CONTENT_DEV_ADDR
## serves elsewhere; SQLITE_PATH and CONTENT_DIRS are read as make run reads them.
.PHONY: content-dev
content-dev: CONTENT_DEV_ADDR ?= 127.0.0.1:8000
content-dev: venv
	@set -eo pipefail; unset DATABASE_URL REDIS_URL; \
	bash scripts/sandbox-image.sh || echo "   without it, code exercises are neither checked nor graded" >&2; \
	echo "== database: migrating (SQLite under var/)"; LOG_LEVEL=WARNING $(MANAGE) migrate --noinput -v0; \
	echo "== static files: collecting"; LOG_LEVEL=WARNING $(MANAGE) collectstatic --noinput -v0; \
	echo "== workbooks: loading"; LOG_LEVEL=WARNING $(MANAGE) sync_content | sed 's/^/   /'; \
	echo "== demo accounts: setting up"; LOG_LEVEL=WARNING $(MANAGE) seed_demo -v0; \
	echo "== serving, and watching the content (Ctrl-C stops both)"; \
	LOG_LEVEL=WARNING exec $(MANAGE) content_dev --serve $(CONTENT_DEV_ADDR)

services:
	bash scripts/services.sh start

## The sandbox image learners' code runs in (deploy/sandbox/); rebuilt only when its inputs change. Its tag
## goes to var/sandbox-image, the build's output to var/log/sandbox-image.log (scripts/sandbox-image.sh).
sandbox-image:
	@bash scripts/sandbox-image.sh

## gVisor (Debian's runsc) registered with Docker as the runtime "runsc": SANDBOX_RUNTIME=runsc uses it,
## and make test runs the hostile suite under it too. Needs root or sudo (scripts/gvisor.sh).
gvisor: sandbox-image
	bash scripts/gvisor.sh

services-stop:
	bash scripts/services.sh stop

## make stack: the production-shaped compose stack on http://127.0.0.1:$${MLSYS_PORT:-8000} — builds the
## images, writes settings and generated secrets into .env, starts it and waits until it is healthy.
## COMPOSE_PROJECT_NAME and MLSYS_PORT choose another stack and port. See deploy/README.md.
stack:
	scripts/stack.sh up

## make stack-down: stop and remove the stack's containers (its data volumes stay; see scripts/stack.sh).
stack-down:
	scripts/stack.sh down

bench: venv-dev services sandbox-image gvisor
	$(TEST_ENV) $(PY) bench/grading_api.py
	$(TEST_ENV) $(PY) bench/sandbox.py
	$(TEST_ENV) $(PY) bench/leaderboard.py
	$(TEST_ENV) $(PY) bench/pages.py
	$(TEST_ENV) $(PY) bench/jax_exercises.py
	$(TEST_ENV) $(PY) bench/overview.py
	$(TEST_ENV) $(PY) bench/assessments.py
	$(TEST_ENV) $(PY) bench/item_analysis.py
	$(PY) bench/content_dev.py

## make bench-burst: the deadline burst, on fixed numbers and on learners' own (bench/burst.py; ~10 min, both cores); BURST_ARGS=--quick for a short run
bench-burst: venv-dev services sandbox-image
	$(TEST_ENV) $(PY) bench/burst.py $(BURST_ARGS)

## make bench-growth: the boards, reviews, overview and gradebook at 10k, 100k and 1M learners, charted
## in docs/growth.svg (bench/growth.py; the 1M database alone takes ~25 min to generate, then is kept)
bench-growth: venv-dev services
	$(TEST_ENV) $(PY) bench/growth.py $(GROWTH_ARGS)

clean:
	bash scripts/services.sh stop || true
	rm -rf $(VENV) var
