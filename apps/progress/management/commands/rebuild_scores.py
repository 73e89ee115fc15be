"""Recompute every leaderboard row and bucket from the progress rows (PostgreSQL)."""

from typing import Any

from django.core.management.base import BaseCommand

from apps.progress import services


class Command(BaseCommand):
    help = "Rebuild leaderboards (scores and rank buckets) from the learners' progress rows."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--slots",
            action="store_true",
            help="Only recount the rank slots from the score rows (online: boards stay readable).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["slots"]:
            self.stdout.write(f"{services.slots_rebuild()} rank slot rows rebuilt")
            return
        rows = services.scores_rebuild()
        self.stdout.write(f"{rows} leaderboard rows rebuilt")
