from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.exercises.content.report import check_workbooks
from apps.exercises.content.variants import Coverage
from apps.sandbox import selectors as sandbox_selectors
from apps.sandbox.cache import CachedRunner, default_directory
from apps.sandbox.runner import Runner, SandboxUnavailable


class Command(BaseCommand):
    help = (
        "Prove the content sound: formulas evaluate to finite numbers in known units, placeholders "
        "render, answers rounded as asked are accepted and known mistakes rejected, choices and orders "
        "are complete, table cells resolve, and reference solutions pass while starters fail."
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
        reports = check_workbooks(
            settings.CONTENT_DIR, options.get("workbook"), runner=runner, chapter_glob=options["chapter"]
        )
        failed = 0
        for r in reports:
            status = self.style.SUCCESS("ok") if not r.problems else self.style.ERROR(f"{len(r.problems)} problem(s)")
            summary = f" ({r.summary()})" if r.summary() else ""
            self.stdout.write(f"{r.slug}: {r.exercises} exercises, {status}{summary}")
            for problem in r.problems:
                self.stdout.write(f"  - {problem}")
            for warning in r.warnings:
                self.stdout.write(self.style.WARNING(f"  ~ warning: {warning}"))
            failed += len(r.problems)
        if isinstance(runner, CachedRunner):
            self.stdout.write(
                f"code runs: {runner.misses} in the sandbox, {runner.hits} unchanged since a check "
                f"of the same image ({runner.directory})"
            )
        if len(reports) > 1:
            total = sum((r.coverage for r in reports), Coverage())
            self.stdout.write(f"all workbooks: {total.text()}")
        if failed:
            raise CommandError(f"{failed} content problem(s)")
