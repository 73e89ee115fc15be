"""Issue 30's small slips on the learner's pages and their API, without JavaScript: the unit note, a
Debug's lines verdict by its own button, a multi-part check's unread part and uncounted checks, the
preview of formula parts and table cells, and the "Reviews" link with its count.
(tests/e2e/test_slips.py drives the same in Chromium at 1280 and 390 px.)"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from apps.accounts.models import User
from apps.exercises.models import Attempt, Exercise
from apps.exercises.tests.answers import correct_payload, on_seed_numbers, resolved_for
from apps.learning.tests.helpers import client_for
from apps.progress.models import ReviewCard

pytestmark = pytest.mark.django_db


def exercise(slug: str, number: str) -> Exercise:
    return Exercise.objects.select_related("current_version", "workbook", "chapter").get(
        workbook__slug=slug, number=number
    )


def api_url(slug: str, number: str, action: str = "") -> str:
    return f"/api/v1/workbooks/{slug}/exercises/{number}/" + (f"{action}/" if action else "")


def page(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def region(html: str, element_id: str) -> str:
    """The inner HTML of the div with this id (no nested divs of the same id)."""
    start = html.index(f'id="{element_id}"')
    body = html[html.index(">", start) + 1 :]
    depth, i = 1, 0
    for m in re.finditer(r"<div\b|</div>", body):
        depth += 1 if m.group(0) == "<div" else -1
        if depth == 0:
            i = m.start()
            break
    return body[:i]


def test_a_unitless_answer_field_says_how_it_reads_a_number(make_user: Callable[..., User]) -> None:
    user = make_user()
    body = client_for(user).get(api_url("transformer-math", "1.4")).json()
    assert body["widget"]["input_unit"] == ""
    assert body["widget"]["unit_note"] == "no unit needed; 25% reads as 0.25"
    html = page(user).get("/w/transformer-math/1.4/").content.decode()
    assert '<span class="unit-hint">(no unit needed; 25% reads as 0.25)</span>' in html
    assert "read in ;" not in html


def test_a_debug_lines_verdict_sits_by_its_button_above_the_fix(make_user: Callable[..., User]) -> None:
    user = make_user()
    e = exercise("transformer-math", "0.6")  # a Debug: buggy lines, then the fix
    lines = correct_payload(e, user)["lines"]
    html = page(user).post("/w/transformer-math/0.6/", {"action": "submit", "lines": lines}).content.decode()
    mine = region(html, "lines-feedback")
    assert "✓ Correct" in mine
    assert html.index('id="lines-feedback"') < html.index('id="fix-form"')
    assert "✓ Correct" not in region(html, "feedback")  # not repeated below the fix's editor


def test_parts_an_unread_part_is_named_and_an_uncounted_check_is_listed_as_such(
    make_user: Callable[..., User],
) -> None:
    user = make_user()
    api = client_for(user)
    slug, number = "scaling-book", "5.4"  # a formula part and two numeric parts
    e = exercise(slug, number)
    on_seed_numbers(user, e)
    right = correct_payload(e, user)["parts"]
    formula = next(k for k, t in resolved_for(e, user).parts.items() if not hasattr(t, "sig_figs"))
    # An expression that does not parse: named, no attempt, and which field it was.
    bad = api.post(api_url(slug, number, "attempts"), {"parts": {formula: "2C^"}}, format="json")
    assert bad.status_code == 400
    error = bad.json()["error"]
    assert error["details"]["field"] == formula
    assert error["message"].startswith("N* as a formula in C: ")  # the label's plain reading, not its TeX
    # One part right, the rest left for later: kept, not counted, and listed as such.
    partial = api.post(api_url(slug, number, "attempts"), {"parts": {formula: right[formula]}}, format="json")
    assert partial.status_code == 201
    assert (partial.json()["counted"], partial.json()["listed_as"]) == (False, "check (not counted)")
    listed = api.get(f"/api/v1/attempts/?workbook={slug}").json()["results"]
    assert [a["listed_as"] for a in listed if a["exercise"] == number] == ["check (not counted)"]
    html = page(user).get(f"/w/{slug}/{number}/").content.decode()
    history = html[html.index("Your recent attempts") :]
    assert "check (not counted)" in history and "✗" not in history
    assert Attempt.objects.filter(user=user, exercise=e).count() == 1
    # Part labels are rendered as math on the page, never shown as raw TeX.
    assert "$N^*$" not in html and "<math" in html[html.index('for="part-') :]


def test_formula_parts_and_table_cells_have_a_preview(make_user: Callable[..., User]) -> None:
    api = client_for(make_user())
    e = exercise("scaling-book", "5.4")
    formula = next(k for k, t in resolved_for(e).parts.items() if not hasattr(t, "sig_figs"))
    read = api.post(api_url("scaling-book", "5.4", "preview"), {"answer": "0.09*C^0.5", "field": formula})
    assert read.status_code == 200
    assert read.json()["value"] is None and "C" in read.json()["understood"]
    unread = api.post(api_url("scaling-book", "5.4", "preview"), {"answer": "2C", "field": formula})
    assert unread.status_code == 400 and "2*C" in unread.json()["error"]["message"]
    table = exercise("transformer-math", "8.5")
    cell = next(iter(resolved_for(table).cells))
    cell_read = api.post(api_url("transformer-math", "8.5", "preview"), {"answer": "1.5", "field": cell})
    assert cell_read.status_code == 200 and cell_read.json()["understood"].startswith("1.5 B params")
    html = page(make_user()).get("/w/transformer-math/8.5/").content.decode()
    assert f'data-preview-field="{cell}"' in html and f'id="cell-{cell}-preview"' in html
    assert '<th scope="col" role="columnheader"><math' in html  # "$d_k$" rendered, not "d_k"


def test_the_navigation_links_reviews_with_the_count_due_today(make_user: Callable[..., User]) -> None:
    user = make_user()
    client = page(user)
    html = client.get("/").content.decode()
    assert '<a href="/reviews/">Reviews</a>' in html  # nothing due: no count
    e = exercise("transformer-math", "0.1")
    api = client_for(user)
    assert api.post(api_url("transformer-math", "0.1", "attempts"), correct_payload(e, user), format="json").json()[
        "correct"
    ]
    ReviewCard.objects.filter(user=user).update(due_at=timezone.now() - timedelta(hours=1))
    html = client.get("/w/transformer-math/").content.decode()
    assert '<span class="nav-count">1</span><span class="sr-only"> due today</span>' in html
    assert 'href="/reviews/" aria-current="page"' in client.get("/reviews/").content.decode()
