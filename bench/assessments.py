"""Assessments: (a) the grading of an answer inside an exam against the same answer in practice,
and (b) the gradebook of a 500-learner cohort with 20 assessments.

    DATABASE_URL=... REDIS_URL=... .venv/bin/python bench/assessments.py [--keep] [--rounds N]

Builds a scratch database ``<name>_asmtbench`` on the PostgreSQL in DATABASE_URL (migrated, the
transformer-math workbook synced), then, in process (bench.settings: DEBUG off, real PostgreSQL and
Redis, the attempt throttle out of the way):

(a) Grading, the same numeric exercise, the same answers (one in four right on the side's own
    numbers, the others the same wrong strings), interleaved in a different order each round:

    - ``practice_service``: ``learning.services.attempt_create`` (a learner practising it);
    - ``exam_service``: ``assessments.services.answer_submit`` (another learner, on the exercise as
      drawn into their open exam: its own numbers, unlimited attempts, verdicts live);
    - ``practice_http``: ``POST /api/v1/workbooks/<slug>/exercises/<n>/attempts/`` through Django's
      test Client (every middleware, token authentication, the throttle, the view);
    - ``exam_http``: ``POST /api/v1/assessments/<id>/questions/<position>/answers/``, the same way,
      when that route exists (it is measured as soon as apps/assessments/urls.py has it).

    Target: exam ÷ practice ≤ 1.2× at p50 and p95.

(b) The gradebook: a cohort of ``--learners`` (500) and one of ``--small`` (50), each with
    ``--assessments`` (20) assessments of ``--questions`` (5) questions drawn from pools of 1-3
    exercises; ``--taken`` (90%) of the learners have an instance of each (with their questions, one
    graded answer per question, some late, some submitted, some with a score override and its history)
    and ``--overrides`` (5%) an override in force (and some a revoked one). All created set-based
    (``bulk_create``). Timed, interleaved: ``selectors.gradebook`` of the large cohort, and, when
    the routes exist, ``GET /api/v1/cohorts/<id>/gradebook/`` and ``.../gradebook.csv`` as the
    cohort's instructor. SQL queries are counted at both sizes: they must not grow with the cohort.

    Target: ≤ 300 ms p95, the same number of queries at 50 and at 500 learners.

``--keep`` keeps the scratch database, and reuses one generated with the same sizes.
Writes bench/results/assessments.json and prints Markdown tables.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import sys
import time
import warnings
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.grading_api import ANSWERS, manage, summarize  # noqa: E402 - after the path is set
from bench.leaderboard import code_version, scratch_or_kept  # noqa: E402
from bench.pages import drop_database  # noqa: E402

SUFFIX = "_asmtbench"
SETTINGS = "bench.settings"
WORKBOOK = "transformer-math"
GRADING_TARGET = 1.2
GRADEBOOK_TARGET_MS = 300.0
PRACTICE_USER, EXAM_USER, INSTRUCTOR = "bench-practice", "bench-exam", "bench-prof"


# ---- data ----------------------------------------------------------------------------------------


def numeric_exercises() -> list[Any]:
    """The workbook's numeric exercises whose numbers vary per learner (what exams draw)."""
    from apps.exercises.choices import AnswerFormat
    from apps.exercises.models import Exercise

    found = [
        e
        for e in Exercise.objects.filter(workbook__slug=WORKBOOK, is_active=True, format=AnswerFormat.NUMERIC)
        .select_related("current_version", "chapter", "workbook")
        .order_by("chapter__number", "position")
        if e.current_version is not None and e.current_version.spec.get("vary")
    ]
    assert len(found) >= 3, "the workbook has too few varying numeric exercises"
    return found


def users_bulk(prefix: str, count: int) -> list[Any]:
    from django.contrib.auth.hashers import make_password

    from apps.accounts.models import User

    unusable = make_password(None)
    return User.objects.bulk_create(
        [User(username=f"{prefix}-{i:04d}", email=f"{prefix}-{i:04d}@example.test", password=unusable)
         for i in range(count)]
    )  # fmt: skip


