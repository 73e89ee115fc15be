"""From a validated spec to what grading and display need: evaluated numbers and targets.

``resolve`` evaluates the givens, derived values and answer formulas once, and renders every
prose string's placeholders (``texts.render_spec``), so ``ResolvedExercise.spec`` — what grading,
pages, the API, the admin and statistics read — holds only rendered text. The result is cached
per spec (versions are immutable), so the grading path does no parsing.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, cast

from apps.exercises.content.refs import fill_refs, spec_refs
from apps.exercises.content.schema import ExerciseSpec, NumericAnswer, SymbolicAnswer, TableColumn
from apps.exercises.content.texts import TextError, render_spec
from apps.exercises.content.variants import Variant, fill_labels, seed_labels
from apps.exercises.grading.formula import FormulaError, Number, evaluate, scope_of
from apps.exercises.grading.numeric import Candidate, NumericTarget, is_convention_ratio
from apps.exercises.grading.symbolic import ExpressionError, SymbolicMistake, SymbolicTarget, parse_content
from apps.exercises.grading.units import Unit, UnitError, unit


class ContentError(ValueError):
    """Content that does not resolve: a formula that fails, an unknown unit."""


@dataclass(frozen=True)
class ResolvedExercise:
    spec: ExerciseSpec  # with every prose string rendered (texts.render_spec)
    scope: dict[str, Number]
    numeric: NumericTarget | None = None
    # Table answer cells by id ("<row key>.<column key>").
    cells: dict[str, NumericTarget] = field(default_factory=dict)
    # Multi-part answers by part key: a number or an expression each.
    parts: dict[str, NumericTarget | SymbolicTarget] = field(default_factory=dict)
    # Each numeric part's answer in its own unit (for the plot's marks and derivations).
    part_values: dict[str, Number] = field(default_factory=dict)

    @property
    def answer_text(self) -> str | None:
        """The answer as we would write it, in the question's input unit."""
        return self.numeric.text() if self.numeric is not None else None

    @property
    def plot_answers(self) -> dict[str, float]:
        """What a plot can mark, by key: each numeric part, and a numeric exercise's ``answer``, in its own unit."""
        answers = {key: float(value) for key, value in self.part_values.items()}
        if self.numeric is not None:
            answers["answer"] = float(self.scope["answer"])
        return answers


def grading_hash(spec: ExerciseSpec, *, legacy: bool = False) -> str:
    """Hash of what decides a verdict. Prose edits keep it; an answer change makes a new version.

    Neither the id nor the number decides a verdict, so renumbering keeps the version. ``legacy``
    is the hash as versions written before exercises had ids have it: with the number, which
    ``services.exercise_upsert`` still recognises (their option and step ids are derived from it).
    """
    exclude = {"id", "title", "prompt", "explanation", "hints", "difficulty"} | (set() if legacy else {"number"})
    data = spec.model_dump(mode="json", exclude=exclude)
    if data.get("vary") is None:
        data.pop("vary", None)  # exercises that do not vary keep the hash they had before variants
    elif data["vary"].get("scenario") is None:
        data["vary"].pop("scenario", None)
    if data.get("scenario") is None:
        data.pop("scenario", None)  # nor do exercises outside a scenario
    if data.get("options"):
        data["options"] = [
            {
                "correct": o["correct"],
                "text": o["text"],
                **({"correct_if": o["correct_if"]} if o.get("correct_if") else {}),
            }
            for o in data["options"]
        ]
    if data.get("code"):
        data["code"].pop("wrong", None)  # authors' catalogue of wrong solutions decides no verdict
    blob = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _unit(text: str, where: str) -> Unit:
    try:
        return unit(text)
    except UnitError as exc:
        raise ContentError(f"{where}: {exc}") from None


def _eval(formula: str, scope: dict[str, Number], where: str) -> Number:
    try:
        return evaluate(formula, scope)
    except FormulaError as exc:
        raise ContentError(f"{where}: {exc}") from None


def numeric_target(
    answer: NumericAnswer | TableColumn, scope: dict[str, Number], where: str
) -> tuple[NumericTarget, Number]:
    assert answer.value is not None and answer.unit is not None
    answer_unit = _unit(answer.unit, f"{where}.unit")
    input_unit = _unit(answer.input_unit or answer.unit, f"{where}.input_unit")
    if input_unit.dim != answer_unit.dim:
        raise ContentError(
            f"{where}: input_unit {answer.input_unit!r} measures {input_unit.dim.describe()}, "
            f"but unit {answer.unit!r} measures {answer_unit.dim.describe()}"
        )
    raw = _eval(answer.value, scope, f"{where}.value")
    alternates: list[Candidate] = []
    mistakes: list[Candidate] = []
    if isinstance(answer, NumericAnswer):
        for kind, source, out in (
            ("alternates", answer.alternates, alternates),
            ("mistakes", answer.mistakes, mistakes),
        ):
            for i, cand in enumerate(source):
                value = _eval(cand.value, scope, f"{where}.{kind}[{i}]") * answer_unit.scale
                tolerance = cand.tolerance if cand.tolerance is not None else answer.tolerance
                convention = kind == "alternates" and (
                    cand.convention
                    if cand.convention is not None
                    else raw != 0 and is_convention_ratio(value / (raw * answer_unit.scale))
                )
                out.append(Candidate(value, cand.feedback, tolerance, convention))
    target = NumericTarget(
        value=raw * answer_unit.scale,
        dim=answer_unit.dim,
        input_unit=input_unit,
        tolerance=answer.tolerance,
        alternates=tuple(alternates),
        mistakes=tuple(mistakes),
        sig_figs=answer.sig_figs,
    )
    return target, raw


