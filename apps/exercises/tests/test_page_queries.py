"""The pages a learner loads most run a fixed number of SQL queries: none grows with the
workbook's exercises or chapters, or with the learner's attempts, hints and solves.

Each page is requested once to warm the per-process caches (exercise lookups, rendered
content), then counted. The absolute counts are pinned so that a regression shows its SQL.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from apps.accounts.models import User
from apps.core.exceptions import ApplicationError
from apps.exercises import formats, services
from apps.exercises.choices import AnswerFormat, AttemptPart, AttemptStatus, CodeOutcome, Verdict
from apps.exercises.content import cache
from apps.exercises.content.loader import load_workbook
from apps.exercises.content.report import DEFAULT_ROOT
from apps.exercises.content.schema import WorkbookSpec
from apps.exercises.models import Attempt, Exercise
from apps.exercises.tests.answers import correct_payload, variant_for, wrong_payload
from apps.learning import services as learning_services

pytestmark = pytest.mark.django_db

WB = "/w/transformer-math/"
# Every page's navigation: the learner's reviews due today, one query (learning.selectors.nav_reviews_due).
NAV_QUERIES = 1
# Session, user, then the page's own: the learner's progress rows in the workbook, the learner's
# due dates for it. (The workbook, its chapters with their totals and its exercises are read once
# per process and content generation: learning.outlines.)
WORKBOOK_QUERIES = 4 + NAV_QUERIES
# Session, user, then: the learner's progress row, the five latest attempts. (The exercise and
# the workbook's order, previous/next, are read once per process and content generation:
# selectors.exercise_get, learning.selectors.exercise_page.)
EXERCISE_QUERIES = 4 + NAV_QUERIES
# An exercise whose numbers vary per learner reads whose numbers they are (a cohort may share them).
VARYING_EXTRA = 1
# An exercise that takes code (a Build, a Debug's fix) reads the learner's last submission: the
# editor opens on it (learning.selectors.exercise_page).
CODE_EXTRA = 1
# A solution shown beside the learner's own last answer (choice, order, lines, table) reads that answer.
BESIDE_EXTRA = 1
# One exercise per answer format.
FORMATS = {"0.1": "numeric", "0.3": "choice", "2.5": "order", "0.6": "lines", "8.5": "table", "0.5": "code"}

AssertNumQueries = Callable[..., Any]


@pytest.fixture(scope="module")
def spec() -> WorkbookSpec:
    # Expected values of code tests are not needed to render pages.
    return load_workbook(DEFAULT_ROOT / "transformer-math", compute_expected=False)


def login(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def page_queries(client: Client, path: str) -> int:
    """How many queries ``path`` makes, once its caches are warm."""
    assert client.get(path).status_code == 200
    with CaptureQueriesContext(connection) as captured:
        assert client.get(path).status_code == 200
    return len(captured)


def workbook_exercises(slug: str) -> list[Exercise]:
    return list(
        Exercise.objects.filter(workbook__slug=slug, is_active=True)
        .select_related("workbook", "chapter", "current_version")
        .order_by("chapter__number", "position")
    )


def work_through(user: User, exercise: Exercise, *, wrong: int = 2, solve: bool = True) -> None:
    """Every hint, wrong attempts, then the right answer (code: the answer revealed instead)."""
    while True:
        try:
            learning_services.hint_reveal_next(user=user, exercise=exercise)
        except ApplicationError:
            break
    if exercise.format == AnswerFormat.CODE:
        # Code is graded by the sandbox: its graded attempts are written as a worker would.
        assert exercise.current_version is not None
        Attempt.objects.bulk_create(
            Attempt(
                user=user,
                exercise=exercise,
                version=exercise.current_version,
                part=AttemptPart.CODE,
                status=AttemptStatus.GRADED,
                raw={"code": "def f():\n    pass\n"},
                verdict=Verdict.INCORRECT,
                outcome=CodeOutcome.FAILED,
                details={"tests": []},
            )
            for _ in range(wrong)
        )
        learning_services.exercise_reveal(user=user, exercise=exercise)
        return
    for _ in range(wrong):
        learning_services.attempt_create(user=user, exercise=exercise, payload=wrong_payload(exercise, user))
    if solve:
        learning_services.attempt_create(user=user, exercise=exercise, payload=correct_payload(exercise, user))
    if exercise.format == AnswerFormat.LINES:  # its second part, the fix, is code
        learning_services.exercise_reveal(user=user, exercise=exercise)


def restamped(spec: WorkbookSpec, slug: str, copies: int) -> WorkbookSpec:
    """The workbook's chapters ``copies`` times over (chapter 3 again as 13, 23...), as ``slug``."""
    chapters = []
    for k in range(copies):
        for chapter in spec.chapters:
            number = chapter.number + 10 * k
            exercises = []
            for e in chapter.exercises:
                head, _, tail = e.number.partition(".")
                assert int(head) == chapter.number and tail
                # Ids are unique within a workbook: copies get their own.
                copy_id = e.id if k == 0 else f"{e.id[:44]}-c{k}"
                exercises.append(e.model_copy(update={"number": f"{number}.{tail}", "id": copy_id}))
            chapters.append(chapter.model_copy(update={"number": number, "exercises": exercises}))
    return spec.model_copy(update={"slug": slug, "title": f"Query count ×{copies}", "chapters": chapters})


