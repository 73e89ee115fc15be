"""Sync LTI-linked cohorts' membership from their platform's roster (NRPS) now."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.lti import selectors, services
from apps.lti.exceptions import PlatformUnavailable


class Command(BaseCommand):
    help = "Sync the roster of LTI-linked cohorts (all, or --cohort ID) from the platform."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--cohort", type=int, action="append", default=[], help="A cohort id (repeatable)")

    def handle(self, *args: Any, **options: Any) -> None:
        links = selectors.roster_links().select_related("cohort")
        if options["cohort"]:
            links = links.filter(cohort_id__in=options["cohort"])
        failed = 0
        for link in links:
            try:
                result = services.roster_sync(link_id=link.pk)
            except PlatformUnavailable as error:
                failed += 1
                self.stderr.write(f"{link.cohort} (cohort {link.cohort_id}): the platform did not answer: {error}")
                continue
            self.stdout.write(
                f"{link.cohort} (cohort {link.cohort_id}): {result.added} added, {result.removed} removed"
            )
        if failed:
            raise CommandError(f"{failed} roster(s) not synced.")
