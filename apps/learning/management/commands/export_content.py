import json
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.accounts.models import User
from apps.exercises.content import variants
from apps.exercises.content.export import ExportError, VariantOf, workbook_export
from apps.exercises.content.schema import ChapterSpec, ExerciseSpec
from apps.exercises.models import Chapter, Workbook
from apps.progress import selectors as progress_selectors


class Command(BaseCommand):
    help = (
        "Print a workbook as JSON: every exercise's number, kind, format, and evaluated answers — on the "
        "seed's numbers (round 0), or on a learner's (--learner ID --round N)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workbook", required=True, help="Workbook slug.")
        parser.add_argument(
            "--round",
            type=int,
            default=None,
            help="A learner's round of numbers: 1 is their first, one more per new numbers or review; 0 the seed's.",
        )
        parser.add_argument("--learner", type=int, default=None, help="The learner's user id (with --round).")

    def handle(self, *args: Any, **options: Any) -> None:
        round_, learner = options["round"], options["learner"]
        if round_ is not None and round_ < 0:
            raise CommandError("--round is 0 (the seed's numbers) or more.")
        if learner is None and round_:
            raise CommandError("--round N above 0 is a learner's: name them with --learner ID.")
        variant_of = (
            None if learner is None else self._learner(options["workbook"], learner, 1 if round_ is None else round_)
        )
        try:
            out = workbook_export(settings.CONTENT_DIRS, options["workbook"], variant_of=variant_of)
        except ExportError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(json.dumps(out, indent=2, ensure_ascii=False))

    def _learner(self, slug: str, user_id: int, round_: int) -> VariantOf:
        """The numbers this learner gets on their round ``round_``, as the platform draws them."""
        if not User.objects.filter(pk=user_id).exists():
            raise CommandError(f"No user with id {user_id}.")
        workbook = Workbook.objects.filter(slug=slug).first()
        if workbook is None:
            raise CommandError(f"Workbook {slug!r} is not loaded: run sync_content first.")
        seed, offset = progress_selectors.numbers_seed(user_id=user_id, workbook_id=workbook.pk)
        chapters = dict(Chapter.objects.filter(workbook=workbook).values_list("number", "pk"))

        def variant_of(chapter: ChapterSpec, exercise: ExerciseSpec) -> variants.Variant:
            if chapter.number not in chapters:
                raise CommandError(f"Chapter {chapter.number} is not loaded: run sync_content first.")
            return variants.variant(
                exercise, seed=seed, chapter=chapters[chapter.number], round=max(0, round_ + offset)
            )

        return variant_of
