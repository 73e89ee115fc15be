import json
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.exercises.content.loader import LoadError, load_workbook, workbook_dirs
from apps.exercises.content.render import substitute
from apps.exercises.content.resolve import ContentError, resolve
from apps.exercises.grading.numeric import NumericTarget
from apps.exercises.grading.symbolic import SymbolicTarget


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
                if r.parts:
                    item["parts"] = {key: _part(t, r.part_values.get(key)) for key, t in r.parts.items()}
                if spec.skills is not None:
                    item["skills"] = [s.key for s in spec.skills.skills if ex.number in s.exercises]
                if ex.code:
                    item["entry"] = ex.code.entry
                    item["tests"] = len(ex.code.cases)
                exercises.append(item)
        out: dict[str, Any] = {
            "workbook": spec.slug,
            "title": spec.title,
            "count": len(exercises),
            "exercises": exercises,
        }
        if spec.skills is not None:
            out["skills"] = [s.model_dump() for s in spec.skills.skills]
        self.stdout.write(json.dumps(out, indent=2, ensure_ascii=False))


def _part(target: NumericTarget | SymbolicTarget, value: float | None) -> dict[str, Any]:
    if isinstance(target, SymbolicTarget):
        return {"expression": target.text, "symbols": list(target.symbols), "small": list(target.small)}
    return {"answer": value, "unit": target.dim.label(), "answer_text": target.text(), "tolerance": target.tolerance}
