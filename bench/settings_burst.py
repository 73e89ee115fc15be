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

import atexit
import cProfile
import os
import time
from pathlib import Path
from typing import Any

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

# ---- profiling (bench/burst.py --profile) ---------------------------------------------------------
# With BENCH_PROFILE_DIR set, each web process profiles the two requests of the variant path under
# cProfile (the exercise's GET and the grading POST, as the first middleware: authentication and
# all) and writes its statistics there every 50 requests of a kind, and at exit. The clock is the
# process's CPU time, so that a busy machine (other processes running in between) does not
# inflate it: waits (SQL round trips, Redis) count only the CPU they use in this process.
# Deterministic profiling roughly doubles the time of Python-heavy code: a profiled run is for
# where the time goes, never for the latencies reported.
PROFILE_DIR = env.str("BENCH_PROFILE_DIR", default="")


class ProfileVariantPath:
    """Django middleware: cProfile around the exercise GET and the attempt POST, per process."""

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response
        self.profiles: dict[str, cProfile.Profile] = {}
        self.counts: dict[str, int] = {}
        atexit.register(self.dump)

    @staticmethod
    def kind(request: Any) -> str | None:
        path = request.path
        if "/exercises/" not in path:
            return None
        if request.method == "POST" and path.endswith("/attempts/"):
            return "post"
        if request.method == "GET" and path.count("/") == 7:  # /api/v1/workbooks/<slug>/exercises/<number>/
            return "get"
        return None

    def __call__(self, request: Any) -> Any:
        kind = self.kind(request)
        if kind is None:
            return self.get_response(request)
        profile = self.profiles.setdefault(kind, cProfile.Profile(time.process_time))
        profile.enable()
        try:
            return self.get_response(request)
        finally:
            profile.disable()
            self.counts[kind] = self.counts.get(kind, 0) + 1
            if self.counts[kind] % 50 == 0:
                self.dump()

    def dump(self) -> None:
        for kind, profile in self.profiles.items():
            profile.dump_stats(Path(PROFILE_DIR) / f"{kind}-{os.getpid()}-{self.counts.get(kind, 0)}.prof")
            # Each dump holds everything so far: older ones of this process are superseded.
            for old in Path(PROFILE_DIR).glob(f"{kind}-{os.getpid()}-*.prof"):
                if old.name != f"{kind}-{os.getpid()}-{self.counts.get(kind, 0)}.prof":
                    old.unlink(missing_ok=True)


if PROFILE_DIR:
    MIDDLEWARE = ["bench.settings_burst.ProfileVariantPath", *MIDDLEWARE]  # noqa: F405