def symbolic_target(answer: SymbolicAnswer, scope: dict[str, Number], where: str) -> SymbolicTarget:
    names = tuple(answer.symbols)
    try:
        expr = parse_content(answer.value, names)
        mistakes = tuple(SymbolicMistake(parse_content(m.value, names), m.feedback) for m in answer.mistakes)
    except ExpressionError as exc:
        raise ContentError(f"{where}: {exc}") from None
    return SymbolicTarget(
        expr=expr,
        text=answer.value,
        symbols=names,
        small=tuple(answer.approximate.small) if answer.approximate else (),
        accept_approximate=answer.approximate.accept if answer.approximate else True,
        approximate_feedback=answer.approximate.feedback if answer.approximate else "",
        mistakes=mistakes,
    )


_referring: OrderedDict[int, tuple[ExerciseSpec, bool]] = OrderedDict()
MAX_REMEMBERED = 4096


def _refers(spec: ExerciseSpec) -> bool:
    """Whether any of the spec's prose holds a ``{% ref %}``, remembered per spec object (specs are
    not changed once loaded; the object is kept so its id is not reused while remembered): the
    seed's numbers then resolve without dumping the spec to look."""
    found = _referring.get(id(spec))
    if found is not None and found[0] is spec:
        return found[1]
    value = bool(spec_refs(spec.model_dump(mode="json")))
    _referring[id(spec)] = (spec, value)
    if len(_referring) > MAX_REMEMBERED:
        _referring.popitem(last=False)
    return value


def with_variant(spec: ExerciseSpec, variant: Variant | None) -> ExerciseSpec:
    """The spec with a variant's givens, and its preset rows' names in the prose."""
    labels = dict(variant.labels) if variant is not None else seed_labels(spec)
    referring = _refers(spec)
    if (variant is None or variant.is_seed) and not labels and not referring:
        return spec
    data = spec.model_dump(mode="json")
    if variant is not None:
        data["givens"] = variant.givens(spec)
    if referring:  # each `{% ref %}` takes its branch for what this learner has finished
        data = cast(dict[str, Any], fill_refs(data, variant.known if variant is not None else ()))
    return ExerciseSpec.model_validate(fill_labels(data, labels))


def resolve(spec: ExerciseSpec, variant: Variant | None = None) -> ResolvedExercise:
    """Evaluate a spec, with ``variant``'s numbers (default: the seed's). Raises ContentError
    naming the failing field.

    The prose is rendered first (a numeric exercise's prose may name ``answer``), and the targets
    are built from the rendered spec, so feedback is substituted in one place only.
    """
    spec = with_variant(spec, variant)
    try:
        scope = scope_of(spec.givens, spec.derived)
    except FormulaError as exc:
        raise ContentError(f"derived: {exc}") from None
    numeric_answer = spec.answer  # only the formats that take a number with a unit have one
    if numeric_answer is not None:
        scope = {**scope, "answer": _eval(numeric_answer.value, scope, "answer.value")}
    data = spec.model_dump(mode="json")
    for i, option in enumerate(data.get("options") or []):
        if option.get("correct_if") is not None:
            option["correct"] = bool(_eval(option.pop("correct_if"), scope, f"options[{i}].correct_if"))
    try:
        spec = ExerciseSpec.model_validate(render_spec(data, scope))
    except TextError as exc:
        raise ContentError(str(exc)) from None
    except ValueError as exc:  # pydantic's ValidationError: e.g. computed options with no correct one
        raise ContentError(str(exc)) from None
    numeric = None
    cells: dict[str, NumericTarget] = {}
    if numeric_answer is not None and spec.answer is not None:
        numeric, _ = numeric_target(spec.answer, scope, "answer")
    if spec.columns and spec.rows:  # a table
        for row in spec.rows:
            row_scope: dict[str, Number] = {
                **scope,
                **{k: v for k, v in row.values.items() if not isinstance(v, str)},
            }
            for col in spec.columns:
                if col.value is not None:
                    target, _ = numeric_target(col, row_scope, f"rows[{row.key}].{col.key}")
                    cells[f"{row.key}.{col.key}"] = target
    parts: dict[str, NumericTarget | SymbolicTarget] = {}
    part_values: dict[str, Number] = {}
    for part in spec.parts or []:
        if part.answer is not None:
            parts[part.key], part_values[part.key] = numeric_target(part.answer, scope, f"parts[{part.key}]")
        elif part.expression is not None:
            parts[part.key] = symbolic_target(part.expression, scope, f"parts[{part.key}].expression")
    return ResolvedExercise(
        spec=spec,
        scope=scope,
        numeric=numeric,
        cells=cells,
        parts=parts,
        part_values=part_values,
    )
