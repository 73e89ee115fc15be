"""Settings shared by every environment.

Embedded default: with neither DATABASE_URL nor REDIS_URL set the platform runs on SQLite and
executes Celery tasks in-process, so `make run` needs nothing but Python. Set them and it uses
PostgreSQL (psycopg 3) and Redis.
"""

from datetime import timedelta
from pathlib import Path
from typing import Any

import django_stubs_ext
from celery.schedules import crontab

from apps.core.queues import Queue
from config.env import BASE_DIR, env

# Lets generic Django classes (ModelAdmin[Model], QuerySet[Model]) be subscripted at runtime.
django_stubs_ext.monkeypatch()

SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="dev-insecure-secret-key-change-me")
DEBUG = env.bool("DJANGO_DEBUG", default=False)
# `manage.py seed_demo` (demo accounts with published passwords): only the development settings allow it.
DEMO_ACCOUNTS_ALLOWED = False
ALLOWED_HOSTS: list[str] = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "knox",  # API tokens: stored hashed, expiring (REST_KNOX below)
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI assets served locally: no CDN needed
    "apps.core",
    "apps.accounts",
    "apps.exercises",
    "apps.progress",
    "apps.sandbox",
    "apps.precheck",
    "apps.learning",
    "lti_tool",  # django-lti: platform registrations, deployments, the tool's keys (its admin)
    "apps.lti",
    "apps.assessments",
    "apps.itemstats",
    "apps.authoring",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "apps.core.middleware.RejectNullCharactersMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
]

# Content-Security-Policy on every response (django-csp). No inline script, no eval, no plugins, no
# <base>; scripts and styles from our own origin only (the few inline scripts we had are static
# files now); nothing may frame us — the LTI pages replace frame-ancestors with the registered
# platforms' origins (apps/lti/views.py), and /api/docs/ lets Swagger UI's React set inline styles.
# Browsers report each violation to CSP_REPORT_PATH (apps/core/csp.py logs it).
CSP_REPORT_PATH = "/csp-report/"
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'"],
        "report-uri": [CSP_REPORT_PATH],
    }
}

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
AUTH_USER_MODEL = "accounts.User"
LOGIN_URL = "web:login"
LOGIN_REDIRECT_URL = "web:home"
LOGOUT_REDIRECT_URL = "web:home"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "apps.learning.context_processors.navigation",
            ],
        },
    },
]

