"""Learner-facing output bodies: the one place that names each field. They read the domain objects
(or the small bundles of apps.learning.selectors) directly; the API and the web pages both render
through them (``apps.core.serializers.represent``), so they hold no context and no state.
``apps.exercises.presentation`` alone decides what of an exercise's answer a learner may see."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers

from apps.core.serializers import ComputedField, read_through
from apps.exercises import presentation
from apps.exercises.choices import AnswerFormat, AttemptPart, AttemptStatus, CodeOutcome, ExerciseKind, Verdict
from apps.exercises.content import cache
from apps.exercises.content.render import feedback_html, render
from apps.exercises.models import Attempt, Exercise
from apps.exercises.selectors import chapter_scope
from apps.exercises.serializers import ProgressCountsOut, Solution, Widget
from apps.learning import live
from apps.learning.selectors import (
    AttemptResult,
    ChapterPage,
    ChapterRow,
    ExercisePage,
    ExerciseRow,
    ProgressOnVersion,
    WorkbookRow,
    scenario_members,
)
from apps.progress import srs
from apps.progress.models import ExerciseProgress, ReviewCard, SkillCheck
from apps.sandbox.verdict import learner_view

OptionalSolution = PolymorphicProxySerializer(
    component_name="OptionalSolution", serializers=Solution.serializers, resource_type_field_name="format", many=False
)
AttemptSolution = PolymorphicProxySerializer(
    component_name="AttemptSolution", serializers=Solution.serializers, resource_type_field_name="format", many=False
)


def exercise_url(e: Exercise) -> str:
    return reverse("api:exercise-detail", kwargs={"slug": e.workbook.slug, "number": e.number})


# ---- workbooks and chapters: a WorkbookRow / ChapterRow (apps.learning.selectors) ---------------


class WorkbookOut(serializers.Serializer[Any]):
    slug = serializers.CharField(source="workbook.slug")
    title = serializers.CharField(source="workbook.title")
    summary = serializers.CharField(source="workbook.summary")
    prerequisites = serializers.CharField(source="workbook.prerequisites")
    progress = ProgressCountsOut(source="counts")
    url = ComputedField()

    @extend_schema_field(OpenApiTypes.STR)
    def get_url(self, row: WorkbookRow) -> str:
        return reverse("api:workbook-detail", kwargs={"slug": row.workbook.slug})


class ChapterOut(serializers.Serializer[Any]):
    number = serializers.IntegerField(source="chapter.number")
    title = serializers.CharField(source="chapter.title")
    progress = ProgressCountsOut(source="counts")
    url = ComputedField()

    @extend_schema_field(OpenApiTypes.STR)
    def get_url(self, row: ChapterRow) -> str:
        return reverse("api:chapter-detail", kwargs={"slug": row.workbook.slug, "number": row.chapter.number})


class WorkbookDetailOut(WorkbookOut):
    chapters = ChapterOut(many=True)


# ---- a learner's state on an exercise: an ExerciseProgress (a fresh one when never tried) -------


class StateOut(serializers.Serializer[Any]):
    solved = serializers.BooleanField()
    revealed = serializers.BooleanField()
    attempts = serializers.IntegerField()
    hints_used = serializers.IntegerField()
    solved_at = serializers.DateTimeField(allow_null=True)
    revealed_at = serializers.DateTimeField(allow_null=True)
    reviewing = serializers.BooleanField(
        help_text="A spaced review is under way: the first answer (or revealing) decides the next gap."
    )
    solved_with_note = ComputedField(
        help_text="Solved only through an answer accepted with a unit note (the GiB figure labelled GB); "
        "a correct answer in the unit asked clears it."
    )

    @extend_schema_field(OpenApiTypes.BOOL)
    def get_solved_with_note(self, p: ExerciseProgress) -> bool:
        return p.solved and p.solved_with_note


# ---- exercises: an ExerciseRow / ExercisePage ---------------------------------------------------


class ExerciseSummaryOut(serializers.Serializer[Any]):
    number = serializers.CharField(source="exercise.number")
    title = serializers.CharField(source="exercise.title")
    kind = serializers.ChoiceField(choices=ExerciseKind.choices, source="exercise.kind")
    format = serializers.ChoiceField(choices=AnswerFormat.choices, source="exercise.format")
    difficulty = serializers.IntegerField(source="exercise.difficulty")
    chapter = serializers.IntegerField(source="exercise.chapter.number")
    state = StateOut(source="progress")
    url = ComputedField()

    @extend_schema_field(OpenApiTypes.STR)
    def get_url(self, row: ExerciseRow) -> str:
        return exercise_url(row.exercise)


class ChapterDetailOut(ChapterOut):
    intro_html = ComputedField()
    exercises = ExerciseSummaryOut(many=True)

    @extend_schema_field(OpenApiTypes.STR)
    def get_intro_html(self, page: ChapterPage) -> str:
        return render(page.chapter.intro, chapter_scope(page.chapter))


class HintsOut(serializers.Serializer[Any]):
    total = serializers.IntegerField()
    shown = serializers.ListField(child=serializers.CharField(), help_text="HTML of the hints revealed so far.")


_hints = HintsOut()


class ChapterRefOut(serializers.Serializer[Any]):
    number = serializers.IntegerField()
    title = serializers.CharField()


class PlotPointOut(serializers.Serializer[Any]):
    n = serializers.IntegerField(help_text="The number beside the mark in the SVG.")
    label = serializers.CharField()  # type: ignore[assignment]  # a field named like Field.label
    kind = serializers.ChoiceField(choices=["yours", "answer", "fixed"])
    curve = serializers.IntegerField()
    curve_label = serializers.CharField()
    x = serializers.FloatField()
    y = serializers.FloatField(help_text="Attainable FLOP/s at x on its curve.")
    x_text = serializers.CharField()
    y_text = serializers.CharField()


class PlotOut(serializers.Serializer[Any]):
    title = serializers.CharField()
    svg = serializers.CharField(help_text="The roofline as SVG, drawn on the server.")
    curves = serializers.ListField(child=serializers.CharField())
    points = PlotPointOut(many=True)


_plot = PlotOut()


class NumbersOut(serializers.Serializer[Any]):
    # Reads an ExercisePage.
    varies = serializers.SerializerMethodField(help_text="The numbers differ per learner and round.")
    round = serializers.IntegerField(source="variant.round", help_text="0: the seed's numbers.")
    new_numbers_allowed = serializers.SerializerMethodField(
        help_text="`POST …/new-numbers/` gives the next round (after solving or revealing)."
    )
    scenario = serializers.SerializerMethodField(
        help_text="The chapter scenario whose givens this exercise shares with others (null: none)."
    )
    shared_with = serializers.SerializerMethodField(
        help_text="The exercises (numbers) drawn on the same scenario: new numbers move the unfinished ones together."
    )
    finished_on_other_numbers = serializers.ListField(
        source="variant.elsewhere",
        child=serializers.CharField(),
        help_text="Exercises this one builds on that the learner finished on other numbers (an earlier round): "
        "what they give on these numbers is shown here.",
    )
    moved = serializers.ListField(
        child=serializers.CharField(),
        help_text="In a new-numbers response: the exercises (numbers) not finished yet that moved to new numbers with it.",
    )

    def get_varies(self, page: ExercisePage) -> bool:
        return cache.resolved(page.version).spec.vary is not None

    def get_scenario(self, page: ExercisePage) -> str | None:
        vary = cache.resolved(page.version).spec.vary
        return vary.scenario.name if vary is not None and vary.scenario is not None else None

    def get_shared_with(self, page: ExercisePage) -> list[str]:
        return scenario_members(page)

    def get_new_numbers_allowed(self, page: ExercisePage) -> bool:
        return self.get_varies(page) and page.progress.answer_visible


class LastCodeOut(serializers.Serializer[Any]):
    # Reads an Attempt: the caller's own latest code submission.
    attempt = serializers.IntegerField(source="pk", help_text="The attempt's id.")
    code = ComputedField(help_text="The code as submitted.")
    submitted_at = serializers.DateTimeField(source="created_at")
    status = serializers.ChoiceField(choices=AttemptStatus.choices)
    verdict = serializers.ChoiceField(choices=Verdict.choices, allow_blank=True, help_text="Empty until graded.")
    url = ComputedField(help_text="The attempt, with its result.")

    @extend_schema_field(OpenApiTypes.STR)
    def get_code(self, a: Attempt) -> str:
        code = a.raw.get("code") if isinstance(a.raw, dict) else None
        return code if isinstance(code, str) else ""

    @extend_schema_field(OpenApiTypes.STR)
    def get_url(self, a: Attempt) -> str:
        return reverse("api:attempt-detail", kwargs={"attempt_id": a.pk})


class ExerciseDetailOut(ExerciseSummaryOut):
    workbook = serializers.CharField(source="exercise.workbook.slug")
    chapter_info = ChapterRefOut(source="exercise.chapter")
    version = serializers.IntegerField(source="version.version")
    prompt_html = ComputedField()
    widget = serializers.SerializerMethodField()
    hints = ComputedField()
    solution = serializers.SerializerMethodField()
    plot = ComputedField(allow_null=True, help_text="A roofline with your values, once solved or revealed.")
    numbers = NumbersOut(source="*", help_text="Whose numbers these are (varying exercises).")
    previous = serializers.CharField(allow_null=True)
    next = serializers.CharField(allow_null=True)
    last_code = LastCodeOut(
        allow_null=True,
        help_text="Your own latest code submission here (a Build's code, a Debug's fix), to carry on from; "
        "null when you have none or the exercise takes no code.",
    )

    @extend_schema_field(OpenApiTypes.STR)
    def get_prompt_html(self, page: ExercisePage) -> str:
        return cache.rendered(page.version, page.variant).prompt_html

    @extend_schema_field(Widget)
    def get_widget(self, page: ExercisePage) -> dict[str, Any]:
        return presentation.widget(page.version, page.user_id, page.variant)

    @extend_schema_field(HintsOut)
    def get_hints(self, page: ExercisePage) -> dict[str, Any]:
        return dict(_hints.to_representation(presentation.hints(page.version, page.progress.hints_used, page.variant)))

    @extend_schema_field(OptionalSolution)
    def get_solution(self, page: ExercisePage) -> dict[str, Any] | None:
        return presentation.solution(
            page.version, answer_visible=page.progress.answer_visible, variant=page.variant, user_id=page.user_id
        )

    @extend_schema_field(PlotOut)
    def get_plot(self, page: ExercisePage) -> dict[str, Any] | None:
        plot = presentation.plot(
            page.version, page.user_id, answer_visible=page.progress.answer_visible, variant=page.variant
        )
        return None if plot is None else dict(_plot.to_representation(plot))


# ---- attempts: an Attempt; a result is an AttemptResult -----------------------------------------


class LiveTestOut(serializers.Serializer[Any]):
    # Reads a dict from apps.learning.live: one test's result, judged as it came in.
    # A declared field leaves the class (DRF's metaclass pops it): no clash with Field.label.
    label = serializers.CharField(  # type: ignore[assignment]
        help_text='"Example 2" or "Hidden test 4 of 9", as in `details.tests` once final. A hidden test\'s '
        "id, call, inputs and values are never shown."
    )
    passed = serializers.BooleanField()
    message = serializers.CharField(
        allow_blank=True,
        help_text="Why it failed, in the failure's category (wrong value, wrong shape or type, the exception "
        "your code raised, a requirement unmet); empty when it passed.",
    )


_live_test = LiveTestOut()


class RunOut(serializers.Serializer[Any]):
    """A code attempt's sandbox run, as far as it has gone: what a page following it shows."""

    # Reads the attempt: the limits its worker recorded on claiming it, and the time it took.
    time_limit_s = ComputedField(
        allow_null=True, help_text="The run's time limit in seconds, set when a worker claims it; null while queued."
    )
    memory_mb = ComputedField(allow_null=True, help_text="The run's memory limit; null while queued.")
    started_at = serializers.DateTimeField(allow_null=True, help_text="When a worker claimed it; null while queued.")
    elapsed_s = ComputedField(
        allow_null=True,
        help_text="Seconds since it started (running) or from start to verdict (final); null while queued.",
    )
    tests_total = ComputedField(allow_null=True, help_text="How many tests the run has; null while queued.")
    tests = ComputedField(
        help_text="While running: each test's result as it completed, in order (empty until the first is in; "
        "a run that ends within a tenth of a second goes straight to its verdict). Once final: empty, and "
        "`details.tests` has them all."
    )

    @extend_schema_field(OpenApiTypes.INT)
    def get_tests_total(self, a: Attempt) -> int | None:
        value = a.details.get("tests_total") if isinstance(a.details, dict) else None
        return None if value is None else int(value)

    @extend_schema_field(LiveTestOut(many=True))
    def get_tests(self, a: Attempt) -> list[dict[str, Any]]:
        if a.status != AttemptStatus.RUNNING:
            return []
        return [dict(_live_test.to_representation(t)) for t in live.tests_so_far(a.pk)]

    @staticmethod
    def _limits(a: Attempt) -> dict[str, Any]:
        limits = a.details.get("limits") if isinstance(a.details, dict) else None
        return limits if isinstance(limits, dict) else {}

    @extend_schema_field(OpenApiTypes.DOUBLE)
    def get_time_limit_s(self, a: Attempt) -> float | None:
        value = self._limits(a).get("time_s")
        return None if value is None else float(value)

    @extend_schema_field(OpenApiTypes.INT)
    def get_memory_mb(self, a: Attempt) -> int | None:
        value = self._limits(a).get("memory_mb")
        return None if value is None else int(value)

    @extend_schema_field(OpenApiTypes.DOUBLE)
    def get_elapsed_s(self, a: Attempt) -> float | None:
        if a.started_at is None:
            return None
        end = a.finished_at if a.is_final and a.finished_at else timezone.now()
        return round(max(0.0, (end - a.started_at).total_seconds()), 1)


