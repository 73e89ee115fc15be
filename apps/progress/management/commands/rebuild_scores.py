"""Recompute every leaderboard row and bucket from the progress rows (PostgreSQL)."""

from typing import Any

from django.core.management.base import BaseCommand

from apps.progress import services


class Command(BaseCommand):
    help = "Rebuild leaderboards (scores and rank buckets) from the learners' progress rows."

    def handle(self, *args: Any, **options: Any) -> None:
        rows = services.scores_rebuild()
        self.stdout.write(f"{rows} leaderboard rows rebuilt")
