"""Settings for bench/burst.py: the test settings (real PostgreSQL and Redis, DEBUG off, throttle
rates high enough that the limiter never answers 429 and does not dominate), with two changes:

- every database session the web and worker processes open has ``lock_timeout`` (default 1 s,
  ``BENCH_LOCK_TIMEOUT_MS``): a lock wait longer than that fails its request instead of waiting,
  so zero errors in the run proves no lock wait went over it. ``deadlock_timeout`` is lowered
  (``BENCH_DEADLOCK_TIMEOUT_MS``, default 200 ms) so that a deadlock is detected, and counted in
  ``pg_stat_database.deadlocks``, before the lock timeout would hide it as a plain timeout;
- connections are kept across requests as in production (``CONN_MAX_AGE``; the test settings
  open one per request).

https://www.postgresql.org/docs/15/runtime-config-client.html#GUC-LOCK-TIMEOUT
https://www.postgresql.org/docs/15/runtime-config-locks.html#GUC-DEADLOCK-TIMEOUT
"""

from config.env import env
from config.settings.test import *  # noqa: F403

LOCK_TIMEOUT_MS = env.int("BENCH_LOCK_TIMEOUT_MS", default=1000)
DEADLOCK_TIMEOUT_MS = env.int("BENCH_DEADLOCK_TIMEOUT_MS", default=200)

DATABASES["default"]["OPTIONS"] = {  # noqa: F405
    **DATABASES["default"].get("OPTIONS", {}),  # noqa: F405
    # libpq's `options`: run-time parameters set when each session starts.
    "options": f"-c lock_timeout={LOCK_TIMEOUT_MS} -c deadlock_timeout={DEADLOCK_TIMEOUT_MS}",
}
DATABASES["default"]["CONN_MAX_AGE"] = 60  # noqa: F405
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True  # noqa: F405
ALLOWED_HOSTS = ["127.0.0.1"]