_run = RunOut()


class AttemptOut(serializers.Serializer[Any]):
    id = serializers.IntegerField(source="pk")
    workbook = serializers.CharField(source="exercise.workbook.slug")
    exercise = serializers.CharField(source="exercise.number", help_text="The exercise number.")
    version = serializers.IntegerField(source="version.version")
    created_at = serializers.DateTimeField()
    submitted = serializers.JSONField(source="raw", help_text="The body as submitted.")
    part = serializers.ChoiceField(choices=AttemptPart.choices, allow_blank=True)
    status = serializers.ChoiceField(
        choices=AttemptStatus.choices,
        help_text="queued/running: poll `url`. graded: final. not_graded: a platform fault; not counted.",
    )
    verdict = serializers.ChoiceField(choices=Verdict.choices, allow_blank=True, help_text="Empty until graded.")
    outcome = serializers.ChoiceField(
        choices=CodeOutcome.choices, allow_blank=True, help_text="Code: how the run ended."
    )
    correct = ComputedField()
    accepted_with_note = serializers.BooleanField(
        help_text="Correct only under another unit convention (the GiB figure labelled GB): it solves the "
        "exercise, and the feedback names the difference."
    )
    counted = serializers.BooleanField(
        help_text="Whether this counts as an attempt. A multi-part answer with parts left for later and the "
        "answered ones right does not."
    )
    score = serializers.FloatField()
    listed_as = ComputedField(
        help_text='How the attempt reads in a list of them: "✓", "✗", "check (not counted)" (a multi-part check '
        'with parts left for later and the answered ones right), "not graded (not counted)", "… queued", "… running".'
    )
    feedback = serializers.CharField(allow_blank=True)
    feedback_html = ComputedField()
    understood = ComputedField(
        allow_null=True, help_text="How a numeric answer was read: the reading the preview showed and the grader took."
    )
    details = ComputedField(
        help_text="Per-format detail: per-cell verdicts, the first misplaced step... Code: `tests`, failing "
        "first, each with `label`, `passed`, `category` and `message`; an example (`example: true`) also "
        "with its `call`, `expected` and `got`; a hidden test never with its call, inputs or values."
    )
    round = serializers.IntegerField(help_text="The round of numbers it answered (a varying exercise); 0: the seed's.")
    run = ComputedField(
        allow_null=True, help_text="Code: the sandbox run (limits, start, elapsed time); null otherwise."
    )
    url = ComputedField()

    @extend_schema_field(serializers.DictField())
    def get_details(self, a: Attempt) -> dict[str, Any]:
        # The numbers it answered stay server-side: a given the prompt does not show (one the
        # learner is expected to know, or a preset row's) is not theirs to read back.
        details = {k: v for k, v in (a.details or {}).items() if k != "variant"}
        # Code: the examples in full, hidden tests only as "hidden test k of n" and why they failed.
        return learner_view(details) if a.part == AttemptPart.CODE else details

    @extend_schema_field(OpenApiTypes.BOOL)
    def get_correct(self, a: Attempt) -> bool:
        return a.verdict == Verdict.CORRECT

    @extend_schema_field(OpenApiTypes.STR)
    def get_listed_as(self, a: Attempt) -> str:
        if a.status in (AttemptStatus.QUEUED, AttemptStatus.RUNNING):
            return f"… {a.status}"
        if a.status == AttemptStatus.NOT_GRADED:
            return "not graded (not counted)"
        if not a.counted:  # a partial check: right so far, parts left for later; it cost nothing
            return "check (not counted)"
        return "✓" if a.verdict == Verdict.CORRECT else "✗"

    @extend_schema_field(OpenApiTypes.STR)
    def get_feedback_html(self, a: Attempt) -> str:
        return feedback_html(a.feedback, from_code=a.part == AttemptPart.CODE)

    @extend_schema_field(OpenApiTypes.STR)
    def get_understood(self, a: Attempt) -> str | None:
        return a.parsed.get("understood") if isinstance(a.parsed, dict) else None

    @extend_schema_field(RunOut)
    def get_run(self, a: Attempt) -> dict[str, Any] | None:
        return dict(_run.to_representation(a)) if a.part == AttemptPart.CODE else None

    @extend_schema_field(OpenApiTypes.STR)
    def get_url(self, a: Attempt) -> str:
        return reverse("api:attempt-detail", kwargs={"attempt_id": a.pk})


