"""Learners driving the private stack over real HTTP, and the books every drill balances afterwards."""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx

from apps.exercises.content.loader import load_workbook
from apps.exercises.content.resolve import resolve
from apps.sandbox.tests.worker import ROOT
from tests.drills.stack import Postgres

CODE = ROOT / "fixtures" / "workbooks" / "transformer-math" / "code"
ATTEMPTS = "/api/v1/workbooks/transformer-math/exercises/{number}/attempts/"
# Exercise 0.2 (LLaMA 7B's parameter count: about one published model, the same numbers for every
# learner): its right answer, computed from the content files as check_content does, and a wrong one.
NUMERIC = "0.2"


def _right_number() -> str:
    spec = load_workbook(ROOT / "fixtures" / "workbooks" / "transformer-math", compute_expected=False)
    exercise = next(e for c in spec.chapters for e in c.exercises if e.number == NUMERIC)
    assert exercise.vary is None, "the drills need an exercise whose answer is the same for every learner"
    answer = resolve(exercise).answer_text
    assert answer is not None
    return answer


RIGHT_NUMBER, WRONG_NUMBER = _right_number(), "1.5B"


def source(path: str, *, sleep_s: float = 0.0) -> str:
    """A file of the exercises' code catalogue; ``sleep_s`` keeps its run in flight that long."""
    text = (CODE / path).read_text()
    return f"import time\n\ntime.sleep({sleep_s})\n\n{text}" if sleep_s else text


# (exercise, file, passes): references must pass, the catalogue's wrong solutions must fail.
SUBMISSIONS = [
    ("0.5", "0.5-param-count/solution.py", True),
    ("0.5", "0.5-param-count/wrong/float_arithmetic.py", False),
    ("5.2", "5.2-stable-softmax/solution.py", True),
    ("5.2", "5.2-stable-softmax/wrong/shifts_by_the_minimum.py", False),
    ("5.4", "5.4-rms-norm/solution.py", True),
    ("5.4", "5.4-rms-norm/wrong/no_eps.py", False),
]


def shape(response: httpx.Response | Exception) -> str:
    """What a client saw, in one word: ``201``, ``503 sandbox_unavailable``, ``500 text/html``..."""
    if isinstance(response, Exception):
        return f"transport {type(response).__name__}"
    ctype = response.headers.get("content-type", "").split(";")[0]
    if ctype == "application/json":
        try:
            body = response.json()
        except ValueError:
            return f"{response.status_code} invalid json"
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            return f"{response.status_code} {body['error'].get('code')}"
        return str(response.status_code)
    return f"{response.status_code} {ctype or 'no content-type'}"


def clear(seen: str) -> bool:
    """A success, or the platform's one error shape (JSON with a code): never HTML, never a dropped connection."""
    return seen[:1] == "2" or (seen[:1] in "45" and " " in seen and "/" not in seen and "invalid" not in seen)


@dataclass
class Learner:
    username: str
    user_id: int
    http: httpx.Client
    expected: dict[int, bool] = field(default_factory=dict)  # attempt id -> should it pass

    def post(self, number: str, body: dict[str, Any]) -> httpx.Response:
        return self.http.post(ATTEMPTS.format(number=number), json=body)

    def answer(self, answer: str) -> httpx.Response:
        response = self.post(NUMERIC, {"answer": answer})
        if response.status_code == 201:
            self.expected[response.json()["id"]] = answer == RIGHT_NUMBER
        return response

    def code(self, number: str, path: str, passes: bool, *, sleep_s: float = 0.0) -> httpx.Response:
        response = self.post(number, {"code": source(path, sleep_s=sleep_s)})
        if response.status_code == 202:
            self.expected[response.json()["id"]] = passes
        return response

    def submit_all(self, *, sleep_s: float = 0.0, count: int | None = None) -> list[int]:
        """Code submissions from SUBMISSIONS in turn (``count`` of them): each must be accepted."""
        ids = []
        for i in range(count if count is not None else len(SUBMISSIONS)):
            number, path, passes = SUBMISSIONS[i % len(SUBMISSIONS)]
            response = self.code(number, path, passes, sleep_s=sleep_s)
            assert response.status_code == 202, (shape(response), response.text[:500])
            ids.append(response.json()["id"])
        return ids


