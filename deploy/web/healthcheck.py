#!/usr/bin/env python3
"""Container healthchecks of the Django image (docker-compose.yml wires them).

  mlsys-healthcheck          web: GET /api/schema/ on the local gunicorn answers 200.
  mlsys-healthcheck sandbox  sandbox worker: the file SANDBOX_READY_FILE (default
                             /tmp/mlsys-sandbox-ready) exists and is under SANDBOX_READY_MAX_AGE_S
                             (default 20) seconds old. A worker that passed its self-test touches it
                             every 5 s and removes it when it stops being ready (apps/sandbox/health.py),
                             so a missing or stale file means no code is being graded here.

web uses the first DJANGO_ALLOWED_HOSTS entry as Host and says it came over HTTPS (the production
settings trust X-Forwarded-Proto), so neither the host check nor the SSL redirect gets in the way.
"""

import http.client
import os
import sys
import time


def web() -> int:
    host = os.environ.get("DJANGO_ALLOWED_HOSTS", "localhost").split(",")[0].strip().lstrip(".") or "localhost"
    try:
        conn = http.client.HTTPConnection("127.0.0.1", 8000, timeout=5)
        conn.request("GET", "/api/schema/", headers={"Host": host, "X-Forwarded-Proto": "https"})
        status = conn.getresponse().status
    except OSError as exc:
        print(f"unhealthy: {exc}")
        return 1
    print(f"GET /api/schema/ -> {status}")
    return 0 if status == 200 else 1


def sandbox() -> int:
    path = os.environ.get("SANDBOX_READY_FILE") or "/tmp/mlsys-sandbox-ready"  # noqa: S108 - the container's own /tmp
    max_age = float(os.environ.get("SANDBOX_READY_MAX_AGE_S", "20"))
    try:
        age = time.time() - os.stat(path).st_mtime
    except FileNotFoundError:
        print(f"unhealthy: {path} is missing (self-test not passed, or the worker stopped being ready)")
        return 1
    if age >= max_age:
        print(f"unhealthy: {path} is {age:.0f}s old (the worker's heartbeat stopped)")
        return 1
    print(f"ready ({path} {age:.0f}s old)")
    return 0


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "web"
    checks = {"web": web, "sandbox": sandbox}
    if mode not in checks:
        print(f"usage: mlsys-healthcheck [{'|'.join(checks)}]", file=sys.stderr)
        sys.exit(2)
    sys.exit(checks[mode]())
