"""Content-Security-Policy reports: a browser that refused something our CSP forbids POSTs a report
here (``report-uri`` in config/settings/base.py). Each is logged at WARNING on ``apps.core.csp``,
where operators see an attack or a page we broke; the XSS corpus in tests/xss fails on any.

Anyone can post here, so a report is only logged, bounded in size and in rate per address (past
REPORTS_PER_MINUTE the rest of the minute's reports are dropped), and never rendered anywhere.
"""

from __future__ import annotations

import json
import logging
import time

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from apps.core.throttling import RateLimitUnavailable, count_in_window

logger = logging.getLogger(__name__)

MAX_REPORT_BYTES = 16 * 1024
REPORTS_PER_MINUTE = 60
# The fields of a report worth a log line (report-uri's "csp-report" and report-to's "body").
FIELDS = ("document-uri", "documentURL", "violated-directive", "effectiveDirective", "effective-directive",
          "blocked-uri", "blockedURL", "source-file", "sourceFile", "line-number", "lineNumber", "script-sample",
          "sample")  # fmt: skip


def _reports(raw: bytes) -> list[dict[str, str]]:
    try:
        body = json.loads(raw)
    except ValueError:
        return []
    items = body if isinstance(body, list) else [body]
    out = []
    for item in items:
        if not isinstance(item, dict):
            continue
        report = item.get("csp-report", item.get("body", item))
        if isinstance(report, dict):
            out.append({k: str(report[k])[:300] for k in FIELDS if k in report})
    return out


@csrf_exempt
@require_POST
def csp_report(request: HttpRequest) -> HttpResponse:
    raw = request.read(MAX_REPORT_BYTES + 1)
    if len(raw) > MAX_REPORT_BYTES:
        return HttpResponse(status=413)
    window = int(time.time() // 60)
    try:
        if count_in_window(f"csp-report:{request.META.get('REMOTE_ADDR', '')}:{window}", 60) > REPORTS_PER_MINUTE:
            return HttpResponse(status=429)
    except RateLimitUnavailable:
        pass  # reports are advisory: log them while Redis is away
    for report in _reports(raw)[:10]:
        logger.warning("csp violation %s", json.dumps(report, sort_keys=True))
    return HttpResponse(status=204)