@dataclass
class Flow:
    """A thread answering the numeric exercise every ``every`` s (wrong and right in turn) through a fault.

    Each answer's time and what came back are kept; the drill asks what happened while it was broken.
    """

    learner: Learner
    every: float = 0.1
    seen: list[tuple[float, str]] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> Flow:
        self._thread = threading.Thread(target=self._run, name="drill-answers", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        assert self._thread is not None
        self._thread.join(timeout=30)

    def _run(self) -> None:
        n = 0
        while not self._stop.is_set():
            answer = RIGHT_NUMBER if n % 2 else WRONG_NUMBER
            at = time.monotonic()
            try:
                got: httpx.Response | Exception = self.learner.answer(answer)
            except httpx.HTTPError as exc:
                got = exc
            self.seen.append((at, shape(got)))
            n += 1
            self._stop.wait(max(0.0, self.every - (time.monotonic() - at)))

    def between(self, start: float, end: float) -> Counter[str]:
        return Counter(s for at, s in self.seen if start <= at < end)

    def first_after(self, start: float, ok: str = "201") -> float | None:
        return next((at for at, s in self.seen if at >= start and s == ok), None)


# ---- the books -----------------------------------------------------------------------------------


def attempts(pg: Postgres, ids: list[int]) -> dict[int, dict[str, Any]]:
    rows = pg.rows(
        "SELECT id, status, verdict, outcome, counted, claims, details FROM exercises_attempt WHERE id = ANY(%s)", ids
    )
    return {r[0]: dict(zip(("id", "status", "verdict", "outcome", "counted", "claims", "details"), r, strict=True))
            for r in rows}  # fmt: skip


def pending(pg: Postgres, ids: list[int]) -> dict[int, str]:
    """Attempts among ``ids`` not final yet, with their state (for a deadline's message)."""
    return {i: a["status"] for i, a in attempts(pg, ids).items() if a["status"] in ("queued", "running")}


def assert_books_balance(pg: Postgres, learner: Learner) -> None:
    """Nothing graded twice, nothing passed wrongly, nothing counted that was not graded.

    - every attempt the API accepted exists and is final; a graded one has the verdict its answer deserves;
    - per exercise, progress counts exactly the graded, counted attempts (each once);
    - points: the learner's total is the sum of what each exercise earned, and an exercise earns only
      if its first solve is a correct, graded attempt.
    """
    rows = attempts(pg, list(learner.expected))
    assert set(rows) == set(learner.expected), f"accepted but missing: {set(learner.expected) - set(rows)}"
    for attempt_id, passes in learner.expected.items():
        a = rows[attempt_id]
        assert a["status"] in ("graded", "not_graded"), a
        if a["status"] == "graded":
            assert a["verdict"] == ("correct" if passes else "incorrect"), a
    stray = pg.rows(
        "SELECT id, status, verdict FROM exercises_attempt WHERE user_id = %s AND NOT (id = ANY(%s))",
        learner.user_id, list(learner.expected),
    )  # fmt: skip
    assert stray == [], f"attempts written that the API did not answer as accepted: {stray}"
    counts = pg.rows(
        """SELECT e.number, coalesce(p.attempts, 0),
                  (SELECT count(*) FROM exercises_attempt a
                    WHERE a.user_id = %s AND a.exercise_id = e.id AND a.status = 'graded' AND a.counted)
             FROM exercises_exercise e
             LEFT JOIN progress_exerciseprogress p ON p.exercise_id = e.id AND p.user_id = %s
            WHERE e.id IN (SELECT exercise_id FROM exercises_attempt WHERE user_id = %s)""",
        learner.user_id, learner.user_id, learner.user_id,
    )  # fmt: skip
    assert all(progress == graded for _, progress, graded in counts), f"(exercise, progress, graded): {counts}"
    earned = pg.rows(
        """SELECT p.points, a.status, a.verdict FROM progress_exerciseprogress p
             LEFT JOIN exercises_attempt a ON a.id = p.first_solve_attempt_id WHERE p.user_id = %s AND p.points > 0""",
        learner.user_id,
    )
    assert all((status, verdict) == ("graded", "correct") for _, status, verdict in earned), earned
    total = pg.rows("SELECT coalesce(sum(points), 0) FROM progress_learnerstats WHERE user_id = %s", learner.user_id)
    assert total[0][0] == sum(points for points, _, _ in earned), (total, earned)
