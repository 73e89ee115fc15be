import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.exercises.content.loader import LoadError
from apps.exercises.content.report import check_workbooks, fingerprint
from apps.exercises.content.variants import Coverage
from apps.sandbox import selectors as sandbox_selectors
from apps.sandbox.cache import CachedRunner, default_directory
from apps.sandbox.runner import Runner, SandboxUnavailable


class Command(BaseCommand):
    help = (
        "Prove the content sound: formulas evaluate to finite numbers in known units, placeholders "
        "render, answers rounded as asked are accepted and known mistakes rejected, choices and orders "
        "are complete, table cells resolve, and reference solutions pass while starters fail. Checks "
        "every content root (CONTENT_DIRS); a workbook slug in two roots is an error naming both."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workbook", action="append", help="Only these workbooks (slug); repeatable.")
        parser.add_argument("--chapter", default="*", help="Only chapter files matching this glob, e.g. '09-*'.")
        parser.add_argument(
            "--code",
            choices=["sandbox", "skip"],
            default="sandbox",
            help="Run reference, starter and wrong solutions (and compute the expected values tests.py "
            "leaves out) in the sandbox image (default), or run no code at all (no Docker needed; code "
            "exercises are then checked without their runs).",
        )
        parser.add_argument(
            "--record",
            metavar="PATH",
            help="After a full run that passes (every workbook, code in the sandbox), write its output and a "
            "fingerprint of the content (every root of CONTENT_DIRS), the checking code and the image to PATH (make test does; the suite "
            "then reads it instead of checking the same inputs again).",
        )
        parser.add_argument(
            "--no-cache",
            action="store_true",
            help="Run every solution again. By default a sandbox run of the same source, tests and limits "
            "in the same image is read from the last check's results (MLSYS_CACHE_DIR, else ~/.cache/mlsys).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        runner: Runner | None = None
        if options["code"] == "sandbox":
            docker_runner = sandbox_selectors.runner("check_content")
            try:
                present = docker_runner.image_present()
            except SandboxUnavailable as exc:
                raise CommandError(
                    f"{exc}. Code runs only in the sandbox: start Docker, or use --code skip to check everything else."
                ) from None
            if not present:
                raise CommandError(
                    f"The sandbox image {docker_runner.image} is missing: build it with "
                    "deploy/sandbox/build-sandbox-image.sh (make sandbox-image), or use --code skip."
                )
            runner = docker_runner if options["no_cache"] else CachedRunner(docker_runner, default_directory())
        try:
            reports = check_workbooks(
                settings.CONTENT_DIRS, options.get("workbook"), runner=runner, chapter_glob=options["chapter"]
            )
        except LoadError as exc:  # a content root missing, or a slug in two roots (naming both files)
            raise CommandError(str(exc)) from None
        failed = 0
        lines: list[str] = []
        for r in reports:
            status = "ok" if not r.problems else f"{len(r.problems)} problem(s)"
            paint = self.style.SUCCESS if not r.problems else self.style.ERROR
            summary = f" ({r.summary()})" if r.summary() else ""
            head = f"{r.slug}: {r.exercises} exercises, "
            self._say(lines, f"{head}{status}{summary}", f"{head}{paint(status)}{summary}")
            if r.consistency is not None and r.consistency.draws:
                counts = ", ".join(f"{d.number} {d.distinct}" for d in r.consistency.draws)
                self._say(lines, f"  distinct variants in 1,000 draws: {counts}")
            for problem in r.problems:
                self._say(lines, f"  - {problem}")
            for warning in r.warnings:
                self._say(lines, f"  ~ warning: {warning}", self.style.WARNING(f"  ~ warning: {warning}"))
            failed += len(r.problems)
        if isinstance(runner, CachedRunner):
            self._say(
                lines,
                f"code runs: {runner.misses} in the sandbox, {runner.hits} unchanged since a check "
                f"of the same image ({runner.directory})",
            )
        if len(reports) > 1:
            total = sum((r.coverage for r in reports), Coverage())
            checked = [r.consistency for r in reports if r.consistency is not None]
            numeric = sum(c.numeric_derive for c in checked)
            shared = sum(c.numeric_derive_collision for c in checked)
            draws = [d for c in checked for d in c.draws]
            meet = sum(d.collision for d in draws) / len(draws) if draws else 0.0
            differ = (
                f"; two learners differ on {100 * (1 - shared / numeric):.0f}% of numeric Derive" if numeric else ""
            )
            self._say(
                lines,
                f"all workbooks: {total.text()}{differ}, share numbers on {100 * meet:.1f}% of varying exercises",
            )
        if failed:
            raise CommandError(f"{failed} content problem(s)")
        full = runner is not None and not options.get("workbook") and options["chapter"] == "*"
        if options.get("record") and full:
            record = Path(options["record"])
            record.parent.mkdir(parents=True, exist_ok=True)
            image = sandbox_selectors.runner("check_content").image
            text = "\n".join(lines) + "\n"
            record.write_text(json.dumps({"fingerprint": fingerprint(settings.CONTENT_DIRS, image), "output": text}))

    def _say(self, lines: list[str], text: str, painted: str | None = None) -> None:
        """Write a line (``painted``: the same with colours), and keep it for ``--record``."""
        lines.append(text)
        self.stdout.write(painted if painted is not None else text)