DATABASE_URL = env.str("DATABASE_URL", default="")
if DATABASE_URL:
    DATABASES = {"default": env.db_url_config(DATABASE_URL)}
    # Reuse connections across requests; health checks drop ones the server closed.
    DATABASES["default"]["CONN_MAX_AGE"] = env.int("DB_CONN_MAX_AGE", default=60)
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
else:
    SQLITE_PATH = Path(env.str("SQLITE_PATH", default=str(BASE_DIR / "var" / "db.sqlite3")))
    # The embedded default must work on a fresh clone, where var/ does not exist yet.
    SQLITE_PATH.parent.mkdir(parents=True, exist_ok=True)
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(SQLITE_PATH),
            # Code is graded on threads of the web process (apps/sandbox/inprocess.py), which write
            # while requests do. WAL lets readers go on during a write; IMMEDIATE takes the write
            # lock when a transaction begins, where waiting is safe (a deferred one that reads then
            # writes fails at once with "database is locked"); `timeout` is how long a writer waits.
            # https://www.sqlite.org/wal.html, https://docs.djangoproject.com/en/5.2/ref/databases/#sqlite-transaction-behavior
            "OPTIONS": {
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
            },
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env.str("REDIS_URL", default="")
REDIS_CLIENT_OPTIONS = {"socket_connect_timeout": 0.5, "socket_timeout": 1.0}
CACHES: dict[str, dict[str, Any]]
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            # A Redis that is down must cost a request milliseconds, not a hung worker: every use
            # of the cache on a request path degrades when it cannot reach Redis (issue 16).
            "OPTIONS": REDIS_CLIENT_OPTIONS,
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# Celery: Redis when configured, otherwise tasks run eagerly in the calling process.
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = 60
CELERY_TASK_TIME_LIMIT = 90
# Celery's Django fixup closes every database connection before and after each task unless this is
# set: a code verdict then paid a new PostgreSQL connection (~8 ms of its ~40). Tasks keep theirs,
# and config/celery_app.py applies Django's own rules instead (CONN_MAX_AGE, health checks).
CELERY_DB_REUSE_MAX = 2**62
# Longer than any task may run, so an unacked message is not redelivered while still running.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
CELERY_TIMEZONE = "UTC"
# Learners' code runs on its own queue, consumed by workers that can reach a Docker Engine
# (`celery -A config worker -Q sandbox`); everything else on the default queue.
CELERY_TASK_ROUTES = {
    "learning.grade_code_attempt": {"queue": Queue.SANDBOX.value},
    "sandbox.reap_containers": {"queue": Queue.SANDBOX.value},
    "precheck.run": {"queue": Queue.SANDBOX.value},
}
CELERY_TASK_REJECT_ON_WORKER_LOST = True  # a worker killed mid-run: the message is redelivered
CELERY_BEAT_SCHEDULE = {
    "sandbox-fail-stuck-attempts": {"task": "learning.fail_stuck_attempts", "schedule": 60.0},
    "sandbox-recover-attempts": {"task": "learning.recover_attempts", "schedule": 10.0},
    "sandbox-reap-containers": {"task": "sandbox.reap_containers", "schedule": 300.0},
    # Nightly, at a quiet hour: every LTI-linked cohort's roster from its platform (NRPS).
    "lti-sync-rosters": {"task": "lti.sync_rosters", "schedule": crontab(hour=3, minute=17)},
    # Instances past their time limit or close: closed_at set and the score sent (apps/assessments/tasks.py).
    "assessments-close-due": {"task": "assessments.close_due", "schedule": 60.0},
    # Scores the LMS is owed (hidden until the close, or retries exhausted): apps/assessments/lti.py.
    "assessments-post-lti-scores": {"task": "assessments.post_lti_scores_due", "schedule": 300.0},
}

