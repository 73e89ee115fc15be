"""Checking whole workbooks from their files: the core of ``check_content``.

Runnable without Django for authors: ``python -m apps.exercises.content.report [SLUG ...]``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from apps.exercises.content.checks import check_chapter, check_exercise
from apps.exercises.content.loader import LoadError, load_workbook, workbook_dirs
from apps.exercises.content.schema import WorkbookSpec
from apps.sandbox.local import LocalRunner
from apps.sandbox.runner import Runner

DEFAULT_ROOT = Path(__file__).resolve().parents[3] / "fixtures" / "workbooks"


@dataclass
class WorkbookReport:
    slug: str
    exercises: int = 0
    problems: list[str] = field(default_factory=list)
    spec: WorkbookSpec | None = None


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
            spec = load_workbook(folder, chapter_glob=chapter_glob)
        except LoadError as exc:
            report.problems.append(str(exc))
            continue
        report.spec = spec
        for chapter in spec.chapters:
            report.problems += check_chapter(chapter)
            for exercise in chapter.exercises:
                report.exercises += 1
                for problem in check_exercise(exercise, runner=runner):
                    report.problems.append(f"{exercise.number} {exercise.title}: {problem}")
    return reports


def main(argv: list[str]) -> int:
    """``report [SLUG ...] [--chapter GLOB]``, e.g. ``report transformer-math --chapter '03-*'``."""
    chapter_glob = "*"
    if "--chapter" in argv:
        i = argv.index("--chapter")
        chapter_glob = argv[i + 1]
        argv = argv[:i] + argv[i + 2 :]
    # Authors at work: their own code, run locally (check_content runs it in the sandbox).
    reports = check_workbooks(DEFAULT_ROOT, argv or None, runner=LocalRunner(), chapter_glob=chapter_glob)
    failed = False
    for r in reports:
        status = "ok" if not r.problems else f"{len(r.problems)} problem(s)"
        print(f"{r.slug}: {r.exercises} exercises, {status}")
        for p in r.problems:
            print(f"  - {p}")
        failed = failed or bool(r.problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
