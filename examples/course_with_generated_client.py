"""A whole course driven through a Python client generated from the OpenAPI schema, and nothing else.

Generate the client from a running server, then run this script against it (README, "A generated
client"):

    openapi-python-client generate --url http://127.0.0.1:8000/api/schema/ \\
        --config examples/openapi-client.yaml --meta none --output-path var/client/mlsys_client
    PYTHONPATH=var/client python examples/course_with_generated_client.py http://127.0.0.1:8000 \\
        student student-demo-pass --instructor instructor instructor-demo-pass

What it does, every call through the generated ``mlsys_client``: get a token; list the workbooks
and their exercises; answer a numeric exercise wrong, then right; answer a choice, an order, a table
and a multi-part exercise; submit a Build's code and poll the attempt until the sandbox's verdict;
reveal another exercise; read progress, streak and the leaderboards. With ``--instructor`` it first
creates a cohort that the learner joins, and afterwards reads the cohort's progress table and
per-exercise statistics. Last, it signs out (revokes its tokens).

The answers are what a learner would type. The script takes them from this checkout's content
(``content_answer_key``: the workbooks' solutions, the way apps/exercises/tests compute them), which
needs the server's settings in the environment, since choice and step ids are opaque per server
(``make run``'s defaults need nothing). tests/client/ runs the same journey in ``make test``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from mlsys_client import AuthenticatedClient, Client
from mlsys_client.api.v1 import (
    attempts_retrieve,
    auth_token_create,
    auth_token_destroy,
    cohorts_create,
    cohorts_exercise_stats,
    cohorts_join,
    cohorts_progress,
    exercise_attempts_create,
    exercise_reveal,
    exercises_list,
    exercises_retrieve,
    leaderboard_retrieve,
    me_retrieve,
    progress_retrieve,
    streak_retrieve,
    workbooks_list,
)
from mlsys_client.models import (
    AssignmentInRequest,
    AttemptOut,
    AttemptResultOut,
    BoardOut,
    ChoiceAnswerInRequest,
    ChoiceWidget,
    CodeAnswerInRequest,
    CodeWidget,
    CohortInRequest,
    CohortOut,
    CohortProgressOut,
    ErrorOut,
    ExerciseDetailOut,
    ExerciseStatsOut,
    ExerciseSummaryOut,
    JoinInRequest,
    NumericAnswerInRequest,
    NumericWidget,
    OrderAnswerInRequest,
    OrderWidget,
    PartsAnswerInRequest,
    PartsWidget,
    ProgressOut,
    RevealOut,
    StreakOut,
    TableAnswerInRequest,
    TableWidget,
    TokenInRequest,
    TokenOut,
    WorkbookOut,
)
from mlsys_client.types import Response

ROOT = Path(__file__).resolve().parents[1]
T = TypeVar("T")

AnswerKey = Callable[[str, str, bool, str], dict[str, Any]]
"""(workbook slug, exercise number, right?, learner's username) -> the attempt's body: the right
answer on that learner's own numbers, or a wrong one."""

# The answer formats the journey answers, each with its request model and the widget it expects.
BODIES: dict[str, Any] = {
    "numeric": NumericAnswerInRequest,
    "choice": ChoiceAnswerInRequest,
    "order": OrderAnswerInRequest,
    "table": TableAnswerInRequest,
    "parts": PartsAnswerInRequest,
    "code": CodeAnswerInRequest,
}
WIDGETS: dict[str, type] = {
    "numeric": NumericWidget,
    "choice": ChoiceWidget,
    "order": OrderWidget,
    "table": TableWidget,
    "parts": PartsWidget,
    "code": CodeWidget,
}


class ApiError(Exception):
    """The server answered something other than what the journey expected."""


def expect(response: Response[Any], status: int, model: type[T]) -> T:
    """The parsed body, if the status and the generated model are the expected ones."""
    parsed = response.parsed
    if response.status_code != status or not isinstance(parsed, model):
        raise ApiError(
            f"expected {status} {model.__name__}, got {int(response.status_code)} "
            f"{type(parsed).__name__}: {response.content[:500]!r}"
        )
    return parsed


@dataclass(frozen=True)
class Pick:
    slug: str
    number: str
    format: str
    kind: str

    def __str__(self) -> str:
        return f"{self.slug} {self.number} ({self.format}, {self.kind})"


@dataclass
class CourseRun:
    """What the journey saw, for a test to assert on and the script to print."""

    learner: str
    workbooks: list[str] = field(default_factory=list)
    picks: dict[str, Pick] = field(default_factory=dict)
    verdicts: dict[str, list[str]] = field(default_factory=dict)
    code_polls: int = 0
    code_seconds: float = 0.0
    after_sign_out: int = 0  # the status of a request with the learner's token once it was revoked
    code_tests: Any = None
    revealed: Pick | None = None
    reveal: RevealOut | None = None
    progress: ProgressOut | None = None
    streak: StreakOut | None = None
    board: BoardOut | None = None
    cohort: CohortOut | None = None
    cohort_board: BoardOut | None = None
    cohort_progress: CohortProgressOut | None = None
    cohort_stats: dict[str, list[ExerciseStatsOut]] = field(default_factory=dict)


def sign_in(base_url: str, username: str, password: str, *, timeout: float = 30.0) -> AuthenticatedClient:
    """A token for the account, and a client that sends it as `Authorization: Token <key>`."""
    import httpx

    anonymous = Client(base_url=base_url, raise_on_unexpected_status=True, timeout=httpx.Timeout(timeout))
    response = auth_token_create.sync_detailed(
        client=anonymous, body=TokenInRequest(username=username, password=password)
    )
    token = expect(response, 200, TokenOut)
    return AuthenticatedClient(
        base_url=base_url,
        token=token.token,
        prefix="Token",
        raise_on_unexpected_status=True,
        timeout=httpx.Timeout(timeout),
    )


def all_exercises(client: AuthenticatedClient, slug: str) -> Iterator[ExerciseSummaryOut]:
    """Every exercise of a workbook, following the paginated list page by page."""
    page_number = 1
    while True:
        response = exercises_list.sync_detailed(slug, client=client, page=page_number)
        if response.status_code != 200 or response.parsed is None or isinstance(response.parsed, ErrorOut):
            raise ApiError(f"exercises of {slug}: {int(response.status_code)} {response.content[:300]!r}")
        page = response.parsed
        yield from page.results
        if not page.next_:
            return
        page_number += 1


def pick_exercises(client: AuthenticatedClient, slugs: list[str]) -> tuple[dict[str, Pick], Pick]:
    """The first exercise of each format the journey answers (a Build for code), and one more to reveal."""
    picks: dict[str, Pick] = {}
    spare: Pick | None = None
    for slug in slugs:
        for summary in all_exercises(client, slug):
            fmt, kind = str(summary.format_), str(summary.kind)
            pick = Pick(slug, summary.number, fmt, kind)
            wanted = fmt in BODIES and (fmt != "code" or kind == "build")
            if wanted and fmt not in picks:
                picks[fmt] = pick
            elif fmt == "numeric" and spare is None:
                spare = pick
    missing = set(BODIES) - set(picks)
    if missing or spare is None:
        raise ApiError(f"no exercise of format {sorted(missing)} (or none to reveal) in {slugs}")
    return picks, spare


def answer(client: AuthenticatedClient, pick: Pick, body: dict[str, Any], status: int = 201) -> AttemptResultOut:
    request = BODIES[pick.format].from_dict(body)
    response = exercise_attempts_create.sync_detailed(pick.slug, pick.number, client=client, body=request)
    return expect(response, status, AttemptResultOut)


def poll(client: AuthenticatedClient, attempt_id: int, *, deadline_s: float = 180.0) -> tuple[AttemptOut, int]:
    """Follow a code attempt until the sandbox has a verdict (or says it could not grade it)."""
    started, polls = time.monotonic(), 0
    while True:
        polls += 1
        attempt = expect(attempts_retrieve.sync_detailed(attempt_id, client=client), 200, AttemptOut)
        if str(attempt.status) in ("graded", "not_graded"):
            return attempt, polls
        if time.monotonic() - started > deadline_s:
            raise ApiError(f"attempt {attempt_id} still {attempt.status} after {deadline_s:.0f} s")
        time.sleep(0.5)


def learner_journey(client: AuthenticatedClient, username: str, key: AnswerKey, run: CourseRun) -> CourseRun:
    workbooks = expect(workbooks_list.sync_detailed(client=client), 200, list)
    run.workbooks = [w.slug for w in workbooks if isinstance(w, WorkbookOut)]
    run.picks, run.revealed = pick_exercises(client, run.workbooks)

    for fmt, pick in run.picks.items():
        detail = expect(exercises_retrieve.sync_detailed(pick.slug, pick.number, client=client), 200, ExerciseDetailOut)
        if not isinstance(detail.widget, WIDGETS[fmt]):
            raise ApiError(f"{pick}: widget {type(detail.widget).__name__}, expected {WIDGETS[fmt].__name__}")
        verdicts = run.verdicts.setdefault(fmt, [])
        if fmt == "numeric":  # wrong first, then right
            verdicts.append(str(answer(client, pick, key(pick.slug, pick.number, False, username)).verdict))
        if fmt == "code":
            queued = answer(client, pick, key(pick.slug, pick.number, True, username), status=202)
            verdicts.append(str(queued.status))
            started = time.monotonic()
            graded, run.code_polls = poll(client, queued.id)
            run.code_seconds = time.monotonic() - started
            run.code_tests = graded.details.additional_properties.get("tests")
            verdicts.append(str(graded.verdict))
        else:
            verdicts.append(str(answer(client, pick, key(pick.slug, pick.number, True, username)).verdict))

    assert run.revealed is not None
    revealed = exercise_reveal.sync_detailed(run.revealed.slug, run.revealed.number, client=client)
    run.reveal = expect(revealed, 200, RevealOut)
    run.progress = expect(progress_retrieve.sync_detailed(client=client), 200, ProgressOut)
    run.streak = expect(streak_retrieve.sync_detailed(client=client), 200, StreakOut)
    run.board = expect(leaderboard_retrieve.sync_detailed(client=client), 200, BoardOut)
    if run.cohort is not None:
        response = leaderboard_retrieve.sync_detailed(client=client, scope="cohort", cohort=run.cohort.id)
        run.cohort_board = expect(response, 200, BoardOut)
    return run


def course(
    base_url: str,
    username: str,
    password: str,
    key: AnswerKey,
    instructor: tuple[str, str] | None = None,
    cohort_name: str = "Generated-client cohort",
) -> CourseRun:
    """The whole journey: the instructor's cohort (if any), the learner's course, the instructor's view."""
    learner = sign_in(base_url, username, password)
    run = CourseRun(learner=username)
    teacher = sign_in(base_url, *instructor) if instructor else None
    if teacher is not None:
        slugs = [w.slug for w in expect(workbooks_list.sync_detailed(client=teacher), 200, list)]
        body = CohortInRequest(
            name=cohort_name, time_zone="UTC", workbooks=[AssignmentInRequest(workbook=s) for s in slugs]
        )
        cohort = expect(cohorts_create.sync_detailed(client=teacher, body=body), 201, CohortOut)
        if not cohort.join_code:  # only a cohort's instructor sees its code
            raise ApiError(f"cohort {cohort.id} came back without its join code")
        run.cohort = expect(
            cohorts_join.sync_detailed(client=learner, body=JoinInRequest(code=cohort.join_code)), 201, CohortOut
        )
    learner_journey(learner, username, key, run)
    if teacher is not None and run.cohort is not None:
        run.cohort_progress = expect(
            cohorts_progress.sync_detailed(run.cohort.id, client=teacher), 200, CohortProgressOut
        )
        for slug in sorted({p.slug for p in run.picks.values()}):
            stats = expect(
                cohorts_exercise_stats.sync_detailed(run.cohort.id, client=teacher, workbook=slug), 200, list
            )
            run.cohort_stats[slug] = [s for s in stats if isinstance(s, ExerciseStatsOut)]
    # Sign out: each token ends at once (left alone, it would expire: TokenOut.expiry).
    for client in [learner] + ([teacher] if teacher is not None else []):
        signed_out = auth_token_destroy.sync_detailed(client=client)
        if signed_out.status_code != 204:
            raise ApiError(f"sign-out answered {int(signed_out.status_code)}: {signed_out.content[:300]!r}")
    run.after_sign_out = int(me_retrieve.sync_detailed(client=learner).status_code)
    return run


def content_answer_key() -> AnswerKey:
    """Answers from this checkout's content, computed as apps/exercises/tests compute them.

    Choice and step ids are an HMAC of the exercise version under the server's SECRET_KEY, so this
    reads the server's database with the server's settings; a Build's code is its reference
    solution, fixtures/workbooks/<slug>/code/<number>-*/solution.py.
    """
    import os

    import django

    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    django.setup()
    from apps.accounts.models import User
    from apps.exercises.models import Exercise
    from apps.exercises.tests.answers import correct_payload, wrong_payload

    def key(slug: str, number: str, right: bool, username: str) -> dict[str, Any]:
        exercise = Exercise.objects.select_related("current_version").get(workbook__slug=slug, number=number)
        learner = User.objects.get(username=username)  # a varying exercise has numbers of its own per learner
        if right and exercise.format == "code":
            (solution,) = (ROOT / "fixtures" / "workbooks" / slug / "code").glob(f"{number}-*/solution.py")
            return {"code": solution.read_text()}
        return correct_payload(exercise, learner) if right else wrong_payload(exercise, learner)

    return key


def report(run: CourseRun) -> str:
    lines = [f"learner {run.learner}: workbooks {', '.join(run.workbooks)}"]
    for fmt, pick in run.picks.items():
        lines.append(f"  {pick}: {' -> '.join(run.verdicts.get(fmt, []))}")
    lines.append(f"  code: {run.code_polls} polls, {run.code_seconds:.1f} s to a verdict")
    if run.reveal is not None:
        lines.append(f"  revealed {run.revealed}: solution {type(run.reveal.solution).__name__}")
    if run.progress is not None:
        lines.append("  progress: " + ", ".join(f"{w.slug} {w.solved}/{w.total}" for w in run.progress.workbooks))
    if run.streak is not None:
        lines.append(f"  streak: {run.streak.current} day(s), {run.streak.solves} solves, {run.streak.points} points")
    for name, board in (("global", run.board), ("cohort", run.cohort_board)):
        if board is not None:
            me = board.me
            lines.append(f"  {name} board: rank {me.rank if me else '-'} of {board.ranked}")
    if run.cohort is not None:
        lines.append(f"cohort {run.cohort.name!r} ({run.cohort.id}):")
        if run.cohort_progress is not None:
            for row in run.cohort_progress.learners:
                lines.append(
                    f"  {row.username}: " + ", ".join(f"{w.workbook} {w.solved}/{w.total}" for w in row.workbooks)
                )
        for slug, stats in run.cohort_stats.items():
            tried = [s for s in stats if s.attempts or s.learners]
            lines.append(
                f"  {slug}: " + "; ".join(f"{s.number} {s.solved}/{s.learners} in {s.attempts}" for s in tried)
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("base_url", help="the server, e.g. http://127.0.0.1:8000")
    parser.add_argument("username", help="the learner")
    parser.add_argument("password")
    parser.add_argument("--instructor", nargs=2, metavar=("USERNAME", "PASSWORD"), help="also run a cohort")
    parser.add_argument("--cohort-name", default="Generated-client cohort")
    args = parser.parse_args(argv)
    run = course(
        args.base_url.rstrip("/"),
        args.username,
        args.password,
        content_answer_key(),
        tuple(args.instructor) if args.instructor else None,
        args.cohort_name,
    )
    print(report(run))
    return 0


if __name__ == "__main__":
    sys.exit(main())