# The code sandbox (apps/sandbox). The image is built by deploy/sandbox/build-sandbox-image.sh,
# which tags it mlsys-sandbox:<hash of its inputs> and mlsys-sandbox:latest.
SANDBOX_IMAGE = env.str("SANDBOX_IMAGE", default="mlsys-sandbox:latest")
# Defaults for a code exercise; an exercise's `code.limits` may raise them up to the maxima.
SANDBOX_TIME_LIMIT_S = env.float("SANDBOX_TIME_LIMIT_S", default=10.0)
SANDBOX_MEMORY_MB = env.int("SANDBOX_MEMORY_MB", default=512)
SANDBOX_MAX_TIME_LIMIT_S = 120.0
SANDBOX_MAX_MEMORY_MB = 4096
# The Docker runtime sandbox containers run under: "" (the engine's default, runc) or "runsc"
# (gVisor, registered by scripts/gvisor.sh).
SANDBOX_RUNTIME = env.str("SANDBOX_RUNTIME", default="")
# Pre-started, single-use containers (apps/sandbox/pool.py): this many ready per profile in each
# process that runs code (0 turns the pool off: every run starts a cold container). A pooled
# container unused for SANDBOX_POOL_IDLE_S is replaced; SANDBOX_POOL_FILLERS threads start them.
SANDBOX_POOL_SIZE = env.int("SANDBOX_POOL_SIZE", default=1)
SANDBOX_POOL_IDLE_S = env.float("SANDBOX_POOL_IDLE_S", default=300.0)
SANDBOX_POOL_FILLERS = env.int("SANDBOX_POOL_FILLERS", default=2)
# A platform fault (no Docker, no image) is retried this many times before "not graded".
SANDBOX_RETRIES = env.int("SANDBOX_RETRIES", default=2)
# An attempt RUNNING (or QUEUED) longer than this is failed as "not graded" by the beat task.
SANDBOX_STUCK_AFTER_S = env.float("SANDBOX_STUCK_AFTER_S", default=600.0)
# Nothing accepted is lost (apps/sandbox/services.py: attempts_recover). A running attempt holds a
# lease that its worker renews; when the worker dies the lease runs out and the attempt is queued
# again, at most SANDBOX_MAX_CLAIMS times. A queued attempt nobody claimed within
# SANDBOX_REPUBLISH_AFTER_S is published again (its message may have died with the broker).
SANDBOX_LEASE_S = env.float("SANDBOX_LEASE_S", default=20.0)
SANDBOX_REPUBLISH_AFTER_S = env.float("SANDBOX_REPUBLISH_AFTER_S", default=30.0)
SANDBOX_MAX_CLAIMS = env.int("SANDBOX_MAX_CLAIMS", default=3)
# A ready sandbox worker says so every SANDBOX_HEARTBEAT_S, in a key that lives SANDBOX_READY_TTL_S
# (so a crashed worker stops being counted within that) and in SANDBOX_READY_FILE (its container's
# healthcheck; default: a file per worker name in the temporary directory).
SANDBOX_HEARTBEAT_S = env.float("SANDBOX_HEARTBEAT_S", default=5.0)
SANDBOX_READY_TTL_S = env.int("SANDBOX_READY_TTL_S", default=15)
SANDBOX_READY_FILE = env.str("SANDBOX_READY_FILE", default="")
SANDBOX_READY_NAMESPACE = "sandbox"
# The embedded default (no broker) runs code on this many threads of the web process, at most one
# per CPU (apps/sandbox/inprocess.py); a Celery worker's concurrency is set on its command line.
SANDBOX_IN_PROCESS_WORKERS = env.int("SANDBOX_IN_PROCESS_WORKERS", default=2)

# Email (password resets). With EMAIL_HOST set, SMTP; without it (the embedded default, `make
# run`) each message is written as a file under var/mail/, where a developer can open the link.
# Production without EMAIL_HOST turns resets off instead (config/settings/production.py).
PASSWORD_RESET_BY_EMAIL = True
EMAIL_HOST = env.str("EMAIL_HOST", default="")
EMAIL_PORT = env.int("EMAIL_PORT", default=587)
EMAIL_HOST_USER = env.str("EMAIL_HOST_USER", default="")
EMAIL_HOST_PASSWORD = env.str("EMAIL_HOST_PASSWORD", default="")
EMAIL_USE_TLS = env.bool("EMAIL_USE_TLS", default=True)
EMAIL_TIMEOUT = 10  # seconds: an unreachable SMTP server must not hold a web worker for minutes
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="ML-systems workbooks <noreply@localhost>")
SERVER_EMAIL = DEFAULT_FROM_EMAIL
if EMAIL_HOST:
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
else:
    EMAIL_BACKEND = "django.core.mail.backends.filebased.EmailBackend"
    EMAIL_FILE_PATH = env.str("EMAIL_FILE_PATH", default=str(BASE_DIR / "var" / "mail"))
# A reset link works for an hour, and only once (the token hashes the password it replaces).
PASSWORD_RESET_TIMEOUT = 60 * 60

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env.str("STATIC_ROOT", default=str(BASE_DIR / "var" / "staticfiles")))
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

CONTENT_DIR = Path(env.str("CONTENT_DIR", default=str(BASE_DIR / "fixtures" / "workbooks")))
# Every content root, in order: ours first, then each course's own (a git checkout of its repository,
# each holding <slug>/workbook.yaml folders). Slugs are unique across roots: a clash is an error that
# names both folders (apps.exercises.content.loader.workbook_folders). Separated by ":" (as PATH is).
CONTENT_DIRS = [CONTENT_DIR] + [
    Path(p) for p in env.str("CONTENT_DIRS", default="").split(":") if p and Path(p) != CONTENT_DIR
]
# The authors' edit loop (make content-dev, apps/exercises/devloop.py): pages reload after a content
# change and show a broken file's error. Off by default; production refuses it.
CONTENT_DEV = env.bool("CONTENT_DEV", default=False)

