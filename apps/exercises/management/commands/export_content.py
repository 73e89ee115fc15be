import json
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.exercises.content.export import ExportError, workbook_export


class Command(BaseCommand):
    help = "Print a workbook as JSON: every exercise's number, kind, format, and evaluated answers."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workbook", required=True, help="Workbook slug.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            out = workbook_export(settings.CONTENT_DIR, options["workbook"])
        except ExportError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(json.dumps(out, indent=2, ensure_ascii=False))
