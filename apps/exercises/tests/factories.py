"""factory_boy factories for workbooks, chapters and exercises.

An exercise comes with a real current version (a numeric spec from ``synthetic.numeric``), so it
can be attempted through ``attempt_create`` and shown on its pages. For a whole workbook synced as
the content files are, use the ``synthetic_workbook`` fixture instead.
"""

from __future__ import annotations

from typing import Any

from factory.declarations import LazyAttribute, LazyAttributeSequence, SelfAttribute, Sequence, SubFactory
from factory.django import DjangoModelFactory
from factory.helpers import post_generation

from apps.exercises.choices import AnswerFormat, ExerciseKind
from apps.exercises.content import cache
from apps.exercises.content.resolve import grading_hash
from apps.exercises.models import Chapter, Exercise, ExerciseVersion, Workbook
from apps.exercises.tests import synthetic


class WorkbookFactory(DjangoModelFactory[Workbook]):
    class Meta:
        model = Workbook
        django_get_or_create = ("slug",)

    slug = Sequence(lambda n: f"book-{n}")
    title = LazyAttribute(lambda w: f"Book {w.slug}")
    summary = "A workbook made by a factory."
    position = 90


class ChapterFactory(DjangoModelFactory[Chapter]):
    class Meta:
        model = Chapter

    workbook = SubFactory(WorkbookFactory)
    number = Sequence(lambda n: n + 1)
    title = LazyAttribute(lambda c: f"Chapter {c.number}")


class ExerciseFactory(DjangoModelFactory[Exercise]):
    """``ExerciseFactory.create(chapter=..., number="1.2", version__a=3)`` (``.create`` is typed): the answer
    is ``a`` × ``b``."""

    class Meta:
        model = Exercise
        skip_postgeneration_save = True

    chapter = SubFactory(ChapterFactory)
    workbook = SelfAttribute("chapter.workbook")
    key = Sequence(lambda n: f"exercise-{n}")
    number = LazyAttributeSequence(lambda e, n: f"{e.chapter.number}.{n + 1}")
    position = Sequence(int)
    title = LazyAttribute(lambda e: f"Exercise {e.key}")
    kind = ExerciseKind.DERIVE
    format = AnswerFormat.NUMERIC
    difficulty = 1

    @post_generation
    def version(obj: Exercise, create: bool, extracted: Any, **givens: Any) -> None:  # noqa: N805 - factory_boy's hook
        if not create:
            return
        spec = synthetic.numeric(obj.key, obj.number, difficulty=obj.difficulty, **givens)
        spec_json = {**spec.model_dump(mode="json"), "title": obj.title}
        obj.current_version = ExerciseVersion.objects.create(
            exercise=obj,
            version=1,
            spec=spec_json,
            grading_hash=grading_hash(spec),
            content_hash=cache.content_hash(spec_json),
        )
        obj.save(update_fields=["current_version"])
        cache.bump_generation()  # as every content write does: no process keeps a stale lookup