# ---- the workbook page ----------------------------------------------------------------------------


def test_workbook_page_queries_do_not_grow_with_progress(
    make_user: Callable[..., User], django_assert_num_queries: AssertNumQueries
) -> None:
    fresh, busy = make_user(), make_user()
    exercises = workbook_exercises("transformer-math")
    for i, e in enumerate(exercises):
        work_through(busy, e, wrong=1 + i % 3, solve=i % 4 != 3)
    assert page_queries(login(fresh), WB) == page_queries(login(busy), WB) == WORKBOOK_QUERIES
    client = login(busy)
    client.get(WB)
    with django_assert_num_queries(WORKBOOK_QUERIES):
        assert client.get(WB).status_code == 200


def test_workbook_page_queries_do_not_grow_with_exercises_or_chapters(
    spec: WorkbookSpec, make_user: Callable[..., User], django_assert_num_queries: AssertNumQueries
) -> None:
    """The same workbook with N exercises in 10 chapters, then 2N in 20, with progress on each."""
    learner = make_user()
    client = login(learner)
    path = "/w/query-count/"

    services.workbook_sync(spec=restamped(spec, "query-count", 1))
    n = workbook_exercises("query-count")
    for e in n[::3]:
        work_through(learner, e, wrong=1)
    single = page_queries(client, path)

    services.workbook_sync(spec=restamped(spec, "query-count", 2))
    doubled = workbook_exercises("query-count")
    assert len(doubled) == 2 * len(n) and len(n) == sum(len(c.exercises) for c in spec.chapters)
    for e in doubled[len(n) :: 2]:
        work_through(learner, e, wrong=1)
    client.get(path)
    with django_assert_num_queries(single):
        page = client.get(path).text
    assert single == WORKBOOK_QUERIES
    assert all(f"{path}{e.number}/" in page for e in doubled)


# ---- the exercise page ----------------------------------------------------------------------------


@pytest.mark.parametrize("number", list(FORMATS))
def test_exercise_page_queries_do_not_grow_with_attempts_or_hints(
    number: str, make_user: Callable[..., User], django_assert_num_queries: AssertNumQueries
) -> None:
    fresh, busy = make_user(), make_user()
    path = f"{WB}{number}/"
    before = page_queries(login(fresh), path)

    exercise = next(e for e in workbook_exercises("transformer-math") if e.number == number)
    assert exercise.format == FORMATS[number]
    work_through(busy, exercise, wrong=12)
    assert Attempt.objects.filter(user=busy, exercise=exercise).count() >= 12
    client = login(busy)
    client.get(path)
    assert exercise.current_version is not None
    spec = cache.resolved(exercise.current_version).spec
    expected = EXERCISE_QUERIES + (VARYING_EXTRA if spec.vary else 0) + (CODE_EXTRA if spec.code else 0)
    beside = BESIDE_EXTRA if formats.get(exercise.format).shows_beside else 0
    with django_assert_num_queries(expected + beside):
        page = client.get(path).text
    assert before == expected
    # The solution is shown, on the learner's own numbers.
    assert cache.rendered(exercise.current_version, variant_for(exercise, busy)).explanation_html in page


def test_exercise_page_queries_do_not_grow_with_the_workbook(
    spec: WorkbookSpec, make_user: Callable[..., User], django_assert_num_queries: AssertNumQueries
) -> None:
    """Previous/next navigation reads the workbook's order once per content generation: the same
    queries at N or 2N exercises."""
    client = login(make_user())
    services.workbook_sync(spec=restamped(spec, "query-count", 1))
    single = page_queries(client, "/w/query-count/4.2/")
    varies = Exercise.objects.get(workbook__slug="query-count", number="4.2").current_version
    services.workbook_sync(spec=restamped(spec, "query-count", 2))
    for path in ("/w/query-count/4.2/", "/w/query-count/14.2/"):
        client.get(path)
        with django_assert_num_queries(single):
            client.get(path)
    assert varies is not None
    assert single == EXERCISE_QUERIES + (VARYING_EXTRA if cache.resolved(varies).spec.vary else 0)


# ---- the home and progress pages ------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/", "/progress/"])
def test_home_and_progress_queries_do_not_grow_with_solves(
    path: str, spec: WorkbookSpec, make_user: Callable[..., User], django_assert_num_queries: AssertNumQueries
) -> None:
    """Zero solves and solves in every workbook cost the same (the count itself is the pages'
    business: these pages are growing)."""
    services.workbook_sync(spec=restamped(spec, "query-count", 1))
    fresh, busy = make_user(), make_user()
    none = page_queries(login(fresh), path)
    for slug in ("transformer-math", "query-count"):
        for i, e in enumerate(workbook_exercises(slug)):
            if i % 2 == 0:
                work_through(busy, e, wrong=1)
    client = login(busy)
    client.get(path)
    with django_assert_num_queries(none):
        assert client.get(path).status_code == 200