class AttemptResultOut(AttemptOut):
    # Reads an AttemptResult: AttemptOut's fields from its attempt, then the state it left.

    state = StateOut(source="progress")
    solution = serializers.SerializerMethodField(
        help_text="Present once the answer is visible: this attempt solved the exercise, or it was solved or "
        "revealed before. Beside it the learner's latest answer (this one, unless it was code)."
    )

    def get_fields(self) -> dict[str, Any]:
        return read_through(super().get_fields(), AttemptOut._declared_fields, "attempt")

    @extend_schema_field(AttemptSolution)
    def get_solution(self, result: AttemptResult) -> dict[str, Any] | None:
        if not (result.solved or result.progress.answer_visible):
            return None
        a = result.attempt
        answered = a.status == AttemptStatus.GRADED and a.part != AttemptPart.CODE
        return presentation.solution(
            a.version, answer_visible=True, variant=result.variant, user_id=a.user_id, last=a if answered else None
        )


class RevealOut(serializers.Serializer[Any]):
    # Reads a ProgressOnVersion.
    state = StateOut(source="progress")
    solution = serializers.SerializerMethodField()

    @extend_schema_field(Solution)
    def get_solution(self, r: ProgressOnVersion) -> dict[str, Any] | None:
        return presentation.solution(
            r.version, answer_visible=r.progress.answer_visible, variant=r.variant, user_id=r.progress.user_id
        )


