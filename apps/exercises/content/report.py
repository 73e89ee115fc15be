"""Checking whole workbooks from their files: the core of ``check_content``.

Code (reference solutions, starters, wrong solutions, checkers, and the runs that compute expected
values) runs only through the ``runner`` given: the sandbox. Without one, no code runs and expected
values a ``tests.py`` leaves out are not computed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from apps.exercises.content.checks import check_chapter, check_exercise
from apps.exercises.content.loader import Expected, LoadError, load_workbook, workbook_dirs
from apps.exercises.content.resolve import ContentError, resolve
from apps.exercises.content.schema import ExerciseSpec, WorkbookSpec
from apps.exercises.content.tells import choice_tell
from apps.exercises.content.variants import Coverage, coverage
from apps.sandbox.runner import Runner

DEFAULT_ROOT = Path(__file__).resolve().parents[3] / "fixtures" / "workbooks"


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
        return "; ".join(parts)


def check_workbooks(
    root: Path = DEFAULT_ROOT, slugs: list[str] | None = None, *, runner: Runner | None, chapter_glob: str = "*"
) -> list[WorkbookReport]:
    reports: list[WorkbookReport] = []
    dirs = [d for d in workbook_dirs(root) if not slugs or d.name in slugs]
    missing = set(slugs or []) - {d.name for d in dirs}
    for slug in sorted(missing):
        reports.append(WorkbookReport(slug, problems=[f"no workbook folder {root / slug}"]))
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