REST_FRAMEWORK: dict[str, Any] = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "apps.accounts.authentication.ExpiringTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "apps.core.pagination.Pagination",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "apps.core.exceptions.api_exception_handler",
    # JSON nested past a fixed depth is refused before parsing (apps/core/parsers.py).
    "DEFAULT_PARSER_CLASSES": [
        "apps.core.parsers.DepthLimitedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    # Proxies in front of the web process that append to X-Forwarded-For. 0 (the default): the
    # client is REMOTE_ADDR and X-Forwarded-For is ignored, so a client cannot pick its own
    # throttle key. Behind one reverse proxy set DJANGO_NUM_PROXIES=1. DRF's own default (None)
    # trusts the whole header. https://www.django-rest-framework.org/api-guide/throttling/#how-clients-are-identified
    "NUM_PROXIES": env.int("DJANGO_NUM_PROXIES", default=0),
    "DEFAULT_THROTTLE_RATES": {
        "attempts": env.str("THROTTLE_ATTEMPTS", default="30/min"),
        "auth": env.str("THROTTLE_AUTH", default="20/min"),
        "preview": env.str("THROTTLE_PREVIEW", default="240/min"),
        # Prechecks run code in the sandbox but count nothing: a budget of their own, apart from submissions.
        "precheck": env.str("THROTTLE_PRECHECK", default="20/min"),
        # Join codes are 31^8; a low rate keeps guessing them hopeless.
        "join": env.str("THROTTLE_JOIN", default="10/min"),
        # Password reset requests (web form): per client, answered with a 429; per email address,
        # silently (the same "check your inbox" page), so the limit reveals no account.
        "password_reset": env.str("THROTTLE_PASSWORD_RESET", default="10/hour"),
        "password_reset_email": env.str("THROTTLE_PASSWORD_RESET_EMAIL", default="3/hour"),
        # Sign-in failures (API token and web login form; apps/accounts/services.py). Per (username,
        # client address): past it, that address may not try that username until the window ends.
        # Per address, over all usernames: past it, the address may try only usernames it has signed
        # in to before. Per username from addresses it has never signed in from: past it, those
        # addresses are slowed (one try per LOGIN_BACKOFF_* delay, doubling), never the owner's own.
        "login_pair": env.str("THROTTLE_LOGIN_PAIR", default="10/hour"),
        "login_address": env.str("THROTTLE_LOGIN_ADDRESS", default="50/hour"),
        "login_username": env.str("THROTTLE_LOGIN_USERNAME", default="10/hour"),
        # Accounts created per client address (web sign-up form).
        "signup": env.str("THROTTLE_SIGNUP", default="10/hour"),
    },
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
}

# API tokens (django-rest-knox): only a hash is stored; a token lasts API_TOKEN_TTL_HOURS from its
# last use (sliding: each use extends it, written at most once a minute) and never past
# API_TOKEN_MAX_AGE_DAYS after sign-in; a password change revokes them all (apps/accounts/signals.py).
API_TOKEN_TTL_HOURS = env.int("API_TOKEN_TTL_HOURS", default=24)
API_TOKEN_MAX_AGE_DAYS = env.int("API_TOKEN_MAX_AGE_DAYS", default=30)
API_TOKENS_PER_USER = env.int("API_TOKENS_PER_USER", default=10)  # past it, the longest idle one ends
REST_KNOX = {
    "TOKEN_TTL": timedelta(hours=API_TOKEN_TTL_HOURS),
    "AUTO_REFRESH": True,
    "AUTO_REFRESH_MAX_TTL": timedelta(days=API_TOKEN_MAX_AGE_DAYS),
    "MIN_REFRESH_INTERVAL": 60,
    "AUTH_HEADER_PREFIX": "Token",
}
# Sign-in slowing (see "login_username" above): the n-th try past the limit waits
# LOGIN_BACKOFF_BASE_S * 2**n seconds, at most LOGIN_BACKOFF_MAX_S. An address a user signed in from
# is remembered LOGIN_KNOWN_ADDRESS_DAYS (in the cache) and is never slowed for that user.
LOGIN_BACKOFF_BASE_S = env.int("LOGIN_BACKOFF_BASE_S", default=15)
LOGIN_BACKOFF_MAX_S = env.int("LOGIN_BACKOFF_MAX_S", default=900)
LOGIN_KNOWN_ADDRESS_DAYS = env.int("LOGIN_KNOWN_ADDRESS_DAYS", default=30)

