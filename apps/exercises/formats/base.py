"""What an answer format is: everything the platform does differently per format, in one class.

Each format (``numeric``, ``choice``, ...) is a subclass in its own module, registered in
``apps.exercises.formats``. Code outside this package asks the registry for the exercise's format
and calls it; it never compares format names. A format decides:

- the API body it takes (``answer_in``, a serializer: the OpenAPI schema documents it) and the
  payload a plain HTML form posts (``form_payload``);
- which parts an exercise has (``parts``) and which one a payload answers (``part_of``);
- grading (``grade``: payload → ``GradeResult``, raising ``InvalidAnswer``);
- what a learner sees: the widget (``widget``, ``widget_out``, ``template``, ``submit_label``),
  the solution once solved or revealed (``solution``, ``solution_out``), field labels;
- content: the spec fields it requires and allows, the exercise kinds it suits, its checks;
- authors' and instructors' views: the export, the admin preview, the label of a wrong answer in
  the statistics and an answer as the learner saw it.
"""

from __future__ import annotations

import hashlib
import hmac
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from django.conf import settings
from rest_framework import serializers

from apps.exercises.choices import AnswerFormat, AttemptPart
from apps.exercises.content.render import markdown_html
from apps.exercises.grading.base import GradeResult, InvalidAnswer

if TYPE_CHECKING:
    from django.http import QueryDict

    from apps.exercises.content.cache import Rendered
    from apps.exercises.content.resolve import ResolvedExercise
    from apps.exercises.content.schema import ExerciseSpec
    from apps.exercises.grading.numeric import NumericTarget
    from apps.exercises.grading.symbolic import SymbolicTarget
    from apps.exercises.models import Attempt, Exercise, ExerciseVersion


# ---- the answer as shown to instructors ------------------------------------------------------


class ShownItem(NamedTuple):
    """One piece of a structured answer: ``label`` and ``value`` in plain text (what the CSV file
    and the API give), and for the instructor's page the value as safe HTML (an option's text with
    its math rendered, an expression as math; empty: the value, escaped), how the grader read it
    ("0.5 GiB = 536,870,912 B") and the piece's own verdict (table cells and parts; None: none)."""

    label: str
    value: str
    html: str = ""
    reading: str = ""
    correct: bool | None = None
    noted: bool = False


@dataclass(frozen=True)
class AnswerShown:
    """A submitted answer in the words the learner saw on the page (not the opaque ids the client
    sent): ``text`` on one line, ``items`` one per piece (label, value...), ``code`` for code.
    ``snippet``: the code the pieces point into (a Debug's lines), with the lines ``marked``."""

    text: str
    items: list[ShownItem]
    code: str | None = None
    snippet: str | None = None
    marked: tuple[int, ...] = ()


# ---- helpers several formats share ------------------------------------------------------------


def inline_html(text: str) -> str:
    """Content prose (an option's or a step's text, already substituted) as the learner's page
    renders it, Markdown with its math, without the paragraph around a one-line text."""
    html = markdown_html(text).strip()
    if html.startswith("<p>") and html.endswith("</p>") and html.count("<p>") == 1:
        return html[3:-4]
    return html


def opaque(version: ExerciseVersion, kind: str, key: str) -> str:
    """An id that reveals nothing about authoring order: an HMAC of the version and the key."""
    msg = f"{version.pk}:{version.grading_hash}:{kind}:{key}".encode()
    return hmac.new(settings.SECRET_KEY.encode(), msg, hashlib.sha256).hexdigest()[:12]


def learner_order(user_id: int, version: ExerciseVersion, n: int, *, avoid_identity: bool = False) -> list[int]:
    """A stable per-learner permutation of range(n). Orders never start out already solved."""
    rng = random.Random(f"{user_id}:{version.exercise_id}:{version.grading_hash}")  # noqa: S311 - not security
    order = list(range(n))
    for _ in range(20):
        rng.shuffle(order)
        if not avoid_identity or order != sorted(order) or n < 2:
            break
    if avoid_identity and order == sorted(order) and n >= 2:
        order = order[1:] + order[:1]
    return order


def map_ids(given: Sequence[Any], mapping: dict[str, Any], what: str) -> list[Any]:
    """Opaque ids from the learner back to author indices; unknown ids are input errors."""
    out = []
    for item in given:
        if not isinstance(item, str) or item not in mapping:
            raise InvalidAnswer("bad_payload", f"Unknown {what} id {item!r}; reload the exercise.")
        out.append(mapping[item])
    return out


