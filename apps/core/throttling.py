"""A fixed-window rate limit that costs one cache round trip.

DRF's SimpleRateThrottle keeps a list of timestamps per client (a sliding window): a read and a
write per request. On the grading hot path that was a measurable share of the time, so this
throttle counts requests per (scope, user, window) with one pipelined INCR + EXPIRE on Redis.
Without Redis (the embedded default) it falls back to the cache API (add + incr).
"""

from __future__ import annotations

import time

from django.core.cache import cache
from rest_framework.request import Request
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from apps.core.redis import full_key, shared_client


class FixedWindowScopedThrottle(ScopedRateThrottle):
    """Same configuration as ScopedRateThrottle (``throttle_scope`` + DEFAULT_THROTTLE_RATES)."""

    def allow_request(self, request: Request, view: APIView) -> bool:
        self.scope = getattr(view, self.scope_attr, None)
        if not self.scope:
            return True
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        if self.num_requests is None or self.duration is None:
            return True
        ident = self.get_cache_key(request, view)
        if ident is None:
            return True
        now = time.time()
        window = int(now // self.duration)
        self.window_end = (window + 1) * self.duration
        self.now = now
        count = count_in_window(f"{ident}:{window}", self.duration)
        return count <= self.num_requests

    def wait(self) -> float | None:
        return max(0.0, self.window_end - self.now)


def count_in_window(key: str, ttl: int) -> int:
    """Count one more hit on ``key`` (a key per window) and return the window's count."""
    client = shared_client()
    if client is not None:
        name = full_key(key)
        pipe = client.pipeline(transaction=False)
        pipe.incr(name)
        pipe.expire(name, ttl + 1)
        count, _ = pipe.execute()
        return int(count)
    cache.add(key, 0, ttl + 1)
    try:
        return int(cache.incr(key))
    except ValueError:  # expired between add and incr
        cache.set(key, 1, ttl + 1)
        return 1
