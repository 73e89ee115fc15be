"""Services on real PostgreSQL: content sync and versions, attempts, progress, reveal, hints."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.accounts.models import Role, User
from apps.core.exceptions import ApplicationError
from apps.exercises import services
from apps.exercises.content.loader import Expected, load_workbook
from apps.exercises.content.report import DEFAULT_ROOT
from apps.exercises.content.schema import ExerciseSpec, WorkbookSpec
from apps.exercises.models import Attempt, Exercise, Verdict
from apps.exercises.tests import content
from apps.exercises.tests.answers import correct_payload, on_seed_numbers
from apps.learning import services as learning_services
from apps.progress.models import Cohort, CohortWorkbook, ExerciseProgress, Membership
from apps.progress.selectors import learner
from apps.sandbox import selectors as sandbox_selectors
from apps.sandbox.cache import CachedRunner, default_directory

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def spec() -> WorkbookSpec:
    runner = CachedRunner(sandbox_selectors.runner("tests"), default_directory())
    return load_workbook(DEFAULT_ROOT / "transformer-math", expected=Expected(runner=runner))


def exercise(number: str) -> Exercise:
    return Exercise.objects.select_related("current_version", "workbook", "chapter").get(
        workbook__slug="transformer-math", number=number
    )


def with_changes(spec: WorkbookSpec, number: str, **changes: Any) -> WorkbookSpec:
    chapters = []
    for chapter in spec.chapters:
        exercises = [
            ExerciseSpec.model_validate({**e.model_dump(), **changes}) if e.number == number else e
            for e in chapter.exercises
        ]
        chapters.append(chapter.model_copy(update={"exercises": exercises}))
    return spec.model_copy(update={"chapters": chapters})


def test_sync_is_idempotent(spec: WorkbookSpec) -> None:
    report = services.workbook_sync(spec=spec)
    assert report.created == [] and report.new_versions == [] and report.updated == []
    n = sum(len(c.exercises) for c in spec.chapters)
    assert report.unchanged == n == content.exercise_count("transformer-math")
    assert Exercise.objects.filter(workbook__slug="transformer-math", is_active=True).count() == n


def test_an_answer_change_makes_a_new_version_and_old_attempts_keep_theirs(spec: WorkbookSpec, student: User) -> None:
    before = exercise("0.1")
    old_version = before.current_version
    assert old_version is not None
    on_seed_numbers(student, before)  # GPT-2 Small's numbers, quoted below
    outcome = learning_services.attempt_create(user=student, exercise=before, payload={"answer": "124.3"})
    assert outcome.attempt.verdict == Verdict.CORRECT

    answer = spec.chapters[0].exercises[0].answer
    assert answer is not None
    changed = with_changes(spec, "0.1", answer={**answer.model_dump(), "value": "layers + tok_emb + final_ln"})
    report = services.workbook_sync(spec=changed)
    assert report.new_versions == ["0.1"]

    after = exercise("0.1")
    assert after.current_version is not None
    assert after.current_version.version == old_version.version + 1
    attempt = Attempt.objects.get(pk=outcome.attempt.pk)
    assert attempt.version_id == old_version.pk  # graded against v1, stays on v1
    # The new answer grades the new way.
    assert (
        learning_services.attempt_create(user=student, exercise=after, payload={"answer": "123.5"}).attempt.verdict
        == Verdict.CORRECT
    )


def test_prose_edits_update_the_current_version_in_place(spec: WorkbookSpec) -> None:
    version_before = exercise("0.2").current_version
    report = services.workbook_sync(
        spec=with_changes(spec, "0.2", prompt="A clearer prompt, d = {{d}}, L = {{L}}, V = {{V}}, dff = {{dff}}.")
    )
    assert report.updated == ["0.2"]
    after = exercise("0.2").current_version
    assert after is not None and version_before is not None
    assert after.pk == version_before.pk
    assert after.spec["prompt"].startswith("A clearer prompt")


def test_exercises_gone_from_the_files_are_retired_not_deleted(spec: WorkbookSpec, student: User) -> None:
    learning_services.attempt_create(user=student, exercise=exercise("0.7"), payload={"answer": "46.7"})
    chapters = [
        c.model_copy(update={"exercises": [e for e in c.exercises if e.number != "0.7"]}) for c in spec.chapters
    ]
    report = services.workbook_sync(spec=spec.model_copy(update={"chapters": chapters}))
    assert report.retired == ["0.7"]
    retired = Exercise.objects.get(workbook__slug="transformer-math", number="0.7")
    assert retired.is_active is False
    assert Attempt.objects.filter(exercise=retired).count() == 1
    services.workbook_sync(spec=spec)
    assert exercise("0.7").is_active is True


def test_attempts_and_progress_are_written_together(student: User) -> None:
    ex = exercise("0.1")
    on_seed_numbers(student, ex)  # the answers below are GPT-2 Small's
    wrong = learning_services.attempt_create(user=student, exercise=ex, payload={"answer": "123.5M"})
    assert wrong.attempt.verdict == Verdict.INCORRECT
    assert wrong.attempt.raw == {"answer": "123.5M"}
    assert wrong.attempt.parsed["understood"] == "123.5M = 123,500,000 params (read 'M' as million)"
    assert wrong.attempt.feedback.startswith("That leaves out the learned position embedding")
    assert not wrong.first_solve

    right = learning_services.attempt_create(user=student, exercise=ex, payload={"answer": "124.32M"})
    assert right.first_solve
    again = learning_services.attempt_create(user=student, exercise=ex, payload={"answer": "124.32M"})
    assert not again.first_solve

    progress = ExerciseProgress.objects.get(user=student, exercise=ex)
    assert progress.attempts == 3
    assert progress.first_solve_attempt_id == right.attempt.pk
    assert progress.solved_at == right.attempt.created_at


def test_an_ungradable_answer_writes_nothing(student: User) -> None:
    ex = exercise("0.1")
    cases: list[tuple[dict[str, Any], str]] = [
        ({"answer": "124.3 GB"}, "wrong_dimension"),
        ({"answer": "lots"}, "unparseable"),
        ({"lines": [1]}, "bad_payload"),
    ]
    for payload, code in cases:
        with pytest.raises(ApplicationError) as info:
            learning_services.attempt_create(user=student, exercise=ex, payload=payload)
        assert info.value.code == code
    assert Attempt.objects.filter(user=student).count() == 0
    assert ExerciseProgress.objects.filter(user=student).count() == 0


def test_code_without_a_ready_sandbox_is_refused_and_costs_nothing(student: User, no_sandbox: None) -> None:
    with pytest.raises(ApplicationError) as info:
        learning_services.attempt_create(
            user=student,
            exercise=exercise("0.5"),
            payload={"code": "def param_count(d, n_layers, vocab_size):\n    return 0\n"},
        )
    assert info.value.code == "sandbox_unavailable"
    assert info.value.status_code == 503
    assert Attempt.objects.count() == 0


def test_reveal_then_solve_completes_without_first_solve_points(student: User) -> None:
    ex = exercise("1.4")
    on_seed_numbers(student, ex)  # "128" is the seed's answer
    progress = learning_services.exercise_reveal(user=student, exercise=ex)
    assert progress.revealed_at is not None
    again = learning_services.exercise_reveal(user=student, exercise=ex)
    assert again.revealed_at == progress.revealed_at  # idempotent
    outcome = learning_services.attempt_create(user=student, exercise=ex, payload={"answer": "128"})
    assert outcome.first_solve
    assert outcome.progress is not None and outcome.progress.solved_after_reveal


def test_hints_come_one_at_a_time(student: User) -> None:
    ex = exercise("0.1")
    assert learning_services.hint_reveal_next(user=student, exercise=ex).hints_used == 1
    assert learning_services.hint_reveal_next(user=student, exercise=ex).hints_used == 2
    with pytest.raises(ApplicationError) as info:
        learning_services.hint_reveal_next(user=student, exercise=ex)
    assert info.value.code == "no_more_hints"


def test_grading_a_numeric_answer_costs_a_fixed_number_of_queries(student: User) -> None:
    ex = exercise("0.1")
    learner.learner_numbers_remember(user_id=student.pk, exercise_id=ex.pk, numbers=None)  # a fresh process
    learning_services.attempt_create(user=student, exercise=ex, payload={"answer": "1"})  # warm caches and progress row
    learner.learner_numbers_remember(user_id=student.pk, exercise_id=ex.pk, numbers=None)
    with CaptureQueriesContext(connection) as queries:
        learning_services.attempt_create(user=student, exercise=ex, payload={"answer": "2"})
    # 0.1 varies per learner: one read of whose numbers and which round (learner_numbers). Then, on
    # PostgreSQL, a wrong answer's attempt insert and progress upsert are one atomic statement.
    assert len(queries) == 2, [q["sql"] for q in queries]
    assert "FROM progress_exerciseprogress" in queries[0]["sql"] and "'shared'" in queries[0]["sql"]
    assert queries[1]["sql"].lstrip().startswith("WITH new_attempt AS")
    # The process remembers the numbers it just graded on: the next answer is that one statement
    # alone, which checks them (the same round and cohort) as it writes.
    with CaptureQueriesContext(connection) as queries:
        learning_services.attempt_create(user=student, exercise=ex, payload={"answer": "3"})
    (statement,) = [q["sql"] for q in queries]
    assert statement.lstrip().startswith("WITH new_attempt AS") and "'shared'" in statement

    # The first solve also moves the streak, the day's activity and two global boards, in one
    # transaction: a fixed count, whatever the learner's history (the first statement is the
    # guarded one-round-trip path, which declines to record a completing attempt).
    right = correct_payload(ex, student)  # (read before counting: it looks up the learner's numbers)
    with CaptureQueriesContext(connection) as queries:
        learning_services.attempt_create(user=student, exercise=ex, payload=right)
    statements = [q["sql"] for q in queries if "SAVEPOINT" not in q["sql"]]
    # ... and, for its first solve, makes the exercise's review card (a lock read and an insert),
    # and last the two boards' shared bucket and slot rows (ScoreBucket, ScoreSlot: four upserts).
    assert len(statements) == 18, statements
    assert statements[0].lstrip().startswith("WITH cur AS") and statements[1].lstrip().startswith("WITH new_attempt")
    # Answering a solved exercise again changes no streak or score: one statement, no transaction.
    with CaptureQueriesContext(connection) as queries:
        learning_services.attempt_create(user=student, exercise=ex, payload=right)
    (statement,) = [q["sql"] for q in queries]
    assert statement.lstrip().startswith("WITH cur AS")


@pytest.mark.parametrize("moved", ["round", "cohort"])
def test_remembered_numbers_that_moved_are_read_again_and_the_answer_graded_on_them(
    student: User, make_user: Callable[..., User], moved: str
) -> None:
    """Numbers this process remembers are a hint: when they moved meanwhile (new numbers or a
    cohort that shares its numbers, written by any process), the answer is graded on the numbers
    the learner is on now, and stored once."""
    ex = exercise("0.1")
    learning_services.attempt_create(user=student, exercise=ex, payload={"answer": "1"})  # remembers round 1
    before = correct_payload(ex, student)
    if moved == "round":  # as another process's "new numbers" would
        ExerciseProgress.objects.filter(user=student, exercise=ex).update(round=2)
    else:
        cohort = Cohort.objects.create(
            name="Shared",
            instructor=make_user("teacher", role=Role.INSTRUCTOR),
            numbers=Cohort.Numbers.SHARED,
            join_code="SHARED01",
        )
        CohortWorkbook.objects.create(cohort=cohort, workbook=ex.workbook)
        Membership.objects.create(cohort=cohort, user=student)
    now = correct_payload(ex, student)
    assert now != before  # the exercise shows other numbers now
    count = Attempt.objects.filter(user=student, exercise=ex).count()
    with CaptureQueriesContext(connection) as queries:
        stale = learning_services.attempt_create(user=student, exercise=ex, payload=before)
    assert stale.attempt.verdict == Verdict.INCORRECT  # right only on the numbers it no longer shows
    # It was right on the remembered numbers, so the checked writes (the one-round-trip try, then
    # the completing one) both declined and wrote nothing; then the numbers read, the write again.
    statements = [q["sql"].lstrip() for q in queries if "SAVEPOINT" not in q["sql"]]
    assert [sql[:16] for sql in statements] == [
        "WITH cur AS (\n  ",
        "WITH new_attempt",
        "SELECT\n  (SELECT",
        "WITH new_attempt",
    ]
    assert Attempt.objects.filter(user=student, exercise=ex).count() == count + 1
    solved = learning_services.attempt_create(user=student, exercise=ex, payload=now)
    assert solved.attempt.verdict == Verdict.CORRECT and solved.first_solve
    assert Attempt.objects.filter(user=student, exercise=ex).count() == count + 2
    recorded = Attempt.objects.get(pk=solved.attempt.pk)
    assert recorded.round == (2 if moved == "round" else 0)
    assert ExerciseProgress.objects.get(user=student, exercise=ex).first_solve_attempt_id == solved.attempt.pk
