import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.exercises import selectors, services
from apps.exercises.content import source
from apps.exercises.content.loader import Expected, LoadError, load_workbook, workbook_folders
from apps.sandbox import queued
from apps.sandbox.runner import Runner


class Command(BaseCommand):
    help = (
        "Load workbooks from the content files of every content root (CONTENT_DIRS; idempotent; never "
        "deletes attempts). Expected values a "
        "tests.py leaves out are kept from the last sync of the same code, else computed by running the "
        "reference solution in the sandbox: this process's Docker Engine when it has the sandbox image, "
        "else a ready sandbox worker. Without either, the exercises that need such a run are left as "
        "they are (or, new, left out) and named."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workbook", help="Only this workbook (slug).")
        parser.add_argument(
            "--wait-for-sandbox",
            type=float,
            default=0.0,
            metavar="SECONDS",
            help="When code exercises need a run and no sandbox is there yet, wait this long for a sandbox "
            "worker to be ready, then sync them (the web container's first start, beside a starting worker).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:  # every content root; a slug in two of them is an error naming both files
            dirs = workbook_folders(options.get("workbook"), roots=settings.CONTENT_DIRS)
        except LoadError as exc:
            raise CommandError(str(exc)) from None
        if not dirs:
            raise CommandError(f"no workbooks found under {', '.join(map(str, settings.CONTENT_DIRS))}")
        self._skipped = {}
        runner, why = queued.command_runner("sync_content")
        pending = [folder for folder in dirs if self._sync(folder, runner)]
        if pending and runner is None and options["wait_for_sandbox"] > 0:
            deadline = time.monotonic() + options["wait_for_sandbox"]
            self.stdout.write(f"waiting up to {options['wait_for_sandbox']:.0f} s for a sandbox worker")
            while runner is None and time.monotonic() < deadline:
                time.sleep(2.0)
                runner, why = queued.command_runner("sync_content")
            if runner is not None:
                pending = [folder for folder in pending if self._sync(folder, runner)]
        skipped = [name for folder in pending for name in self._skipped.get(folder.name, [])]
        if skipped:
            self.stderr.write(
                self.style.WARNING(
                    f"{len(skipped)} code exercise(s) were not synced: their tests.py leaves expected values "
                    "to be computed by running solution.py, which happens only in the sandbox, and there is "
                    f"none here ({why or 'no sandbox worker is ready'}). Those already in the database are "
                    "kept as they were; new ones are missing. Start Docker, build the image with "
                    "`make sandbox-image` (or start a sandbox worker), then run `manage.py sync_content` again."
                )
            )

    _skipped: dict[str, list[str]]  # workbook slug -> its code exercises left for want of a sandbox

    def _sync(self, folder: Path, runner: Runner | None) -> bool:
        """Sync one workbook; True when some of its code exercises were left for want of a sandbox."""
        expected = Expected(runner=runner, known=selectors.code_synced(slug=folder.name), skip_unavailable=True)
        try:
            spec = load_workbook(folder, expected=expected)
            texts = source.workbook_texts(folder)  # each chapter file's text as written: the admin's downloads
        except LoadError as exc:
            raise CommandError(str(exc)) from None
        report = services.workbook_sync(spec=spec, keep=frozenset(expected.skipped), sources=texts)
        self.stdout.write(
            f"{report.workbook}: {len(report.created)} created, {len(report.new_versions)} new versions, "
            f"{len(report.updated)} updated, {report.unchanged} unchanged, {len(report.retired)} retired"
        )
        if report.new_versions:
            self.stdout.write(f"  new versions (answers changed): {', '.join(report.new_versions)}")
        if report.renumbered:
            self.stdout.write(f"  renumbered (same exercise, attempts kept): {', '.join(report.renumbered)}")
        if report.retired:
            self.stdout.write(f"  retired (no longer in the files): {', '.join(report.retired)}")
        names = [f"{number} ({key})" for key, number in expected.skipped.items()]
        self._skipped[folder.name] = names
        if names:
            self.stdout.write(self.style.WARNING(f"  not synced (they need the sandbox): {', '.join(names)}"))
        return bool(expected.skipped)
