"""The precheck on the exercise page without JavaScript: the Precheck button posts the code form, the
page of that precheck follows (a reload brings it up to date), and nothing is counted."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from django.test import Client

from apps.accounts.models import User
from apps.exercises.models import Attempt
from apps.precheck.records import NOTE
from apps.sandbox.tests.worker import WorkerProcess

pytestmark = pytest.mark.slow
PAGE = "/w/transformer-math/0.6/"  # a Debug: the Precheck is in its fix's form (a Build's: tests/e2e)
WRONG = "def param_count(d, n_layers, vocab_size):\n    return 13\n"


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_form_posts_a_precheck_and_the_page_shows_it(
    student: User, other_student: User, sandbox_worker: WorkerProcess, settings: Any
) -> None:
    # One precheck a day, for the end of this test (a day, so that no window ends between the two).
    rates = {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "precheck": "1/day"}
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}
    client = _client(student)
    page = client.get(PAGE).content.decode()
    assert re.search(r'<form[^>]*id="fix-form".*name="precheck"', page, re.S)
    assert f"{NOTE}." in page and 'id="precheck-result"' in page
    assert 'name="precheck"' not in client.get("/w/transformer-math/1.1/").content.decode()  # a number: none

    posted = client.post(PAGE, {"action": "submit", "precheck": "1", "code": WRONG})
    assert posted.status_code == 302
    match = re.fullmatch(re.escape(PAGE) + r"\?precheck=([0-9a-f-]{36})#precheck-result", posted["Location"])
    assert match is not None, posted["Location"]
    shown = posted["Location"].split("#")[0]
    deadline = time.monotonic() + 90
    body = client.get(shown).content.decode()
    while "data-precheck-url" in body and time.monotonic() < deadline:  # pending: a reload later
        assert "Reload this page in a moment" in body
        time.sleep(0.1)
        body = client.get(shown).content.decode()
    assert "✗ Precheck: not yet" in body and NOTE in body
    assert "param_count(768, 12, 50257)" in body and "expected <code>123532032</code>, got <code>13</code>" in body
    assert "return 13" in body  # the code it checked stays in the editor
    assert '<span id="attempt-count">0</span>' in body
    assert not Attempt.objects.filter(user=student).exists()

    # Someone else's precheck id shows nothing of it.
    theirs = _client(other_student).get(shown).content.decode()
    assert "Precheck: not yet" not in theirs and "return 13" not in theirs

    # Past the precheck's own rate, the page says so and nothing runs.
    refused = client.post(PAGE, {"action": "submit", "precheck": "1", "code": WRONG})
    assert refused.status_code == 429
    assert "The precheck did not run — nothing was counted." in refused.content.decode()
    assert "Too many prechecks" in refused.content.decode()
