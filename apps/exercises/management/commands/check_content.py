from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.exercises.content.report import check_workbooks


class Command(BaseCommand):
    help = (
        "Prove the content sound: formulas evaluate to finite numbers in known units, placeholders "
        "render, answers rounded as asked are accepted and known mistakes rejected, choices and orders "
        "are complete, table cells resolve, and reference solutions pass while starters fail."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workbook", action="append", help="Only these workbooks (slug); repeatable.")
        parser.add_argument("--no-code", action="store_true", help="Skip running reference and starter code.")

    def handle(self, *args: Any, **options: Any) -> None:
        reports = check_workbooks(settings.CONTENT_DIR, options.get("workbook"), run_code=not options["no_code"])
        failed = 0
        for r in reports:
            status = self.style.SUCCESS("ok") if not r.problems else self.style.ERROR(f"{len(r.problems)} problem(s)")
            self.stdout.write(f"{r.slug}: {r.exercises} exercises, {status}")
            for problem in r.problems:
                self.stdout.write(f"  - {problem}")
            failed += len(r.problems)
        if failed:
            raise CommandError(f"{failed} content problem(s)")
