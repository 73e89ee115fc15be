"""The item-analysis pages in the admin: the list of exercises an instructor or author may
analyse, and each exercise's page (figures, variants, mistakes) under the page's strict CSP;
another instructor's cohort is a 404 and learners never reach the admin."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from django.test import Client
from django.urls import reverse

from apps.accounts.models import Role, User
from apps.exercises.models import Exercise, Workbook
from apps.itemstats.tests.conftest import Learner
from apps.progress.models import Cohort
from apps.progress.services import cohorts as cohort_services

pytestmark = pytest.mark.django_db


def client_for(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def page(item: Exercise) -> str:
    return reverse("admin:itemstats_analysis", args=[item.pk])


def cells(html: str, table: str) -> list[list[str]]:
    """The rows of the table with this id, as the text of their cells."""
    body = html.split(f'id="{table}"', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr>(.*?)</tr>", body, flags=re.S)
    return [
        [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r, re.S)] for r in rows
    ]


def test_instructor_page(item: Exercise, cohort: Cohort, instructor: User, class_of_five: dict[str, Learner]) -> None:
    response = client_for(instructor).get(page(item))  # their one cohort is chosen
    assert response.status_code == 200
    html = response.content.decode()
    assert "Over the learners of ML systems, fall: 5 engaged (1 revealed without answering" in html
    assert cells(html, "itemstats-summary")[1] == [
        "5", "1 (20%)", "2 (40%)", "2 (40%)", "1.5 / 1.5", "0.3273", "3 of 7 (43%)",
    ]  # fmt: skip
    variants = cells(html, "itemstats-variants")[1:]
    assert [row[:3] for row in variants] == [["a = 3", "2", "0 (0%)"], ["a = 2", "2", "1 (50%)"]]
    assert variants[0][-1] == "#0 ×1; #1 ×1"
    mistakes = cells(html, "itemstats-mistakes")[1:]
    assert mistakes[0] == ["#0 (v1)", "a + b", "Added instead of multiplied.", "2", "50%"]
    # No inline script or style: the strict CSP holds (the stylesheet is a static file).
    assert "<script>" not in html and "style=" not in html
    assert "script-src 'self'" in response.headers["Content-Security-Policy"]


def test_the_list_shows_only_assigned_workbooks(
    item: Exercise, workbook: Workbook, cohort: Cohort, instructor: User, make_user: Callable[..., User]
) -> None:
    listing = client_for(instructor).get(reverse("admin:itemstats_itemanalysis_changelist"))
    assert listing.status_code == 200
    html = listing.content.decode()
    assert page(item) in html
    elsewhere = Exercise.objects.filter(workbook__slug="transformer-math", is_active=True).first()
    assert elsewhere is not None
    assert page(elsewhere) not in html  # a workbook none of their cohorts was assigned
    assert elsewhere.workbook.title not in html  # nor offered in the workbook filter
    assert html.count("/analysis/") == 3  # the workbook's three exercises
    # A row's own page is its analysis.
    change = client_for(instructor).get(reverse("admin:itemstats_itemanalysis_change", args=[item.pk]))
    assert change.status_code == 302 and change.headers["Location"] == page(item)
    # An instructor with no cohort lists nothing.
    loner = make_user("loner", role=Role.INSTRUCTOR)
    assert page(item) not in client_for(loner).get(reverse("admin:itemstats_itemanalysis_changelist")).content.decode()


def test_author_page_every_learner(item: Exercise, author: User, class_of_five: dict[str, Learner]) -> None:
    response = client_for(author).get(page(item))
    assert response.status_code == 200
    html = response.content.decode()
    assert "Over every learner: 6 engaged" in html
    assert cells(html, "itemstats-summary")[1][:2] == ["6", "2 (33%)"]


def test_other_instructor_and_learners_are_kept_out(
    item: Exercise,
    workbook: Workbook,
    cohort: Cohort,
    make_user: Callable[..., User],
    class_of_five: dict[str, Learner],
) -> None:
    other = make_user("other-prof", role=Role.INSTRUCTOR)
    theirs = cohort_services.cohort_create(instructor=other, name="Another class")
    cohort_services.cohort_assign(cohort=theirs, workbook=workbook)
    client = client_for(other)
    assert client.get(page(item) + f"?cohort={cohort.pk}").status_code == 404
    own = client.get(page(item))  # their own cohort: nobody engaged
    assert own.status_code == 200
    assert "Over the learners of Another class: 0 engaged" in own.content.decode()
    # A learner is not staff: the admin sends them to its login.
    learner = client_for(class_of_five["ann"].user).get(page(item))
    assert learner.status_code == 302 and "/admin/login/" in learner.headers["Location"]
