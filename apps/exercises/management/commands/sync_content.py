from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.exercises import services
from apps.exercises.content.loader import LoadError, load_workbook, workbook_dirs


class Command(BaseCommand):
    help = "Load workbooks from the content files (idempotent; never deletes attempts)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workbook", help="Only this workbook (slug).")

    def handle(self, *args: Any, **options: Any) -> None:
        dirs = list(workbook_dirs(settings.CONTENT_DIR, options.get("workbook")))
        if not dirs:
            raise CommandError(f"no workbooks found under {settings.CONTENT_DIR}")
        for folder in dirs:
            try:
                spec = load_workbook(folder)
            except LoadError as exc:
                raise CommandError(str(exc)) from None
            report = services.workbook_sync(spec=spec)
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
