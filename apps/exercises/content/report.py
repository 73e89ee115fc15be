"""Checking whole workbooks from their files: the core of ``check_content``.

Code (reference solutions, starters, wrong solutions, checkers, and the runs that compute expected
values) runs only through the ``runner`` given: the sandbox. Without one, no code runs and expected
values a ``tests.py`` leaves out are not computed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from apps.exercises.content.checks import check_chapter, check_exercise
from apps.exercises.content.consistency import Consistency, check_consistency
from apps.exercises.content.loader import Expected, LoadError, load_workbook, workbook_folders
from apps.exercises.content.resolve import ContentError, resolve
from apps.exercises.content.schema import ExerciseSpec, WorkbookSpec
from apps.exercises.content.tells import choice_tell
from apps.exercises.content.variants import Coverage, coverage
from apps.sandbox.runner import Runner

DEFAULT_ROOT = Path(__file__).resolve().parents[3] / "fixtures" / "workbooks"
# What a check's outcome depends on besides the content: the code that checks it and runs it.
CHECKING_CODE = [Path(__file__).resolve().parents[2], Path(__file__).resolve().parents[3] / "sandbox"]
# One content root, or several (``settings.CONTENT_DIRS``: ours first, then each course's own).
Roots = Path | Sequence[Path]


def as_roots(roots: Roots) -> list[Path]:
    return [roots] if isinstance(roots, Path) else list(roots)


def fingerprint(roots: Roots, image: str) -> str:
    """A digest of everything a full check_content's outcome depends on: every file of every content
    root (in their order; a root added or removed changes it too), the checking and sandbox code, and
    the sandbox image's tag."""
    digest = hashlib.sha256(image.encode())
    files: list[Path] = []
    for root in as_roots(roots):
        digest.update(b"root\0" + str(root).encode() + b"\0")
        files += sorted(p for p in root.rglob("*") if p.is_file())
    files += sorted(p for folder in CHECKING_CODE for p in folder.rglob("*.py") if "/tests/" not in str(p))
    for path in files:
        digest.update(str(path).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def recorded_run(record: Path, roots: Roots, image: str) -> str | None:
    """The output of a passing full check_content recorded at ``record`` (``--record``), if it was
    of exactly these inputs."""
    try:
        data = json.loads(record.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("fingerprint") != fingerprint(roots, image):
        return None
    output = data.get("output")
    return output if isinstance(output, str) else None


@dataclass
class WorkbookReport:
    slug: str
    exercises: int = 0
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    spec: WorkbookSpec | None = None
    single_choices: int = 0  # single-answer choice exercises
    longest_correct: int = 0  # of them, those whose correct option is strictly the longest
    wrong_solutions: int = 0  # plausible wrong solutions run against the hidden tests
    coverage: Coverage = field(default_factory=Coverage)  # how much varies per learner
    consistency: Consistency | None = None  # draws, collisions: one story per learner

    def summary(self) -> str:
        """The counts behind "ok": the length tell over single-answer choices, wrong solutions run."""
        parts = []
        if self.single_choices:
            parts.append(
                f"longest option correct in {self.longest_correct} of {self.single_choices} single-answer choices"
            )
        if self.wrong_solutions:
            parts.append(f"{self.wrong_solutions} wrong solutions must fail")
        if self.coverage.auto_graded:
            parts.append(self.coverage.text())
        if self.consistency is not None and self.consistency.text():
            parts.append(self.consistency.text())
        return "; ".join(parts)


def check_workbooks(
    root: Roots = DEFAULT_ROOT,
    slugs: list[str] | None = None,
    *,
    runner: Runner | None,
    chapter_glob: str = "*",
    consistency: bool = True,
) -> list[WorkbookReport]:
    """Every check of the workbooks under ``root`` (a content root or several; or ``slugs``).
    ``consistency=False`` leaves out what crosses exercises on learners' numbers (consistency.py:
    1,000 draws per varying exercise), for tests about something else. A slug in two roots raises
    ``SlugClash`` (a ``LoadError``) naming both files."""
    reports: list[WorkbookReport] = []
    roots = as_roots(root)
    dirs = [d for d in workbook_folders(roots=roots) if not slugs or d.name in slugs]
    missing = set(slugs or []) - {d.name for d in dirs}
    for slug in sorted(missing):
        where = " or ".join(str(r / slug) for r in roots)
        reports.append(WorkbookReport(slug, problems=[f"no workbook folder {where}"]))
    for folder in dirs:
        report = WorkbookReport(folder.name)
        reports.append(report)
        try:
            spec = load_workbook(
                folder,
                expected=Expected(runner=runner),
                compute_expected=runner is not None,
                chapter_glob=chapter_glob,
            )
        except LoadError as exc:
            report.problems.append(str(exc))
            continue
        report.spec = spec
        report.coverage = coverage(e for c in spec.chapters for e in c.exercises)
        for chapter in spec.chapters:
            report.problems += check_chapter(chapter)
            for exercise in chapter.exercises:
                report.exercises += 1
                for problem in check_exercise(exercise, runner=runner):
                    report.problems.append(f"{exercise.number} {exercise.title}: {problem}")
                _tally(report, exercise)
        if not consistency:
            continue
        report.consistency = check_consistency(spec)
        report.problems += report.consistency.problems
        report.warnings += report.consistency.warnings
    return reports


def _tally(report: WorkbookReport, exercise: ExerciseSpec) -> None:
    """The counts and warnings beside the problems: wrong solutions, and a choice's length tell."""
    if exercise.code is not None:
        report.wrong_solutions += len(exercise.code.wrong)
    try:
        tell = choice_tell(resolve(exercise).spec)
    except ContentError:
        return  # reported as a problem by check_exercise
    if tell is not None:
        report.single_choices += 1
        report.longest_correct += tell.longest_is_correct
        report.warnings += [f"{exercise.number} {exercise.title}: {w}" for w in tell.warnings]