def cohort_generate(
    *, name: str, learners: int, sizes: dict[str, Any], instructor: Any, exercises: list[Any], rng: random.Random
) -> int:
    """A cohort of ``learners`` with its assessments, instances, answers and overrides, set-based."""
    from apps.progress.models import Membership
    from apps.progress.services import cohorts as cohort_services

    cohort = cohort_services.cohort_create(instructor=instructor, name=name)
    users = users_bulk(name, learners)
    Membership.objects.bulk_create([Membership(cohort=cohort, user=u) for u in users])
    assessments_generate(cohort=cohort, users=users, sizes=sizes, instructor=instructor, exercises=exercises, rng=rng)
    return int(cohort.pk)


def assessments_generate(
    *, cohort: Any, users: list[Any], sizes: dict[str, Any], instructor: Any, exercises: list[Any], rng: random.Random
) -> None:
    """``sizes["assessments"]`` assessments of ``cohort`` with the instances, answers and overrides of
    ``users`` (its members), set-based (also bench/leaderboard.py's, on a cohort it generated)."""
    from apps.assessments.models import (
        Assessment,
        Instance,
        InstanceQuestion,
        Kind,
        Override,
        Question,
        ScoreOverride,
        Submission,
    )

    now = datetime.now().astimezone()
    n = sizes["assessments"]
    assessments = []
    for k in range(n):
        opens = now - timedelta(days=3 * (n - k))
        exam = k % 4 == 3
        due = opens + timedelta(days=7)
        assessments.append(
            Assessment(
                cohort=cohort,
                slug=f"a{k + 1:02d}",
                title=f"{'Exam' if exam else 'Homework'} {k + 1}",
                kind=Kind.EXAM if exam else Kind.HOMEWORK,
                opens_at=opens,
                due_at=due,
                closes_at=opens + timedelta(days=10),
                late_rules=[] if exam else [{"until": (due + timedelta(days=2)).isoformat(), "credit": 50}],
                time_limit_minutes=60 if exam else None,
                max_attempts=3 if exam else None,
                attempt_credit=[] if exam else [100, 80],
                created_by=instructor,
            )
        )
    assessments = Assessment.objects.bulk_create(assessments)
    questions = Question.objects.bulk_create(
        [Question(assessment=a, position=p + 1, points=10.0 if p else 20.0, choose=1)
         for a in assessments for p in range(sizes["questions"])]
    )  # fmt: skip
    pools: dict[int, list[Any]] = {}
    through = []
    for q in questions:
        pools[q.pk] = rng.sample(exercises, rng.randint(1, 3))
        through += [Question.pool.through(question_id=q.pk, exercise_id=e.pk) for e in pools[q.pk]]
    Question.pool.through.objects.bulk_create(through)
    by_assessment: dict[int, list[Any]] = {}
    for q in questions:
        by_assessment.setdefault(q.assessment_id, []).append(q)

    instances: list[Any] = []
    overrides: list[Any] = []
    for a in assessments:
        due_at = a.due_at
        assert due_at is not None
        for u in users:
            if rng.random() < sizes["overrides_pct"] / 100:
                if rng.random() < 0.3:  # an earlier override, revoked, kept
                    overrides.append(Override(assessment=a, user=u, extra_attempts=1, reason="Revoked later",
                                              granted_by=instructor, revoked_at=now, revoked_by=instructor))  # fmt: skip
                overrides.append(Override(assessment=a, user=u, due_at=due_at + timedelta(days=3),
                                          time_factor=1.5 if a.time_limit_minutes else None,
                                          reason="Medical note", granted_by=instructor))  # fmt: skip
            if rng.random() >= sizes["taken_pct"] / 100:
                continue
            started = a.opens_at + timedelta(hours=rng.randint(1, 160))
            closed = a.closes_at <= now
            submitted = started + timedelta(minutes=rng.randint(5, 55)) if rng.random() < 0.6 else None
            instances.append(
                Instance(
                    assessment=a,
                    user=u,
                    started_at=started,
                    deadline=started + timedelta(minutes=60) if a.time_limit_minutes else None,
                    submitted_at=submitted,
                    closed_at=submitted or (a.closes_at if closed else None),
                    max_score=sum(q.points for q in by_assessment[a.pk]),
                    late=started > due_at,
                    score_override=float(rng.randint(0, 60)) if rng.random() < 0.02 else None,
                )
            )
    Override.objects.bulk_create(overrides, batch_size=5000)
    instances = Instance.objects.bulk_create(instances, batch_size=5000)
    items: list[Any] = []
    for i in instances:
        for position, q in enumerate(by_assessment[i.assessment_id], start=1):
            exercise = pools[q.pk][(i.user_id + q.pk) % len(pools[q.pk])]
            best = q.points * rng.choice([0.0, 0.5, 1.0, 1.0])
            items.append(
                InstanceQuestion(instance=i, question=q, exercise=exercise, version_id=exercise.current_version_id,
                                 position=position, points=q.points, attempts=rng.randint(1, 3), best=best)
            )  # fmt: skip
    items = InstanceQuestion.objects.bulk_create(items, batch_size=5000)
    scores: dict[int, float] = {}
    submissions = []
    for item in items:
        scores[item.instance_id] = scores.get(item.instance_id, 0.0) + item.best
        ok = item.best > 0
        submissions.append(
            Submission(item=item, raw={"answer": "1.0"}, parsed={"value": 1.0}, correct=ok, score=1.0 if ok else 0.0,
                       credit=100.0, points=item.best, created_at=now)
        )  # fmt: skip
    Submission.objects.bulk_create(submissions, batch_size=5000)
    for i in instances:
        i.score = scores.get(i.pk, 0.0)
    Instance.objects.bulk_update(instances, ["score"], batch_size=5000)
    ScoreOverride.objects.bulk_create(
        [ScoreOverride(instance=i, score=i.score_override, previous=i.score, reason="Regraded by hand", by=instructor)
         for i in instances if i.score_override is not None]
    )  # fmt: skip