_KIND_NAMES: dict[type, str] = {str: "a string", list: "a list", dict: "an object"}


def payload_field(payload: dict[str, Any], name: str, kind: type) -> Any:
    """``payload[name]`` if it is a ``kind``, else the input error naming what this exercise takes."""
    value = payload.get(name)
    if not isinstance(value, kind):
        expected = _KIND_NAMES[kind]
        raise InvalidAnswer("bad_payload", f"This exercise takes `{name}`: {expected}.")
    return value


def prefixed(data: QueryDict, prefix: str) -> dict[str, str]:
    """Form fields named ``<prefix><key>``, by key (table cells, parts)."""
    return {k.removeprefix(prefix): str(v) for k, v in data.items() if k.startswith(prefix)}


# ---- serializer bases (the OpenAPI components keep their class names) -------------------------


class WidgetOut(serializers.Serializer[Any]):
    format = serializers.ChoiceField(choices=AnswerFormat.choices)


class SolutionOut(WidgetOut):
    explanation_html = serializers.CharField()


class OptionOut(serializers.Serializer[Any]):
    id = serializers.CharField()
    html = serializers.CharField()


class CodeExampleOut(serializers.Serializer[Any]):
    call = serializers.CharField(help_text="The call in full, its values as JSON: `f(1, [2, 3], k=4)`.")
    returns_text = serializers.CharField(help_text="What the call must return, as JSON text.")
    args = serializers.ListField(child=serializers.JSONField())
    kwargs = serializers.DictField(child=serializers.JSONField())
    returns = serializers.JSONField(help_text="What the call must return (numbers within the test's tolerance).")


class CodeFixOut(serializers.Serializer[Any]):
    language = serializers.CharField()
    entry = serializers.CharField()
    starter = serializers.CharField()
    sandbox_available = serializers.BooleanField(help_text="False: code cannot be graded right now.")
    examples = CodeExampleOut(
        many=True,
        help_text="Examples from the problem statement, each call with its expected value. The other tests "
        "are hidden: a result shows only whether each passed and why not.",
    )


# ---- the protocol -------------------------------------------------------------------------------

# The spec fields that belong to one format or another; a format lists those it requires and
# those it also allows, and an exercise may carry no other.
FORMAT_FIELDS = ("answer", "options", "steps", "constraints", "columns", "rows", "code", "buggy_lines", "parts", "plot")


