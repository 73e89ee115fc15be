"""The skills checklist: ticks per learner, spaced reviews, the API and the page."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from apps.accounts.models import User
from apps.core.exceptions import ApplicationError
from apps.exercises.models import Skill, Workbook
from apps.exercises.tests import content
from apps.progress import selectors, services
from apps.progress.models import SkillCheck

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def book() -> Workbook:
    wb = Workbook.objects.get(slug="transformer-math")
    wb.skills_protocol = "Retrieve before you re-read."
    wb.save()
    Skill.objects.filter(workbook=wb).delete()
    chapter = wb.chapters.get(number=0)
    Skill.objects.create(
        workbook=wb, key="count_params", text="Count a GPT's parameters", chapter=chapter, exercises=["0.1"], position=0
    )
    Skill.objects.create(workbook=wb, key="kv_cache", text="Size a KV cache", position=1)
    Skill.objects.create(workbook=wb, key="retired", text="Gone from the file", position=2, is_active=False)
    return wb


def test_fsrs_widens_the_gap_on_each_remembered_and_forgetting_brings_it_back_soon(
    student: User, book: Workbook
) -> None:
    """The checklist runs on the review cards' scheduler (FSRS, whole days, no fuzz): frozen clock."""
    skill = Skill.objects.get(workbook=book, key="count_params")
    check = services.skill_mark(user=student, skill=skill, action="tick", at=T0)
    assert check is not None and check.due_at == T0 + timedelta(days=2)  # a first Good: two days
    assert services.skill_mark(user=student, skill=skill, action="tick", at=T0 + timedelta(hours=5)) == check

    at, gaps = check.due_at, []
    for _ in range(4):
        check = services.skill_mark(user=student, skill=skill, action="remembered", at=at)
        assert check is not None
        gaps.append((check.due_at - at).days)
        at = check.due_at
    assert gaps == sorted(gaps) and gaps[0] > 2 and gaps[-1] > 60, gaps  # days, then weeks, then months
    stable = check.stability
    assert stable is not None
    check = services.skill_mark(user=student, skill=skill, action="forgot", at=at)
    assert check is not None
    assert check.lapses == 1 and check.reviews == 6
    assert (check.due_at - at).days < gaps[-1] / 4 and check.stability is not None and check.stability < stable
    assert services.skill_mark(user=student, skill=skill, action="untick") is None
    assert not SkillCheck.objects.filter(user=student).exists()


def test_review_before_tick_and_unknown_actions_are_clear_errors(student: User, book: Workbook) -> None:
    skill = Skill.objects.get(workbook=book, key="kv_cache")
    with pytest.raises(ApplicationError, match="Tick the skill before reviewing it"):
        services.skill_mark(user=student, skill=skill, action="remembered")
    with pytest.raises(ApplicationError, match="Unknown action"):
        services.skill_mark(user=student, skill=skill, action="delete-all")


def test_the_board_is_per_learner_and_says_what_is_due(student: User, other_student: User, book: Workbook) -> None:
    count, kv = Skill.objects.get(key="count_params", workbook=book), Skill.objects.get(key="kv_cache", workbook=book)
    services.skill_mark(user=student, skill=count, action="tick", at=T0)
    services.skill_mark(user=student, skill=kv, action="tick", at=T0 + timedelta(days=5))
    board = selectors.skill_board(user=student, workbook=book, at=T0 + timedelta(days=2))
    assert [r.skill.key for r in board.rows] == ["count_params", "kv_cache"]  # retired skills are not listed
    assert [r.state for r in board.rows] == ["due", "mastered"]
    assert (board.total, board.mastered, board.due) == (2, 2, 1)
    theirs = selectors.skill_board(user=other_student, workbook=book)
    assert (theirs.mastered, theirs.due) == (0, 0)


def test_the_api_ticks_reviews_and_lists(api: APIClient, student: User, book: Workbook) -> None:
    url = reverse("api:skills", args=["transformer-math"])
    res = api.post(
        reverse("api:skill-mark", args=["transformer-math", "count_params"]), {"action": "tick"}, format="json"
    )
    assert res.status_code == 200, res.content
    assert res.json()["state"] == "mastered" and res.json()["check"]["stability_days"] > 0
    body = api.get(url).json()
    assert (body["total"], body["mastered"], body["due"]) == (2, 1, 0)
    assert "Retrieve before you re-read." in body["protocol_html"]
    assert body["skills"][0]["exercises"] == ["0.1"] and body["skills"][0]["chapter"] == 0
    bad = api.post(
        reverse("api:skill-mark", args=["transformer-math", "count_params"]), {"action": "nuke"}, format="json"
    )
    assert bad.status_code == 400
    early = api.post(
        reverse("api:skill-mark", args=["transformer-math", "kv_cache"]), {"action": "forgot"}, format="json"
    )
    assert early.status_code == 400 and early.json()["error"]["code"] == "not_ticked"
    assert (
        api.post(reverse("api:skill-mark", args=["transformer-math", "retired"]), {"action": "tick"}).status_code == 404
    )
    assert APIClient().get(url).status_code == 401


def test_the_page_ticks_without_javascript(client: Client, student: User, book: Workbook) -> None:
    client.force_login(student)
    url = reverse("web:skills", args=["transformer-math"])
    page = client.get(url)
    assert page.status_code == 200
    text = page.content.decode()
    assert "0 / 2</strong> mastered" in text and "Count a GPT&#x27;s parameters" in text
    assert 'href="/w/transformer-math/0.1/"' in text
    done = client.post(url, {"skill": "count_params", "action": "tick"}, follow=True)
    assert "1 / 2</strong> mastered" in done.content.decode()
    assert SkillCheck.objects.filter(user=student, skill__key="count_params").exists()
    wrong = client.post(url, {"skill": "kv_cache", "action": "remembered"}, follow=True)
    assert "Tick the skill before reviewing it." in wrong.content.decode()
    assert "Skills checklist" in client.get(reverse("web:workbook", args=["transformer-math"])).content.decode()


def test_the_scaling_book_checklist_is_synced_from_its_file() -> None:
    book = Workbook.objects.get(slug="scaling-book")
    skills = list(Skill.objects.filter(workbook=book, is_active=True).select_related("chapter"))
    assert len(skills) == content.skill_count("scaling-book")
    assert "Retrieve first, re-read second" in book.skills_protocol
    numbers = set(book.exercises.filter(is_active=True).values_list("number", flat=True))
    linked = {n for s in skills for n in s.exercises}
    assert linked <= numbers and linked == numbers  # every exercise is practised by some skill
    assert {s.chapter.number for s in skills if s.chapter} == set(content.chapter_numbers("scaling-book"))
