"""check_content's cache of finished runs, on a real Docker Engine: what it keeps, and what it never does."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from apps.sandbox.cache import CachedRunner
from apps.sandbox.runner import DockerRunner, Job, Limits
from apps.sandbox.verdict import Case, judge

pytestmark = pytest.mark.slow

ADD = "def f(a, b):\n    return a + b\n"


def _job(source: str) -> Job:
    return Job("f", [{"id": "t1", "args": [2, 3], "kwargs": {}}], {"submission.py": source})


def _runner(image: str, tmp_path: Path) -> tuple[CachedRunner, DockerRunner]:
    cold = DockerRunner(image, owner=f"cache-{time.monotonic_ns()}")
    return CachedRunner(cold, tmp_path / "cache"), cold


def test_a_complete_run_is_read_back_and_any_change_runs_again(sandbox_image: str, tmp_path: Path) -> None:
    cached, cold = _runner(sandbox_image, tmp_path)
    limits = Limits(time_s=10.0, cpuset="0")
    first = cached.run(_job(ADD), limits)
    assert first.status == "completed" and first.report is not None
    assert (cached.hits, cached.misses) == (0, 1)

    # The same job on another CPU of the same image: the stored result, no container.
    again = cached.run(_job(ADD), Limits(time_s=10.0, cpuset="1"))
    assert (cached.hits, cached.misses) == (1, 1)
    assert (again.status, again.report, again.exit_code) == (first.status, first.report, first.exit_code)

    # A new process reading the same directory finds it too (a fresh clone on the same machine).
    other = CachedRunner(cold, tmp_path / "cache")
    assert other.run(_job(ADD), limits).report == first.report and other.hits == 1

    # Another source, other test inputs, other limits: each is a run of its own.
    cached.run(_job("def f(a, b):\n    return a - b\n"), limits)
    cached.run(Job("f", [{"id": "t1", "args": [4, 5], "kwargs": {}}], {"submission.py": ADD}), limits)
    cached.run(_job(ADD), Limits(time_s=10.0, memory_mb=256))
    assert (cached.hits, cached.misses) == (1, 4)


def test_a_timeout_is_never_kept(sandbox_image: str, tmp_path: Path) -> None:
    """Whether code meets its time limit can depend on the machine's load: always run it again."""
    cached, _ = _runner(sandbox_image, tmp_path)
    slow = _job("import time\ndef f(a, b):\n    time.sleep(30)\n")
    limits = Limits(time_s=1.0)
    for _ in range(2):
        result = cached.run(slow, limits)
        assert judge(result, [Case("t1", [2, 3], {}, 5)], "f").outcome == "timeout", result
    assert (cached.hits, cached.misses) == (0, 2)
    assert not list((tmp_path / "cache").glob("*.json"))


def test_an_unreadable_entry_is_run_again(sandbox_image: str, tmp_path: Path) -> None:
    cached, _ = _runner(sandbox_image, tmp_path)
    limits = Limits(time_s=10.0)
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / f"{cached.key(_job(ADD), limits)}.json").write_text("{not json")
    assert cached.run(_job(ADD), limits).status == "completed"
    assert (cached.hits, cached.misses) == (0, 1)
    assert cached.run(_job(ADD), limits).status == "completed" and cached.hits == 1