class HintRevealOut(serializers.Serializer[Any]):
    # Reads a ProgressOnVersion.
    hints = ComputedField()
    state = StateOut(source="progress")

    @extend_schema_field(HintsOut)
    def get_hints(self, r: ProgressOnVersion) -> dict[str, Any]:
        return dict(_hints.to_representation(presentation.hints(r.version, r.progress.hints_used, r.variant)))


# ---- reviews: a ReviewPage ------------------------------------------------------------------------


class ReviewCardOut(serializers.Serializer[Any]):
    # Reads a ReviewCard (its exercise selected with it).
    id = serializers.IntegerField()
    workbook = serializers.CharField(source="exercise.workbook.slug")
    chapter = serializers.IntegerField(source="exercise.chapter.number")
    number = serializers.CharField(source="exercise.number")
    title = serializers.CharField(source="exercise.title")
    kind = serializers.CharField(source="exercise.kind")
    due_at = serializers.DateTimeField()
    reviewing = serializers.SerializerMethodField(help_text="Started: answer the exercise at `exercise_url`.")
    retrievability = serializers.SerializerMethodField(help_text="FSRS's chance you recall it now (0..1).")
    reviews = serializers.IntegerField()
    lapses = serializers.IntegerField()
    exercise_url = ComputedField()
    start_url = ComputedField()

    def get_reviewing(self, card: ReviewCard) -> bool:
        return card.reviewing_since is not None

    def get_retrievability(self, card: ReviewCard) -> float:
        return round(srs.retrievability(card, self.context.get("at") or timezone.now()), 4)

    @extend_schema_field(OpenApiTypes.STR)
    def get_exercise_url(self, card: ReviewCard) -> str:
        return exercise_url(card.exercise)

    @extend_schema_field(OpenApiTypes.STR)
    def get_start_url(self, card: ReviewCard) -> str:
        return reverse("api:review-start", kwargs={"card_id": card.pk})


class SkillReviewOut(serializers.Serializer[Any]):
    # Reads a SkillCheck (its skill selected with it).
    workbook = serializers.CharField(source="skill.workbook.slug")
    key = serializers.CharField(source="skill.key")
    text = serializers.CharField(source="skill.text")
    due_at = serializers.DateTimeField()
    mark_url = ComputedField(help_text="POST {action: remembered | forgot} here.")

    @extend_schema_field(OpenApiTypes.STR)
    def get_mark_url(self, check: SkillCheck) -> str:
        return reverse("api:skill-mark", kwargs={"slug": check.skill.workbook.slug, "key": check.skill.key})


class ReviewQueueOut(serializers.Serializer[Any]):
    # Reads a ReviewPage.
    count = serializers.IntegerField(source="queue.count")
    due_before = serializers.DateTimeField(source="until", help_text="The end of your day, in your time zone.")
    exercises = ReviewCardOut(many=True, source="queue.cards")
    skills = SkillReviewOut(many=True, source="queue.skills")
