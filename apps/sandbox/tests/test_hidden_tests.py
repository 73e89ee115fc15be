"""Hidden tests stay hidden: a lookup of everything a learner can see passes no code exercise.

For every Build and every Debug's fix, through the real API and the real sandbox worker: the
learner reads the page (the prompt's examples) and submits a first wrong attempt, reads its
result, then submits code that hard-codes every call it has seen with its expected value (and,
for any other call, the first example's value: a plausible default). It must not pass: the hidden
tests' inputs and expected values never reached the learner, and the random ones are drawn
afresh for each attempt anyway. The attempts of all exercises are queued together, in two rounds.
"""

from __future__ import annotations

import html
import json
import time
from functools import partial
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from apps.exercises.choices import AttemptStatus
from apps.exercises.content import cache as content_cache
from apps.exercises.models import Exercise
from apps.sandbox.tests.conftest import Sandbox

# About a minute and a half (38 attempts, one worker): a long test, on an xdist worker of its own.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("hidden")]

WORKBOOKS = ("transformer-math", "lm-from-scratch", "systems-serving", "scaling-book")
LEARNER_ROW_KEYS = {"label", "example", "passed", "category", "message"}


def _coded() -> list[tuple[str, str, list[str]]]:
    """(workbook, number, the hidden tests' ids) of every active exercise with code."""
    found = []
    for ex in Exercise.objects.filter(workbook__slug__in=WORKBOOKS, is_active=True).select_related(
        "workbook", "current_version"
    ):
        if ex.current_version is None:
            continue
        code = content_cache.resolved(ex.current_version).spec.code
        if code is not None:
            found.append((ex.workbook.slug, ex.number, [c.id for c in code.cases if not c.example]))
    return sorted(found)


def _lookup(entry: str, seen: list[tuple[str, str]], pairs: list[tuple[Any, Any]]) -> str:
    """A learner's hard-coded solution: each call seen (as data, and as the text a result shows it
    in) returns its expected value; anything else returns the first example's value."""
    table = {json.dumps(key, sort_keys=True): json.dumps(value) for key, value in pairs}
    texts = dict(seen)
    default = json.dumps(pairs[0][1]) if pairs else "null"
    return f'''import json

TABLE = {table!r}
TEXTS = {texts!r}
DEFAULT = {default!r}


def _short(value, cap):
    text = json.dumps(value)
    return text if len(text) <= cap else text[: cap - 1] + "\\u2026"


def {entry}(*args, **kwargs):
    key = json.dumps([list(args), kwargs], sort_keys=True)
    if key in TABLE:
        return json.loads(TABLE[key])
    parts = [_short(a, 80) for a in args] + [k + "=" + _short(v, 80) for k, v in kwargs.items()]
    call = "{entry}(" + ", ".join(parts) + ")"
    if call in TEXTS:
        try:
            return json.loads(TEXTS[call])
        except ValueError:
            pass
    return json.loads(DEFAULT)
'''


def _poll_all(client: APIClient, urls: dict[str, str], timeout: float = 300.0) -> dict[str, dict[str, Any]]:
    done: dict[str, dict[str, Any]] = {}
    deadline = time.monotonic() + timeout
    while len(done) < len(urls) and time.monotonic() < deadline:
        for key, url in urls.items():
            if key not in done:
                body = client.get(url).json()
                if body["status"] in (AttemptStatus.GRADED, AttemptStatus.NOT_GRADED):
                    done[key] = body
        time.sleep(0.1)
    assert len(done) == len(urls), f"not graded in time: {sorted(set(urls) - set(done))}"
    return done


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def test_a_lookup_of_everything_a_learner_sees_passes_no_code_exercise(sandbox: Sandbox) -> None:
    api, web = APIClient(), Client()
    api.force_authenticate(sandbox.user)
    # Logging in writes the user's row: on the committed connection, which cleans up afterwards.
    sandbox._committed(lambda: web.force_login(sandbox.user))
    coded = _coded()
    assert len(coded) >= 19, coded  # every Build and Debug of the workbooks
    entries: dict[str, str] = {}
    pairs: dict[str, list[tuple[Any, Any]]] = {}
    seen: dict[str, list[tuple[str, str]]] = {}
    hidden: dict[str, list[str]] = {}
    for slug, number, hidden_ids in coded:
        key = f"{slug} {number}"
        widget = api.get(f"/api/v1/workbooks/{slug}/exercises/{number}/").json()["widget"]
        code_widget = widget.get("fix") or widget
        entries[key], hidden[key] = code_widget["entry"], hidden_ids
        examples = code_widget["examples"]
        assert examples, key
        # The page shows the same examples, with the prompt.
        page = sandbox._committed(partial(web.get, reverse("web:exercise", args=[slug, number]))).content.decode()
        for e in examples:
            assert html.escape(e["call"][:40]) in page, (key, e["call"])
        pairs[key] = [([e["args"], e["kwargs"]], e["returns"]) for e in examples]
        seen[key] = []

    def submit_all() -> dict[str, dict[str, Any]]:
        urls = {}
        for slug, number, _ in coded:
            key = f"{slug} {number}"
            source = _lookup(entries[key], seen[key], pairs[key])
            post = partial(api.post, f"/api/v1/workbooks/{slug}/exercises/{number}/attempts/", {"code": source},
                           format="json")  # fmt: skip
            response = sandbox._committed(post)
            assert response.status_code == 202, (key, response.json())
            urls[key] = response.json()["url"]
        return _poll_all(api, urls)

    # Round one: a lookup of the examples alone (a first, wrong attempt), and what its result shows.
    first = submit_all()
    for key, body in first.items():
        assert body["status"] == AttemptStatus.GRADED and not body["correct"], (key, body["feedback"])
        tests = body["details"]["tests"]
        assert [t["passed"] for t in tests] == sorted(t["passed"] for t in tests), key  # failing first
        for t in tests:
            if t["example"]:
                seen[key].append((t["call"], t["expected"]))
            else:
                assert set(t) == LEARNER_ROW_KEYS, (key, t)  # a label and why: no call, input or value
        # No hidden test's id is anywhere in what the learner gets back (nor the seed, nor the draw).
        assert not set(hidden[key]) & set(_strings(body)), key
        assert "draw" not in body["details"], key
    # Round two: everything seen so far, hard-coded. Still no pass.
    second = submit_all()
    passed = [key for key, body in second.items() if body["correct"]]
    assert passed == [], passed
    assert all(body["status"] == AttemptStatus.GRADED for body in second.values())