class Format:
    """One answer format. Subclasses set the class attributes and override what differs."""

    name: ClassVar[str]
    # The API request body (validated before grading) and the widget and solution bodies.
    answer_in: ClassVar[type[serializers.Serializer[Any]]]
    widget_out: ClassVar[type[WidgetOut]]
    solution_out: ClassVar[type[SolutionOut]]
    # Content: spec fields it needs, fields it may also have, exercise kinds it suits.
    required: ClassVar[tuple[str, ...]]
    optional: ClassVar[frozenset[str]] = frozenset()
    kinds: ClassVar[frozenset[str]]
    # Whether the schema refuses an exercise without an explanation. False lets stored versions that
    # have none still load; check_content requires one of every exercise all the same.
    explanation_required: ClassVar[bool] = True
    # Whether every given must appear in the prompt (a table shows its givens in the grid).
    givens_in_prompt: ClassVar[bool] = True
    # Whether the code that comes with it is buggy (a Debug's snippet), not a starter.
    buggy_code: ClassVar[bool] = False
    submit_label: ClassVar[str] = "Check answer"
    # Whether a solve becomes a spaced-review card: every part graded in the web process, quickly.
    reviewable: ClassVar[bool] = True
    # Graded in the web process (at least in part): the "auto-graded" of the variant coverage figures.
    graded_here: ClassVar[bool] = True
    # The answer is one number with a unit (a numeric Derive, when the kind is derive).
    one_number: ClassVar[bool] = False

    @property
    def template(self) -> str:
        """The widget's template (``templates/exercises/widgets/<name>.html``)."""
        return f"exercises/widgets/{self.name}.html"

    def __repr__(self) -> str:
        return f"<format {self.name}>"

    # ---- parts and input ----

    def parts(self, spec: ExerciseSpec) -> tuple[AttemptPart, ...]:
        """The parts an exercise has; each is a bit in ``ExerciseProgress.parts_solved``."""
        return (AttemptPart.WHOLE,)

    def part_of(self, spec: ExerciseSpec, payload: dict[str, Any]) -> AttemptPart:
        """The part a payload answers: code goes to the sandbox, anything else is graded here."""
        available = self.parts(spec)
        if AttemptPart.CODE in available and "code" in payload:
            return AttemptPart.CODE
        return available[0]

    def form_payload(self, data: QueryDict) -> dict[str, Any]:
        """The payload the API takes, from a plain HTML form's POST (no JavaScript needed)."""
        raise NotImplementedError

    # ---- grading ----

    def grade(self, version: ExerciseVersion, r: ResolvedExercise, payload: dict[str, Any]) -> GradeResult | None:
        """Grade a payload; raises InvalidAnswer. None: not graded here (code goes to the sandbox)."""
        raise NotImplementedError

    # ---- what a learner sees ----

    def widget(self, version: ExerciseVersion, r: ResolvedExercise, html: Rendered, user_id: int) -> dict[str, Any]:
        """The answer widget's data (besides ``format``): no answers in it, ever."""
        raise NotImplementedError

    def solution(self, version: ExerciseVersion, r: ResolvedExercise, html: Rendered) -> dict[str, Any]:
        """The answers (besides ``format`` and ``explanation_html``), for a learner who may see them."""
        return {}

    # Whether the solution shows the learner's own last answer beside the correct one (``beside``):
    # the page then reads it, in one query.
    shows_beside: ClassVar[bool] = False
    # Whether a learner can precheck an answer (run the examples, ungraded): code the sandbox runs.
    prechecks: ClassVar[bool] = False

    @property
    def beside_template(self) -> str:
        """The solution-beside-yours template (``templates/exercises/beside/<name>.html``), or ""."""
        return f"exercises/beside/{self.name}.html" if self.shows_beside else ""

    def beside(
        self,
        version: ExerciseVersion,
        r: ResolvedExercise,
        html: Rendered,
        *,
        user_id: int | None,
        last: Attempt | None,
    ) -> dict[str, Any]:
        """What the solution adds beside the learner's own answer, for a learner who may see it:
        ``last`` is their latest graded answer on these numbers (None: they gave up before
        answering), ``user_id`` whose page it is (the order they saw things in). Keys it returns
        replace the solution's."""
        return {}

    def field_labels(self, spec: ExerciseSpec) -> dict[str, str]:
        """Labels of the separately graded fields (table cells, parts), by field id."""
        return {}

    def preview_targets(self, r: ResolvedExercise) -> dict[str, NumericTarget]:
        """The fields whose reading the preview shows ("512 MiB = 536,870,912 bytes"), by field id
        ("" for a lone answer). Only numbers with units have one."""
        return {}

    def preview_expressions(self, r: ResolvedExercise) -> dict[str, SymbolicTarget]:
        """The fields holding an expression, by field id: the preview shows how it reads
        ("2*B*D*F/(B*D + B*F + D*F)"), as it shows a number's reading."""
        return {}

    # ---- content ----

    def check(self, spec: ExerciseSpec, r: ResolvedExercise) -> list[str]:
        """Problems with an exercise's content beyond the schema (``check_content``)."""
        return []

    def export(self, spec: ExerciseSpec, r: ResolvedExercise) -> dict[str, Any]:
        """The evaluated answers, as ``export_content`` prints them."""
        return {}

    def preview_rows(self, r: ResolvedExercise) -> list[tuple[str, str]]:
        """The answers in the admin's preview, as (label, text) rows."""
        return []

    # ---- instructors ----

    def answer_label(self, exercise: Exercise, parsed: dict[str, Any]) -> str:
        """A wrong answer as the grader read it, for the statistics ("0.5 GiB" and "512 MiB" are one)."""
        return "(other)"

    def relation_label(self, r: ResolvedExercise, seed: ResolvedExercise, attempt: Attempt) -> str | None:
        """A wrong answer to a varying exercise by how it relates to the learner's own answer
        (``r``: their numbers), so statistics pool learners whose numbers differ: the known
        mistake it matched (named as on the seed's numbers, ``seed``), or a factor ("×2",
        "÷10³"). None: label it by its value."""
        return None

    def answer_shown(self, attempt: Attempt, spec: ExerciseSpec, parsed: dict[str, Any]) -> AnswerShown | None:
        """An answer as the learner saw it; None: shown as typed (or by its label)."""
        return None
