#!/usr/bin/env python3
"""Container healthcheck for the web service: GET /api/schema/ on the local gunicorn.

Uses the first DJANGO_ALLOWED_HOSTS entry as Host and says it came over HTTPS (the production
settings trust X-Forwarded-Proto), so neither the host check nor the SSL redirect gets in the way.
"""

import http.client
import os
import sys

host = os.environ.get("DJANGO_ALLOWED_HOSTS", "localhost").split(",")[0].strip().lstrip(".") or "localhost"
try:
    conn = http.client.HTTPConnection("127.0.0.1", 8000, timeout=5)
    conn.request("GET", "/api/schema/", headers={"Host": host, "X-Forwarded-Proto": "https"})
    status = conn.getresponse().status
except OSError as exc:
    print(f"unhealthy: {exc}")
    sys.exit(1)
print(f"GET /api/schema/ -> {status}")
sys.exit(0 if status == 200 else 1)
