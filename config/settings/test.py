"""Test settings: real PostgreSQL and Redis (started by scripts/services.sh), tuned for speed."""

from urllib.parse import urlsplit

from config.env import env
from config.settings.base import *  # noqa: F403

DATABASES = {"default": env.db_url_config(env.str("DATABASE_URL", default="postgres://mlsys@127.0.0.1:54329/mlsys"))}
REDIS_URL = env.str("REDIS_URL", default="redis://127.0.0.1:63799/0")
# pytest-xdist runs the suite on several workers at once (gw0, gw1, ...). Each has a database of its
# own (pytest-django names it test_<name>_gw<N>) and here Redis databases of its own: worker N's
# cache on 2N and its broker on 2N+1 above the given one, so that one worker clearing its cache or
# its sandbox worker taking a task never touches another's. Processes a worker starts (its sandbox
# worker) inherit PYTEST_XDIST_WORKER and so land on the same databases.
XDIST_WORKER = env.str("PYTEST_XDIST_WORKER", default="")
_redis = urlsplit(REDIS_URL)
_cache_db = int(_redis.path.strip("/") or 0) + 2 * int(XDIST_WORKER.removeprefix("gw") or 0)
REDIS_URL = _redis._replace(path=f"/{_cache_db}").geturl()
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "test",
        "OPTIONS": REDIS_CLIENT_OPTIONS,
    }
}
# The broker on its own Redis database: clearing the cache between tests must not drop messages.
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default=_redis._replace(path=f"/{_cache_db + 1}").geturl())
CELERY_TASK_ALWAYS_EAGER = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast; tests only
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
DEBUG = False
LOGGING["root"]["level"] = "WARNING"
# Tests submit many attempts in a row; the throttle itself is tested with a patched rate.
REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"] = {
    **REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
    "attempts": "100000/min",
    "preview": "100000/min",
    "auth": "100000/min",
}
# No collected static files in tests; WhiteNoise would warn about the missing STATIC_ROOT.
MIDDLEWARE = [m for m in MIDDLEWARE if not m.startswith("whitenoise")]