def exam_generate(*, instructor: Any, exercise: Any) -> tuple[Any, Any, Any]:
    """(practice learner, exam learner, the exam learner's item): an open exam of one question,
    ``exercise``, for a learner who practises nothing; another learner practises it."""
    from apps.accounts.services import user_create
    from apps.assessments import services
    from apps.assessments.models import Assessment, Kind, Question
    from apps.progress.services import cohorts as cohort_services

    practice = user_create(username=PRACTICE_USER, password="bench-pass-123")  # noqa: S106 - a scratch database
    learner = user_create(username=EXAM_USER, password="bench-pass-123")  # noqa: S106
    cohort = cohort_services.cohort_create(instructor=instructor, name="Exam bench")
    cohort_services.cohort_join(user=learner, code=cohort.join_code)
    now = datetime.now().astimezone()
    exam = Assessment.objects.create(
        cohort=cohort, slug="exam", title="Exam", kind=Kind.EXAM, opens_at=now - timedelta(hours=1),
        closes_at=now + timedelta(days=30), created_by=instructor,
    )  # fmt: skip
    Question.objects.create(assessment=exam, position=1, points=10.0).pool.set([exercise])
    instance = services.instance_open(assessment=exam, user=learner)
    return practice, learner, instance.questions.get()


def generate(sizes: dict[str, Any]) -> dict[str, Any]:
    from apps.accounts.models import Role
    from apps.accounts.services import user_create

    rng = random.Random(5)
    instructor = user_create(username=INSTRUCTOR, password="bench-pass-123", role=Role.INSTRUCTOR)  # noqa: S106
    exercises = numeric_exercises()
    exam_generate(instructor=instructor, exercise=exercises[0])
    large = cohort_generate(
        name="large", learners=sizes["learners"], sizes=sizes, instructor=instructor, exercises=exercises, rng=rng
    )
    small = cohort_generate(
        name="small", learners=sizes["small"], sizes=sizes, instructor=instructor, exercises=exercises, rng=rng
    )
    return {"large": large, "small": small, "exercise": exercises[0].pk}


