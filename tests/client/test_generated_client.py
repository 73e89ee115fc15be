"""A client generated from the live server's OpenAPI schema drives a whole course, and nothing else.

openapi-python-client (a pinned dev dependency; it works offline: the schema is a file) generates
the typed ``mlsys_client`` package from ``/api/schema/`` into a temporary folder, at test time, so it
is always the client of the schema as served. examples/course_with_generated_client.py, the README's
runnable example, is the journey: this test runs it on fresh accounts, with the session's sandbox
worker grading the code, and checks what the client read against the database.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
from knox.models import AuthToken

from apps.accounts import services as account_services
from apps.accounts.models import Role, User
from apps.exercises.models import Attempt
from apps.progress.models import ExerciseProgress
from apps.sandbox.tests.worker import ROOT, WorkerProcess

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("client")]
PASSWORD = "client-pass-Vb7!q"  # test accounts only
EXAMPLE = ROOT / "examples" / "course_with_generated_client.py"
CONFIG = ROOT / "examples" / "openapi-client.yaml"
GENERATOR = Path(sys.executable).parent / "openapi-python-client"


def generate_client(live_url: str, into: Path) -> float:
    """Fetch the schema the server serves and generate the client package from it; the seconds it took."""
    started = time.monotonic()
    response = httpx.get(f"{live_url}/api/schema/", params={"format": "json"}, timeout=60)
    assert response.status_code == 200, response.text[:500]
    schema = into / "schema.json"
    schema.write_bytes(response.content)
    result = subprocess.run(  # noqa: S603 - our pinned generator on our own schema
        [
            str(GENERATOR),
            "generate",
            "--path",
            str(schema),
            "--config",
            str(CONFIG),
            "--meta",
            "none",
            "--output-path",
            str(into / "mlsys_client"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    # The generator reports what it could not understand as warnings, and still exits 0.
    assert "Warning" not in result.stdout + result.stderr, result.stdout + result.stderr
    return time.monotonic() - started


@pytest.fixture(scope="module")
def client_dir(live_url: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the ``mlsys_client`` package generated from the live server's schema."""
    into = tmp_path_factory.mktemp("client")
    seconds = generate_client(live_url, into)
    print(f"client generated in {seconds:.1f} s")
    return into


@pytest.fixture
def example(client_dir: Path) -> Iterator[ModuleType]:
    """The example script, importing the freshly generated client."""
    sys.path.insert(0, str(client_dir))
    spec = importlib.util.spec_from_file_location("course_with_generated_client", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(client_dir))
        for name in [n for n in sys.modules if n == spec.name or n.split(".")[0] == "mlsys_client"]:
            del sys.modules[name]


def test_the_example_type_checks_against_the_generated_client(client_dir: Path) -> None:
    """The client is typed: a field the schema renames or makes nullable fails here, by name."""
    result = subprocess.run(  # noqa: S603 - mypy on our own example
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--follow-imports=silent",
            "--cache-dir",
            str(client_dir / ".mypy"),
            str(EXAMPLE),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=ROOT,
        env={**os.environ, "MYPYPATH": str(client_dir)},
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_generated_client_drives_a_whole_course(
    example: Any, live_url: str, e2e_db: str, sandbox_worker: WorkerProcess
) -> None:
    assert sandbox_worker.alive()
    learner = account_services.user_create(username=f"{e2e_db}learner", password=PASSWORD)
    teacher = account_services.user_create(username=f"{e2e_db}teacher", password=PASSWORD, role=Role.INSTRUCTOR)
    run = example.course(
        live_url,
        learner.username,
        PASSWORD,
        example.content_answer_key(),
        (teacher.username, PASSWORD),
        f"{e2e_db} cohort",
    )
    print(example.report(run))  # shown with -s, and on failure

    assert set(run.workbooks) == {"transformer-math", "lm-from-scratch", "systems-serving", "scaling-book", "roofline"}
    assert run.verdicts == {
        "numeric": ["incorrect", "correct"],
        "choice": ["correct"],
        "order": ["correct"],
        "table": ["correct"],
        "parts": ["correct"],
        "code": ["queued", "correct"],
    }
    assert run.picks["code"].kind == "build"
    assert run.code_tests and all(t["passed"] for t in run.code_tests), run.code_tests

    # What the client read is what the database holds.
    solved = ExerciseProgress.objects.filter(user=learner, solved_at__isnull=False)
    assert {(p.exercise.workbook.slug, p.exercise.number) for p in solved.select_related("exercise__workbook")} == {
        (p.slug, p.number) for p in run.picks.values()
    }
    assert Attempt.objects.filter(user=learner).count() == 7  # numeric twice, five others once
    revealed = ExerciseProgress.objects.get(user=learner, revealed_at__isnull=False)
    assert (revealed.exercise.workbook.slug, revealed.exercise.number) == (run.revealed.slug, run.revealed.number)
    assert type(run.reveal.solution).__name__ == "NumericSolution"
    assert run.reveal.state.revealed and not run.reveal.state.solved

    by_slug: dict[str, int] = {}
    for pick in run.picks.values():
        by_slug[pick.slug] = by_slug.get(pick.slug, 0) + 1
    assert {w.slug: w.solved for w in run.progress.workbooks if w.solved} == by_slug
    assert (run.streak.current, run.streak.best, run.streak.solves) == (1, 1, 6)
    assert run.streak.solved_today and run.streak.points > 0
    assert run.board.me is not None and run.board.me.username == learner.username
    assert run.board.me.points == run.streak.points == run.progress.streak.points
    assert run.cohort_board.me is not None and (run.cohort_board.me.rank, run.cohort_board.ranked) == (1, 1)

    # The instructor's view of the cohort.
    assert run.cohort.role == "member" or str(run.cohort.role) == "member"
    (row,) = run.cohort_progress.learners
    assert row.username == learner.username
    assert {w.workbook: w.solved for w in row.workbooks if w.solved} == by_slug
    numeric = run.picks["numeric"]
    stats = {s.number: s for s in run.cohort_stats[numeric.slug]}
    assert (stats[numeric.number].attempts, stats[numeric.number].learners, stats[numeric.number].solved) == (2, 1, 1)
    assert stats[numeric.number].solve_rate == 1.0
    if run.revealed.slug == numeric.slug:
        assert stats[run.revealed.number].reveal_share == 1.0
    tried = {(slug, s.number) for slug, rows in run.cohort_stats.items() for s in rows if s.learners}
    assert tried == {(p.slug, p.number) for p in run.picks.values()} | {(run.revealed.slug, run.revealed.number)}
    assert User.objects.filter(username__startswith=e2e_db).count() == 2
    # Signed out at the end: the learner's token is refused, and neither account keeps one.
    assert run.after_sign_out == 401
    assert not AuthToken.objects.filter(user__username__startswith=e2e_db).exists()
