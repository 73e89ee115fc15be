"""Settings for the grading benchmark: production-like (DEBUG off, real PostgreSQL and Redis),
with the baseline views mounted and the attempt throttle out of the way."""

from config.settings.base import *  # noqa: F403

DEBUG = False
ROOT_URLCONF = "bench.urls"
ALLOWED_HOSTS = ["127.0.0.1"]
REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"] = {  # noqa: F405
    **REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],  # noqa: F405
    "attempts": "10000000/min",
}
LOGGING["root"]["level"] = "WARNING"  # noqa: F405
