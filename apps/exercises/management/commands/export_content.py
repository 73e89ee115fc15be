import json
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.exercises.content.loader import LoadError, load_workbook, workbook_dirs
from apps.exercises.content.render import substitute
from apps.exercises.content.resolve import ContentError, resolve


class Command(BaseCommand):
    help = "Print a workbook as JSON: every exercise's number, kind, format, and evaluated answers."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workbook", required=True, help="Workbook slug.")

    def handle(self, *args: Any, **options: Any) -> None:
        dirs = list(workbook_dirs(settings.CONTENT_DIR, options["workbook"]))
        if not dirs:
            raise CommandError(f"no workbook {options['workbook']!r} under {settings.CONTENT_DIR}")
        try:
            spec = load_workbook(dirs[0])
        except LoadError as exc:
            raise CommandError(str(exc)) from None
        exercises = []
        for chapter in spec.chapters:
            for ex in chapter.exercises:
                try:
                    r = resolve(ex)
                except ContentError as exc:
                    raise CommandError(f"{ex.number}: {exc}") from None
                item: dict[str, Any] = {
                    "number": ex.number,
                    "chapter": chapter.number,
                    "title": ex.title,
                    "kind": ex.kind,
                    "format": ex.format,
                }
                if r.numeric is not None and ex.answer is not None:
                    item.update(
                        answer=r.scope["answer"],
                        unit=ex.answer.unit,
                        answer_text=r.answer_text,
                        tolerance=ex.answer.tolerance,
                        alternates=[a.value / (r.numeric.value / r.scope["answer"]) if r.scope["answer"] else a.value
                                    for a in r.numeric.alternates],
                    )  # fmt: skip
                if ex.options:
                    item["correct_options"] = [substitute(o.text, r.scope) for o in ex.options if o.correct]
                if ex.steps:
                    item["order"] = [s.id for s in ex.steps]
                    if ex.constraints:
                        item["constraints"] = [list(c) for c in ex.constraints]
                if ex.buggy_lines:
                    item["buggy_lines"] = ex.buggy_lines
                if r.cells:
                    item["cells"] = {cid: {"answer": t.value, "unit": t.dim.label(), "tolerance": t.tolerance}
                                     for cid, t in r.cells.items()}  # fmt: skip
                if ex.code:
                    item["entry"] = ex.code.entry
                    item["tests"] = len(ex.code.cases)
                exercises.append(item)
        out = {"workbook": spec.slug, "title": spec.title, "count": len(exercises), "exercises": exercises}
        self.stdout.write(json.dumps(out, indent=2, ensure_ascii=False))
