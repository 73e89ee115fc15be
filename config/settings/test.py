"""Test settings: real PostgreSQL and Redis (started by scripts/services.sh), tuned for speed."""

from config.env import env
from config.settings.base import *  # noqa: F403

DATABASES = {"default": env.db_url_config(env.str("DATABASE_URL", default="postgres://mlsys@127.0.0.1:54329/mlsys"))}
REDIS_URL = env.str("REDIS_URL", default="redis://127.0.0.1:63799/0")
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "test",
    }
}
CELERY_BROKER_URL = REDIS_URL
CELERY_TASK_ALWAYS_EAGER = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast; tests only
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
DEBUG = False
LOGGING["root"]["level"] = "WARNING"