def marker_write(name: str, marker: dict[str, Any]) -> None:
    from django.db import connection
    from psycopg import sql

    with connection.cursor() as cursor:
        cursor.execute(
            sql.SQL("COMMENT ON DATABASE {} IS {}").format(sql.Identifier(name), sql.Literal(json.dumps(marker)))
        )


# ---- measuring -----------------------------------------------------------------------------------


def route_exists(path: str) -> bool:
    from django.urls import Resolver404, resolve

    try:
        resolve(path)
    except Resolver404:
        return False
    return True


def interleaved(
    targets: dict[str, Callable[[int], Any]], rounds: int, warmup: int, rng: random.Random
) -> dict[str, list[float]]:
    """Each target called once per round, in a new order each round; milliseconds after warm-up."""
    timings: dict[str, list[float]] = {name: [] for name in targets}
    perf = time.perf_counter_ns
    for i in range(warmup + rounds):
        order = list(targets)
        rng.shuffle(order)
        for name in order:
            start = perf()
            targets[name](i)
            if i >= warmup:
                timings[name].append((perf() - start) / 1e6)
    return timings


def grading(rounds: int, warmup: int, rng: random.Random) -> dict[str, Any]:
    from django.test import Client

    from apps.accounts.models import User
    from apps.accounts.services import auth_token_issue
    from apps.assessments import services
    from apps.assessments.models import Instance, InstanceQuestion, Submission
    from apps.exercises.tests.answers import correct_payload
    from apps.learning import services as learning_services

    practice = User.objects.get(username=PRACTICE_USER)
    learner = User.objects.get(username=EXAM_USER)
    item = InstanceQuestion.objects.select_related("instance", "exercise", "exercise__workbook").get(
        instance__user=learner
    )
    exercise = item.exercise
    # A kept database (--keep) starts each run from the same state: no answers yet (the attempt
    # counter is a small integer: runs must not add up).
    Submission.objects.filter(item=item).delete()
    InstanceQuestion.objects.filter(pk=item.pk).update(attempts=0, best=0.0)
    Instance.objects.filter(pk=item.instance_id).update(score=0.0, late=False)
    practice_url = f"/api/v1/workbooks/{exercise.workbook.slug}/exercises/{exercise.number}/attempts/"
    exam_url = f"/api/v1/assessments/{item.instance.assessment_id}/questions/{item.position}/answers/"
    exam_right = correct_payload(exercise, variant=services.variant_of(item))

    def body(i: int, right: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        return right() if i % 4 == 0 else {"answer": ANSWERS[i % len(ANSWERS)]}

    def practice_body(i: int) -> dict[str, Any]:
        return body(i, lambda: correct_payload(exercise, practice))  # the numbers they are on now

    def exam_body(i: int) -> dict[str, Any]:
        return body(i, lambda: exam_right)

    def client_for(user: Any) -> Client:
        token = auth_token_issue(user=user).key
        return Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Token {token}", raise_request_exception=True)

    practice_client, exam_client = client_for(practice), client_for(learner)

    def post(client: Client, url: str, payload: dict[str, Any]) -> None:
        response = client.post(url, payload, content_type="application/json")
        if response.status_code not in (200, 201):
            raise RuntimeError(f"{url}: {response.status_code} {response.content[:300]!r}")

    # Each body (and a right answer's numbers) is computed before the clock starts.
    calls: dict[str, tuple[Callable[[dict[str, Any]], Any], Callable[[int], dict[str, Any]]]] = {
        "practice_service": (
            lambda b: learning_services.attempt_create(user=practice, exercise=exercise, payload=b),
            practice_body,
        ),
        "exam_service": (lambda b: services.answer_submit(user=learner, item_id=item.pk, payload=b), exam_body),
        "practice_http": (lambda b: post(practice_client, practice_url, b), practice_body),
    }
    exam_http = route_exists(exam_url)
    if exam_http:
        calls["exam_http"] = (lambda b: post(exam_client, exam_url, b), exam_body)

    timings: dict[str, list[float]] = {name: [] for name in calls}
    perf = time.perf_counter_ns
    for i in range(warmup + rounds):
        order = list(calls)
        rng.shuffle(order)
        for name in order:
            call, make = calls[name]
            payload = make(i)
            start = perf()
            call(payload)
            if i >= warmup:
                timings[name].append((perf() - start) / 1e6)
    stats = summarize(timings)
    ratios = {
        "service": _ratio(stats, "exam_service", "practice_service"),
        "http": _ratio(stats, "exam_http", "practice_http") if exam_http else None,
    }
    return {
        "exercise": f"{exercise.workbook.slug}/{exercise.number}",
        "exam_http_route": exam_http,
        "stats": stats,
        "exam_vs_practice": ratios,
        "submissions_recorded": Submission.objects.filter(item=item).count(),
    }


def _ratio(stats: dict[str, dict[str, float]], top: str, bottom: str) -> dict[str, float]:
    return {p: round(stats[top][f"{p}_ms"] / stats[bottom][f"{p}_ms"], 2) for p in ("p50", "p95")}


def gradebooks(ids: dict[str, int], rounds: int, warmup: int, rng: random.Random) -> dict[str, Any]:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from apps.accounts.models import User
    from apps.assessments import selectors
    from apps.progress.models import Cohort

    cohorts = {size: Cohort.objects.get(pk=pk) for size, pk in (("large", ids["large"]), ("small", ids["small"]))}
    client = Client(HTTP_HOST="127.0.0.1", raise_request_exception=True)
    client.force_login(User.objects.get(username=INSTRUCTOR))
    csv_of: Callable[[Any], str] | None
    try:
        from apps.assessments.exports import gradebook_csv as csv_of  # helper H1's, when it is there
    except ImportError:
        csv_of = None

    def get(url: str) -> bytes:
        response = client.get(url)
        if response.status_code != 200:
            raise RuntimeError(f"{url}: {response.status_code} {response.content[:300]!r}")
        return bytes(response.content)

    def getter(url: str) -> Callable[[int], bytes]:
        return lambda i: get(url)

    def targets_for(cohort: Any) -> dict[str, Callable[[int], Any]]:
        found: dict[str, Callable[[int], Any]] = {"selector": lambda i: selectors.gradebook(cohort=cohort)}
        if csv_of is not None:
            as_csv = csv_of
            found["selector_and_csv"] = lambda i: as_csv(selectors.gradebook(cohort=cohort))
        for name, url in (
            ("api_json", f"/api/v1/cohorts/{cohort.pk}/gradebook/"),
            ("api_csv", f"/api/v1/cohorts/{cohort.pk}/gradebook.csv"),
        ):
            if route_exists(url):
                found[name] = getter(url)
        return found

    large = targets_for(cohorts["large"])
    timings = interleaved(large, rounds, warmup, rng)
    queries: dict[str, dict[str, int]] = {}
    for size, cohort in cohorts.items():
        for name, call in targets_for(cohort).items():
            with CaptureQueriesContext(connection) as captured:
                call(0)
            queries.setdefault(name, {})[size] = len(captured)
    book = selectors.gradebook(cohort=cohorts["large"])
    shape = {
        "learners": len(book.learners),
        "assessments": len(book.assessments),
        "cells": len(book.cells),
        "with_override": sum(1 for c in book.cells.values() if c.override is not None),
        "score_overridden": sum(1 for c in book.cells.values() if c.instance and c.instance.score_override is not None),
    }
    return {"stats": summarize(timings), "queries": queries, "gradebook": shape}


# ---- main ----------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=1000, help="grading calls per series")
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--book-rounds", type=int, default=200, help="gradebook reads per series")
    parser.add_argument("--book-warmup", type=int, default=20)
    parser.add_argument("--learners", type=int, default=500)
    parser.add_argument("--small", type=int, default=50, help="learners of the second cohort (query counts)")
    parser.add_argument("--assessments", type=int, default=20)
    parser.add_argument("--questions", type=int, default=5)
    parser.add_argument("--taken", type=int, default=90, help="percent of learners with an instance")
    parser.add_argument("--overrides", type=int, default=5, help="percent of learners with an override")
    parser.add_argument("--keep", action="store_true", help="keep the database; reuse one with the same sizes")
    parser.add_argument(
        "--no-freeze", action="store_true", help="leave the startup heap to the collector (config/wsgi.py freezes it)"
    )
    args = parser.parse_args()
    database_url = os.environ.get("DATABASE_URL")
    if not database_url or not os.environ.get("REDIS_URL"):
        print("DATABASE_URL and REDIS_URL must point at PostgreSQL and Redis (make bench starts them)", file=sys.stderr)
        return 2
    warnings.filterwarnings("ignore", message="No directory at", category=UserWarning)
    sizes: dict[str, Any] = {
        "bench": "assessments",
        "learners": args.learners,
        "small": args.small,
        "assessments": args.assessments,
        "questions": args.questions,
        "taken_pct": args.taken,
        "overrides_pct": args.overrides,
    }
    url, name, previous = scratch_or_kept(database_url, SUFFIX, sizes, keep=args.keep)
    reused = previous is not None
    env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": SETTINGS}
    os.environ.update(env)
    start = time.perf_counter()
    manage(env, "migrate", "--noinput")
    if not reused:
        manage(env, "sync_content", "--workbook", WORKBOOK)

    import django

    django.setup()
    if reused:
        assert previous is not None
        ids = previous["ids"]
    else:
        print(
            f"generating {name}: {args.learners} + {args.small} learners × {args.assessments} assessments", flush=True
        )
        ids = generate(sizes)
        marker_write(name, {**sizes, "ids": ids})
    setup_s = time.perf_counter() - start
    if not args.no_freeze:  # as the web process does once started (config/wsgi.py)
        gc.collect()
        gc.freeze()
    rng = random.Random(13)
    try:
        start = time.perf_counter()
        graded = grading(args.rounds, args.warmup, rng)
        books = gradebooks(ids, args.book_rounds, args.book_warmup, rng)
        measured_s = time.perf_counter() - start
    finally:
        if not args.keep:
            drop_database(url)

    ratios = [r for r in graded["exam_vs_practice"].values() if r is not None]
    passed = {
        "grading": all(r["p50"] <= GRADING_TARGET and r["p95"] <= GRADING_TARGET for r in ratios),
        "gradebook_p95": all(s["p95_ms"] <= GRADEBOOK_TARGET_MS for s in books["stats"].values()),
        "gradebook_queries_constant": all(len(set(q.values())) == 1 for q in books["queries"].values()),
    }
    report = {
        "code": code_version(),
        "rounds": {"grading": args.rounds, "gradebook": args.book_rounds},
        "sizes": sizes,
        "setup_s": round(setup_s, 1),
        "measured_s": round(measured_s, 1),
        "grading": graded,
        "gradebook": books,
        "targets": {"exam_vs_practice": GRADING_TARGET, "gradebook_p95_ms": GRADEBOOK_TARGET_MS},
        "passed": passed,
    }
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "assessments.json").write_text(json.dumps(report, indent=2))

    print(f"\n(a) grading {graded['exercise']}: {args.rounds} rounds after {args.warmup} warm-up, interleaved\n")
    print("| series | p50 ms | p95 ms |\n|---|---:|---:|")
    for series, s in graded["stats"].items():
        print(f"| {series} | {s['p50_ms']:.2f} | {s['p95_ms']:.2f} |")
    for level, r in graded["exam_vs_practice"].items():
        text = "route not there yet" if r is None else f"{r['p50']:.2f}× p50, {r['p95']:.2f}× p95"
        print(f"exam ÷ practice ({level}): {text} (target ≤ {GRADING_TARGET}×)")
    print(f"\n(b) gradebook: {json.dumps(books['gradebook'])}; {args.book_rounds} rounds, interleaved\n")
    print(
        f"| read | p50 ms | p95 ms | queries at {args.small} | queries at {args.learners} |\n|---|---:|---:|---:|---:|"
    )
    for series, s in books["stats"].items():
        q = books["queries"][series]
        print(f"| {series} | {s['p50_ms']:.1f} | {s['p95_ms']:.1f} | {q['small']} | {q['large']} |")
    print(f"\npassed: {json.dumps(passed)}")
    return 0 if all(passed.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
