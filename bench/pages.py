"""Server time of the two pages learners load most, against a baseline page measured in the same
run, interleaved: (a) the exercise page ``GET /w/transformer-math/<number>/``, one exercise per
answer format in turn, (b) the workbook page ``GET /w/transformer-math/``, (c) the baseline.

    make bench            # or: DATABASE_URL=... REDIS_URL=... .venv/bin/python bench/pages.py [--keep]

In process and server time only: Django's test Client drives the whole handler (every
middleware, the session and user lookups, the view, the templates) with no network and no
server in front of it. The learner is logged in with a database session, as in production, and
has worked through part of the workbook (solved exercises, wrong attempts, hints shown, an
answer revealed) among ``--learners`` others who did the same on their own exercises.

The baseline, ``GET /bench/pages/empty/``, is defined in this file and mounted beside the
platform's URLs (``ROOT_URLCONF = "bench.pages"``): a login-required view rendering the site
layout (``base.html``) with an empty content block. It pays what every logged-in page pays
(middleware, session and user queries, context processors, the layout) and nothing else, so
p95 over its p95 is the cost of the page's own work. An existing cheap page would measure
something of its own too (the profile page builds a form, the leaderboard queries boards).

Runs on a scratch database ``<name>_pagebench`` beside DATABASE_URL's (dropped first if left
over, and at the end unless ``--keep``), with the Redis in REDIS_URL (``bench.settings``: DEBUG
off). Writes bench/results/pages.json and prints a Markdown table: p50, p95, p95 ÷ baseline p95
and the SQL queries each page makes (counted with CaptureQueriesContext after the run).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse, urlunparse

import psycopg
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, URLResolver, include, path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.grading_api import manage, ratios_to, scratch_database, summarize  # noqa: E402 - after the path is set

if TYPE_CHECKING:  # imported at run time only after django.setup()
    from apps.accounts.models import User
    from apps.exercises.models import Exercise

SUFFIX = "_pagebench"
SETTINGS = "bench.settings"
WORKBOOK = "transformer-math"
# One exercise per answer format (fixtures/workbooks/transformer-math).
EXERCISES = {"0.1": "numeric", "0.3": "choice", "2.5": "order", "0.6": "lines", "8.5": "table", "0.5": "code"}
BASELINE = "/bench/pages/empty/"
PASSWORD = "bench-pass-123"  # noqa: S105 - scratch accounts; the learner is logged in with force_login


# ---- the baseline page, mounted when this module is the URLconf ---------------------------------


@login_required
def empty_page(request: HttpRequest) -> HttpResponse:
    """The site layout with nothing in it, for a logged-in learner."""
    from django.template import engines

    template = engines["django"].from_string('{% extends "base.html" %}{% block content %}{% endblock %}')
    return HttpResponse(template.render({}, request))


def __getattr__(name: str) -> list[URLPattern | URLResolver]:
    """``urlpatterns``, built when Django first resolves a URL (config.urls needs the app registry)."""
    if name != "urlpatterns":
        raise AttributeError(name)
    return [path(BASELINE.strip("/") + "/", empty_page), path("", include("config.urls"))]


# ---- data ---------------------------------------------------------------------------------------


def learner_state(user: User, exercises: dict[str, Exercise], plan: list[tuple[str, int, int, str]]) -> None:
    """Work through exercises as a learner would: ``(number, hints, wrong attempts, end)`` with
    end one of ``solve``, ``reveal`` or ``stop``. Code is graded by the sandbox (not running
    here), so code exercises only get hints and reveals."""
    from apps.core.exceptions import ApplicationError
    from apps.exercises.choices import AnswerFormat
    from apps.exercises.tests.answers import correct_payload, wrong_payload
    from apps.learning import services as learning_services

    for number, hints, wrong, end in plan:
        exercise = exercises[number]
        for _ in range(hints):
            try:
                learning_services.hint_reveal_next(user=user, exercise=exercise)
            except ApplicationError:  # no more hints
                break
        if exercise.format != AnswerFormat.CODE:
            for _ in range(wrong):
                learning_services.attempt_create(user=user, exercise=exercise, payload=wrong_payload(exercise, user))
            if end == "solve":
                learning_services.attempt_create(user=user, exercise=exercise, payload=correct_payload(exercise, user))
        if end == "reveal":
            learning_services.exercise_reveal(user=user, exercise=exercise)


def populate(learners: int, rng: random.Random) -> tuple[User, dict[str, Any]]:
    """The measured learner and ``learners`` others; returns the learner and a summary."""
    from apps.accounts import services as account_services
    from apps.exercises.choices import AnswerFormat
    from apps.exercises.models import Attempt, Exercise
    from apps.progress.models import ExerciseProgress

    exercises = {
        e.number: e
        for e in Exercise.objects.filter(workbook__slug=WORKBOOK, is_active=True).select_related(
            "workbook", "chapter", "current_version"
        )
    }
    for number, fmt in EXERCISES.items():
        assert exercises[number].format == fmt, f"{number} is no longer a {fmt} exercise"
    # The measured pages in every state: solved with hints and misses (0.1, 2.5), missed and not
    # solved (0.3, 8.5), the Debug's buggy lines found but its fix not submitted (0.6), a Build
    # with a hint (0.5); and more solved elsewhere in the workbook.
    plan = [
        ("0.1", 1, 2, "solve"),
        ("0.3", 0, 2, "stop"),
        ("2.5", 1, 1, "solve"),
        ("0.6", 0, 1, "solve"),
        ("8.5", 1, 1, "stop"),
        ("0.5", 1, 0, "stop"),
        ("0.2", 0, 0, "solve"),
        ("0.7", 2, 3, "reveal"),
        ("1.1", 0, 1, "solve"),
        ("1.2", 0, 0, "solve"),
        ("1.5", 0, 0, "solve"),
        ("3.1", 1, 0, "solve"),
        ("4.1", 0, 4, "solve"),
    ]
    learner = account_services.user_create(username="bench-learner", password=PASSWORD)
    learner_state(learner, exercises, plan)

    gradable = [n for n, e in exercises.items() if e.format not in (AnswerFormat.CODE, AnswerFormat.LINES)]
    for i in range(learners):
        other = account_services.user_create(username=f"other{i:04d}", password=PASSWORD)
        picked = rng.sample(gradable, k=rng.randint(3, 15))
        learner_state(
            other,
            exercises,
            [(n, rng.randint(0, 1), rng.randint(0, 3), rng.choice(["solve", "solve", "stop"])) for n in picked],
        )
    summary = {
        "learners": learners + 1,
        "attempts": Attempt.objects.count(),
        "progress_rows": ExerciseProgress.objects.count(),
        "learner_attempts": Attempt.objects.filter(user=learner).count(),
        "learner_solved": ExerciseProgress.objects.filter(user=learner, solved_at__isnull=False).count(),
        "learner_hints": sum(ExerciseProgress.objects.filter(user=learner).values_list("hints_used", flat=True)),
    }
    return learner, summary


# ---- measuring ----------------------------------------------------------------------------------


def measure(
    learner: User, rounds: int, warmup: int, rng: random.Random
) -> tuple[dict[str, list[float]], dict[str, Any]]:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(HTTP_HOST="127.0.0.1", raise_request_exception=True)
    client.force_login(learner)
    paths = {number: f"/w/{WORKBOOK}/{number}/" for number in EXERCISES}
    numbers = list(EXERCISES)

    def get(url: str) -> int:
        response = client.get(url)
        if response.status_code != 200:
            raise RuntimeError(f"{url}: {response.status_code} {response.content[:300]!r}")
        return len(response.content)

    timings: dict[str, list[float]] = {"baseline": [], "workbook": [], "exercise": []}
    timings.update({f"exercise {n}": [] for n in numbers})
    perf = time.perf_counter_ns
    for i in range(warmup + rounds):
        number = numbers[i % len(numbers)]  # the exercise page takes each format in turn
        targets = {"baseline": BASELINE, "workbook": f"/w/{WORKBOOK}/", "exercise": paths[number]}
        order = list(targets)
        rng.shuffle(order)  # interleaved, in a different order each round
        for name in order:
            start = perf()
            get(targets[name])
            elapsed = (perf() - start) / 1e6
            if i >= warmup:
                timings[name].append(elapsed)
                if name == "exercise":
                    timings[f"exercise {number}"].append(elapsed)

    queries: dict[str, int] = {}
    sizes: dict[str, int] = {}
    for name, url in [("baseline", BASELINE), ("workbook", f"/w/{WORKBOOK}/")] + [
        (f"exercise {n}", paths[n]) for n in numbers
    ]:
        with CaptureQueriesContext(connection) as captured:
            sizes[name] = get(url)
        queries[name] = len(captured)
    per_exercise = [queries[f"exercise {n}"] for n in numbers]
    queries["exercise"] = max(per_exercise)
    return timings, {"queries": queries, "exercise_queries_min": min(per_exercise), "bytes": sizes}


def drop_database(url: str) -> None:
    from django.db import connections

    connections.close_all()
    parsed = urlparse(url)
    admin = urlunparse(parsed._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{parsed.path.lstrip("/")}" WITH (FORCE)')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=800, help="requests per page")
    parser.add_argument("--warmup", type=int, default=80)
    parser.add_argument("--learners", type=int, default=100, help="other learners with attempts of their own")
    parser.add_argument("--keep", action="store_true", help="leave the scratch database for inspection")
    args = parser.parse_args()

    database_url = os.environ.get("DATABASE_URL")
    if not database_url or not os.environ.get("REDIS_URL"):
        print("DATABASE_URL and REDIS_URL must point at PostgreSQL and Redis (make bench starts them)", file=sys.stderr)
        return 2
    # No collected static files here (bench.settings keeps WhiteNoise): its warning is noise.
    warnings.filterwarnings("ignore", message="No directory at", category=UserWarning)
    url = scratch_database(database_url, SUFFIX)
    env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": SETTINGS}
    os.environ.update(env)
    try:
        start = time.perf_counter()
        manage(env, "migrate", "--noinput")
        manage(env, "sync_content", "--workbook", WORKBOOK)

        import django

        django.setup()
        from django.test.utils import override_settings

        rng = random.Random(7)
        # Accounts are never logged in with a password here: the slow hasher is not measured.
        with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
            learner, data = populate(args.learners, rng)
        data["setup_s"] = round(time.perf_counter() - start, 1)
        print(f"setup: {json.dumps(data)}", flush=True)
        with override_settings(ROOT_URLCONF="bench.pages"):
            start = time.perf_counter()
            timings, counted = measure(learner, args.rounds, args.warmup, rng)
            measured_s = time.perf_counter() - start
    finally:
        if not args.keep:
            drop_database(url)

    stats = summarize(timings)
    ratios = ratios_to(stats, "baseline")
    report = {
        "rounds": args.rounds,
        "warmup": args.warmup,
        "measured_s": round(measured_s, 1),
        "data": data,
        "stats": stats,
        "ratios_to_baseline": ratios,
        **counted,
    }
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "pages.json").write_text(json.dumps(report, indent=2))

    labels = {
        "baseline": f"baseline `{BASELINE}` (empty layout)",
        "workbook": f"workbook `/w/{WORKBOOK}/`",
        "exercise": "exercise, all six formats",
        **{f"exercise {n}": f"· exercise {n} ({fmt})" for n, fmt in EXERCISES.items()},
    }
    print(f"\n{args.rounds} rounds after {args.warmup} warm-up, interleaved, {measured_s:.0f} s\n")
    print("| page | p50 ms | p95 ms | p95 ÷ baseline | SQL queries | KB |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, s in stats.items():
        ratio = "1.00" if name == "baseline" else f"{ratios[name]['p95']:.2f}"
        q = str(counted["queries"][name])
        if name == "exercise" and counted["exercise_queries_min"] != counted["queries"][name]:
            q = f"{counted['exercise_queries_min']}–{q}"
        size = counted["bytes"].get(name)
        kb = f"{size / 1024:.1f}" if size is not None else ""
        print(f"| {labels[name]} | {s['p50_ms']:.2f} | {s['p95_ms']:.2f} | {ratio} | {q} | {kb} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