SPECTACULAR_SETTINGS = {
    "TITLE": "ML-systems workbooks API",
    "DESCRIPTION": (
        "Workbooks of ML-systems derivations with instant grading. Authenticate with a token from "
        "`POST /api/v1/auth/token/` and send `Authorization: Token <key>`. A token expires: on this "
        f"server it lasts {API_TOKEN_TTL_HOURS} hours from its last use and at most {API_TOKEN_MAX_AGE_DAYS} "
        "days from sign-in (the response's `expiry` and `max_expiry` say when); then, or once the account's "
        "password changes, it is refused with 401 and the client signs in again. `DELETE /api/v1/auth/token/` "
        "revokes the token sent, `DELETE /api/v1/auth/tokens/` every token of the account."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # Bodies are documented as JSON only: the form parsers stay for the browsable cases, but a
    # form body carries every value as a string, which no typed schema describes.
    "PARSER_WHITELIST": ["apps.core.parsers.DepthLimitedJSONParser"],
    # What holds for every operation (401, 404, 503, Retry-After, path examples): apps/core/schema.py.
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums", "apps.core.schema.postprocess"],
    "ENUM_NAME_OVERRIDES": {
        "AssessmentKindEnum": "apps.assessments.models.Kind",
        "AssessmentStateEnum": "apps.assessments.serializers.STATES",
        "VerdictEnum": "apps.exercises.models.Verdict",
        "ExerciseKindEnum": "apps.exercises.models.ExerciseKind",
        "AnswerFormatEnum": "apps.exercises.models.AnswerFormat",
        "PrecheckStatusEnum": "apps.precheck.records.PrecheckStatus",
        "StatusEnum": "apps.exercises.choices.AttemptStatus",  # its name before prechecks had a status too
    },
}

LOGGING: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"kv": {"()": "apps.core.logging.KeyValueFormatter"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "kv"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}

# LTI 1.3 (apps/lti, docs/lti.md). A learner's grade is posted to the platform at most once per
# LTI_SCORE_COALESCE_S per (learner, link): a burst of solves costs one AGS request, which reads
# mastery when it runs. Clock skew allowed on an id_token's iat/exp/nbf; the single-use link that
# opens a launch in a new window (out of the LMS iframe) lives LTI_CONTINUE_TTL_S.
LTI_SCORE_COALESCE_S = env.int("LTI_SCORE_COALESCE_S", default=10)
LTI_SCORE_RETRIES = env.int("LTI_SCORE_RETRIES", default=5)
LTI_JWT_LEEWAY_S = env.int("LTI_JWT_LEEWAY_S", default=30)
LTI_CONTINUE_TTL_S = env.int("LTI_CONTINUE_TTL_S", default=120)
# Platform key sets (JWKS) are cached this long; a kid not in the cached set refetches once.
LTI_KEYSET_CACHE_S = env.int("LTI_KEYSET_CACHE_S", default=3600)
# Timeout (seconds) for calls to a platform (token, AGS, NRPS, JWKS).
LTI_HTTP_TIMEOUT_S = env.float("LTI_HTTP_TIMEOUT_S", default=10.0)
