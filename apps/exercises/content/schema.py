"""The content format: what a chapter file under ``fixtures/workbooks/`` may say.

Files are YAML; see ``fixtures/README.md`` for the guide. These models validate a file and are
stored (as JSON) with each exercise version, so the database holds exactly what was checked.
Validation here is structural; ``apps.exercises.content.checks`` evaluates formulas, renders
templates and runs reference code.
"""

from __future__ import annotations

import re
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from apps.exercises import draws
from apps.exercises.choices import AnswerFormat, ExerciseKind
from apps.exercises.grading.formula import RESERVED_NAMES
from apps.sandbox.runner import EXTRA_ENV_ALLOWED

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_NUMBER = re.compile(r"^(?:\d+\.\d+|q\d+[a-z]?)$")
# An exercise's stable identity (Exercise.key): written once, never changed, unlike its number.
_EXERCISE_ID = re.compile(r"^[a-z0-9][a-z0-9-]{1,47}$")
Scalar = int | float


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _check_names(names: list[str], what: str) -> None:
    for name in names:
        if not _IDENT.match(name):
            raise ValueError(f"{what} name {name!r} is not an identifier")
        if name in RESERVED_NAMES:
            raise ValueError(f"{what} name {name!r} is reserved (a function or unit constant)")


class Candidate(Strict):
    """An accepted alternate reading, or a known mistake, with its own feedback."""

    value: str = Field(description="formula in the answer's base units")
    feedback: str
    tolerance: float | None = Field(default=None, ge=0, lt=1)
    convention: bool | None = Field(
        default=None,
        description="an alternate that is the answer under another unit convention (the GiB figure labelled "
        "GB): accepted with a note. Left out: inferred from the ratio to the answer (1.024ᵏ either way).",
    )


class NumericAnswer(Strict):
    value: str = Field(description="formula over the givens and derived values, in `unit`")
    unit: str = Field(description="the answer's unit, e.g. params, bytes, tokens/s")
    input_unit: str | None = Field(default=None, description="how a bare number is read; defaults to `unit`")
    tolerance: float = Field(default=0.005, ge=0, lt=1, description="relative tolerance")
    sig_figs: int = Field(default=3, ge=1, le=12, description="an answer rounded to this many figures is accepted")
    alternates: list[Candidate] = []
    mistakes: list[Candidate] = []


class Approximation(Strict):
    """The approximation a prompt states: these symbols are much smaller than the others."""

    small: list[str] = Field(min_length=1)
    accept: bool = Field(default=True, description="an answer equal only in that limit is accepted")
    feedback: str = ""


class ExpressionMistake(Strict):
    value: str
    feedback: str


class SymbolicAnswer(Strict):
    value: str = Field(description="the expression the prompt asks for, in `symbols`")
    symbols: dict[str, str] = Field(description="name → meaning; the names a learner may use (positive reals)")
    approximate: Approximation | None = None
    mistakes: list[ExpressionMistake] = []

    @model_validator(mode="after")
    def _names(self) -> Self:
        if not self.symbols:
            raise ValueError("an expression needs at least one symbol")
        for name in self.symbols:
            if not _IDENT.match(name):
                raise ValueError(f"symbol {name!r} is not an identifier")
        if self.approximate is not None:
            unknown = set(self.approximate.small) - set(self.symbols)
            if unknown:
                raise ValueError(f"approximate.small names unknown symbols: {sorted(unknown)}")
        return self


class PartSpec(Strict):
    """One answer of a multi-part exercise: a number with a unit, or an expression."""

    key: str
    label: str
    answer: NumericAnswer | None = None
    expression: SymbolicAnswer | None = None

    @model_validator(mode="after")
    def _one(self) -> Self:
        if not _IDENT.match(self.key):
            raise ValueError(f"part key {self.key!r} must be an identifier")
        if (self.answer is None) == (self.expression is None):
            raise ValueError(f"part {self.key!r} needs exactly one of `answer` (a number) or `expression`")
        return self


class PlotAxis(Strict):
    label: str
    min: float | None = Field(default=None, gt=0)
    max: float | None = Field(default=None, gt=0)


class PlotCurve(Strict):
    label: str
    peak: str = Field(description="formula: peak compute, FLOP/s")
    bandwidth: str = Field(description="formula: memory bandwidth, bytes/s")
    intensity: str | None = Field(default=None, description="formula in x; omitted: x is the intensity")


class PlotMark(Strict):
    curve: int = Field(default=0, ge=0)
    label: str
    part: str | None = Field(default=None, description="a part's key, or `answer` for a numeric exercise")
    x: str | None = Field(default=None, description="formula: a fixed x")

    @model_validator(mode="after")
    def _one(self) -> Self:
        if (self.part is None) == (self.x is None):
            raise ValueError("a mark needs exactly one of `part` or `x`")
        return self


class PlotSpec(Strict):
    """A roofline drawn on the server after solving: min(peak, bandwidth × intensity(x)), log-log."""

    title: str
    x: PlotAxis
    y: PlotAxis = PlotAxis(label="Attainable FLOP/s")
    curves: list[PlotCurve] = Field(min_length=1, max_length=6)
    marks: list[PlotMark] = []

    @model_validator(mode="after")
    def _marks(self) -> Self:
        for mark in self.marks:
            if mark.curve >= len(self.curves):
                raise ValueError(f"mark {mark.label!r} names curve {mark.curve}, but there are {len(self.curves)}")
        return self


class ChoiceOption(Strict):
    text: str
    correct: bool = False
    correct_if: str | None = Field(
        default=None,
        description="a formula over the givens: the option is correct where it is non-zero (a claim whose truth "
        "depends on the numbers); replaces `correct`",
    )
    feedback: str = Field(description="why this option is right or wrong")


class OrderStep(Strict):
    id: str
    text: str

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not _IDENT.match(v):
            raise ValueError(f"step id {v!r} must be an identifier")
        return v


class TableColumn(Strict):
    key: str
    label: str
    # An answer column has a formula over the row's values; the others are shown as given.
    value: str | None = None
    unit: str | None = None
    input_unit: str | None = None
    tolerance: float = Field(default=0.005, ge=0, lt=1)
    sig_figs: int = Field(default=3, ge=1, le=12)

    @model_validator(mode="after")
    def _answer_column(self) -> Self:
        if self.value is not None and self.unit is None:
            raise ValueError(f"answer column {self.key!r} needs a unit")
        return self


class TableRow(Strict):
    key: str
    values: dict[str, Scalar | str]


class CodeCase(Strict):
    id: str
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    expected: Any = Field(default=None, description="omitted: computed from the reference solution (not for probes)")
    rtol: float = 1e-6
    atol: float = 1e-9
    probe: str | None = Field(
        default=None, description="a checker in checks.py: the case reports facts about the function, not its value"
    )
    requirement: str = Field(default="", description="a probe's failure message: what the prompt asks, in plain words")
    example: bool = Field(
        default=False,
        description="an example: shown to learners with its call and expected value, and run by the precheck; "
        "every other case is a hidden test whose inputs and expected value never leave the worker",
    )
    precheck: bool = Field(
        default=False, description="a cheap structural probe (signature, shape, dtype, jit) the precheck also runs"
    )
    random: dict[str, Any] | None = Field(
        default=None,
        description="a hidden test whose inputs are drawn afresh for each attempt (apps/exercises/draws.py): "
        "`args`/`kwargs` generators and `dims`; its expected value comes from the reference solution, run on them",
    )

    @model_validator(mode="after")
    def _random(self) -> Self:
        if self.random is None:
            return self
        if self.args or self.kwargs or self.expected is not None:
            raise ValueError(f"random case {self.id!r} draws its inputs: no args, kwargs or expected")
        if self.example or self.probe or self.precheck:
            raise ValueError(f"random case {self.id!r} is a hidden test: not an example, probe or precheck")
        found = draws.problems(self.random, f"case {self.id} random")
        if found:
            raise ValueError("; ".join(found))
        return self


class CodeLimits(Strict):
    """Per-exercise sandbox limits, where the defaults (settings.SANDBOX_*) are too tight (JAX)."""

    time_s: float | None = Field(default=None, gt=0, le=120)
    memory_mb: int | None = Field(default=None, ge=64, le=4096)


class WrongSolution(Strict):
    """A plausible wrong solution (``code/<dir>/wrong/<name>.py``) that the hidden tests must fail.

    Its first line is a comment naming the misconception it encodes. Authors' content: it never
    reaches a learner, and it does not decide a verdict (it is left out of the grading hash).
    """

    name: str
    misconception: str = Field(min_length=1)
    source: str


class CodeSpec(Strict):
    entry: str = Field(description="the function the learner writes")
    dir: str = Field(description="folder (relative to the workbook) with starter.py, solution.py, tests.py")
    starter: str = ""
    solution: str = ""
    checker: str = Field(default="", description="checks.py: the checkers that probe cases name (trusted content)")
    cases: list[CodeCase] = []
    wrong: list[WrongSolution] = Field(default=[], description="plausible wrong solutions the tests must fail")
    limits: CodeLimits | None = None
    env: dict[str, str] = Field(default={}, description="extra environment for the sandbox (XLA_FLAGS)")

    @field_validator("env")
    @classmethod
    def _env(cls, v: dict[str, str]) -> dict[str, str]:
        unknown = set(v) - EXTRA_ENV_ALLOWED
        if unknown:
            raise ValueError(f"sandbox environment variables not allowed: {sorted(unknown)}")
        return v

    @field_validator("entry")
    @classmethod
    def _entry(cls, v: str) -> str:
        if not re.match(r"^[a-z_][a-z0-9_]*$", v):
            raise ValueError(f"entry {v!r} must be a snake_case function name")
        return v


class VaryRule(Strict):
    """How one given varies between rounds: one of a list of values, or a range with a step."""

    values: list[Scalar] | None = None
    range: tuple[Scalar, Scalar] | None = None
    step: Scalar | None = None

    @model_validator(mode="after")
    def _one(self) -> Self:
        if (self.values is None) == (self.range is None):
            raise ValueError("a varying given takes either `values` or `range` (with `step`)")
        if self.values is not None and len(self.values) < 2:
            raise ValueError("`values` needs at least two values")
        if self.range is not None:
            lo, hi = self.range
            if self.step is None or self.step <= 0 or hi <= lo:
                raise ValueError("`range: [lo, hi]` needs lo < hi and a positive `step`")
            if (hi - lo) / self.step > 100_000:
                raise ValueError("`range` with this `step` has over 100,000 values")
        elif self.step is not None:
            raise ValueError("`step` goes with `range`")
        return self

    def choices(self) -> list[Scalar]:
        if self.values is not None:
            return list(self.values)
        assert self.range is not None and self.step is not None
        lo, hi = self.range
        n = int((hi - lo) / self.step + 1e-9) + 1
        out: list[Scalar] = []
        for i in range(n):
            v = lo + i * self.step
            out.append(int(v) if isinstance(lo, int) and isinstance(self.step, int) else round(v, 12))
        return out


class PresetUse(Strict):
    """Several givens set at once from a row of the workbook's shared table (``presets.yaml``):
    a model shape, a hardware profile."""

    table: str = Field(description="a table in the workbook's presets.yaml")
    set: dict[str, str] = Field(description="given name: the table's field it takes")
    seed: str = Field(description="the row the seed's numbers (round 0) use")
    pick: list[str] | None = Field(default=None, description="rows to draw from; default: every row")
    label: str | None = Field(default=None, description="a name that `{{label}}` in prose shows as the row's name")
    # Filled by the loader from presets.yaml (authors do not write it): row key -> its fields.
    rows: dict[str, dict[str, Scalar | str]] = {}

    def keys(self) -> list[str]:
        # Sorted: PostgreSQL's jsonb does not keep the file's key order, and a draw must not
        # depend on where the spec was read from.
        return list(self.pick) if self.pick is not None else sorted(self.rows)


class ScenarioDraw(Strict):
    """A chapter's scenario as the loader copies it into each exercise that takes part: the givens
    drawn once per (learner, scenario, round), so every exercise of a chain sees the same ones."""

    name: str
    seed: dict[str, Scalar] = Field(default={}, description="the scenario's givens at round 0")
    derived: dict[str, str] = {}
    givens: dict[str, VaryRule] = {}
    presets: list[PresetUse] = []
    require: list[str] = []
    members: list[str] = Field(default=[], description="the numbers of the chapter's exercises in it")


class VarySpec(Strict):
    """Per-learner numbers: which givens vary, and what a variant must satisfy."""

    givens: dict[str, VaryRule] = {}
    presets: list[PresetUse] = []
    require: list[str] = Field(
        default=[], description="formulas over givens and derived values; a variant where one is 0 is not used"
    )
    # Filled by the loader (authors write `scenario: <name>` on the exercise): the shared draw.
    scenario: ScenarioDraw | None = None

    @property
    def local(self) -> bool:
        """Whether the exercise draws givens of its own (beside its scenario's)."""
        return bool(self.givens or self.presets)


class ScenarioSpec(Strict):
    """Givens a chain of exercises shares (a model, a chip, a workload, a fleet), declared once in
    the chapter and drawn once per (learner, scenario, round)."""

    givens: dict[str, Scalar] = Field(default={}, description="the seed's values (round 0)")
    derived: dict[str, str] = Field(default={}, description="formulas every exercise of the scenario gets")
    vary: VarySpec | None = None

    @model_validator(mode="after")
    def _names(self) -> Self:
        _check_names(list(self.givens) + list(self.derived), "scenario given/derived")
        if self.vary is not None:
            if self.vary.scenario is not None:
                raise ValueError("a scenario's `vary` cannot name a scenario")
            unknown = set(self.vary.givens) - set(self.givens)
            if unknown:
                raise ValueError(f"varying givens without a seed value in the scenario's givens: {sorted(unknown)}")
        return self


class ExerciseSpec(Strict):
    number: str = Field(description="display only: where it stands in the chapter (renumbering is safe)")
    id: str = Field(
        description="stable identity within the workbook (a slug: lowercase letters, digits, dashes): learners' "
        "attempts and progress follow it, so it is written once and never changed or reused"
    )
    title: str
    kind: ExerciseKind
    format: AnswerFormat
    prompt: str
    # Shown once solved or revealed. The schema lets a choice leave it out, so versions stored before
    # check_content required one still load; check_content fails on any exercise without one.
    explanation: str = ""
    givens: dict[str, Scalar] = {}
    derived: dict[str, str] = {}
    # Givens the learner is expected to know rather than read in the prompt (bytes per BF16 value).
    implicit: list[str] = []
    hints: list[str] = []
    difficulty: int = Field(default=2, ge=1, le=3)
    answer: NumericAnswer | None = None
    options: list[ChoiceOption] | None = None
    multiple: bool = False
    steps: list[OrderStep] | None = None
    # Pairs (before, after) that a valid order must respect; absent: only the listed order is right.
    constraints: list[tuple[str, str]] | None = None
    columns: list[TableColumn] | None = None
    rows: list[TableRow] | None = None
    code: CodeSpec | None = None
    buggy_lines: list[int] | None = None
    parts: list[PartSpec] | None = None
    plot: PlotSpec | None = None
    # Per-learner numbers (None: every learner sees the seed's numbers).
    vary: VarySpec | None = None
    # The chapter's scenario it shares givens with (the loader copies it into `vary.scenario`).
    scenario: str | None = None

    @field_validator("number")
    @classmethod
    def _number(cls, v: str) -> str:
        if not _NUMBER.match(v):
            raise ValueError(f"exercise number {v!r} must look like 0.1 or q1a")
        return v

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not _EXERCISE_ID.match(v):
            raise ValueError(
                f"exercise id {v!r} must be 2 to 48 lowercase letters, digits and dashes, starting with a letter or digit"
            )
        return v

    @model_validator(mode="after")
    def _by_format(self) -> Self:
        _check_names(list(self.givens) + list(self.derived), "given/derived")
        overlap = set(self.givens) & set(self.derived)
        if overlap:
            raise ValueError(f"names both given and derived: {sorted(overlap)}")
        unknown_implicit = set(self.implicit) - set(self.givens)
        if unknown_implicit:
            raise ValueError(f"implicit names that are not givens: {sorted(unknown_implicit)}")
        from apps.exercises import formats  # the formats read these models: imported when first validating

        fmt = formats.get(self.format)
        for name in fmt.required:
            if getattr(self, name) is None:
                raise ValueError(f"a {self.format} exercise needs `{name}`")
        allowed = set(fmt.required) | fmt.optional
        for name in formats.FORMAT_FIELDS:
            if getattr(self, name) is not None and name not in allowed:
                raise ValueError(f"`{name}` does not belong in a {self.format} exercise")
        if self.options is not None:
            n_correct = sum(o.correct for o in self.options)
            if len(self.options) < 2:
                raise ValueError("a choice needs at least two options")
            if any(o.correct_if is not None for o in self.options):
                pass  # computed: counted once the variant's numbers decide it (resolve)
            elif n_correct == 0 or (not self.multiple and n_correct != 1):
                raise ValueError("a single choice needs exactly one correct option; a multiple choice at least one")
        if self.steps is not None:
            ids = [s.id for s in self.steps]
            if len(ids) < 2 or len(set(ids)) != len(ids):
                raise ValueError("an order needs at least two steps with distinct ids")
            for before, after in self.constraints or []:
                if before not in ids or after not in ids:
                    raise ValueError(f"constraint ({before}, {after}) names an unknown step")
        if self.columns is not None and self.rows is not None:
            keys = [c.key for c in self.columns]
            if len(set(keys)) != len(keys) or not any(c.value for c in self.columns):
                raise ValueError("a table needs distinct column keys and at least one answer column")
            row_keys = [r.key for r in self.rows]
            if len(set(row_keys)) != len(row_keys):
                raise ValueError("table rows need distinct keys")
        if self.parts is not None:
            keys = [p.key for p in self.parts]
            if not keys or len(set(keys)) != len(keys):
                raise ValueError("parts need at least one part and distinct keys")
        if self.plot is not None:
            marks = {m.part for m in self.plot.marks if m.part is not None}
            known = {p.key for p in self.parts or [] if p.answer is not None} | (
                {"answer"} if self.answer is not None else set()
            )
            if marks - known:
                raise ValueError(f"plot marks name unknown numeric parts: {sorted(marks - known)}")
        if not self.explanation.strip() and fmt.explanation_required:
            raise ValueError("an explanation (the derivation shown after solving) is required")
        if self.buggy_lines is not None and not self.buggy_lines:
            raise ValueError("buggy_lines must name at least one line")
        if self.vary is not None:
            scenario = self.vary.scenario
            shared = (list(scenario.givens) + [g for p in scenario.presets for g in p.set]) if scenario else []
            varied = list(self.vary.givens) + [g for p in self.vary.presets for g in p.set] + shared
            unknown = sorted(set(varied) - set(self.givens))
            if unknown:
                raise ValueError(f"vary names givens the exercise does not have: {unknown}")
            if len(set(varied)) != len(varied):
                raise ValueError("vary sets a given twice")
            labels = [p.label for p in [*(scenario.presets if scenario else []), *self.vary.presets] if p.label]
            clash = sorted(set(labels) & (set(self.givens) | set(self.derived)))
            if clash:
                raise ValueError(f"preset labels clash with givens/derived: {clash}")
            if not varied:
                raise ValueError("vary names no given")
        return self


class ChapterSpec(Strict):
    number: int = Field(ge=0)
    title: str
    intro: str = ""
    givens: dict[str, Scalar] = {}
    derived: dict[str, str] = {}
    scenarios: dict[str, ScenarioSpec] = {}
    exercises: list[ExerciseSpec]

    @model_validator(mode="after")
    def _numbers(self) -> Self:
        _check_names(list(self.givens) + list(self.derived), "given/derived")
        numbers = [e.number for e in self.exercises]
        if len(set(numbers)) != len(numbers):
            raise ValueError(f"duplicate exercise numbers in chapter {self.number}")
        for n in numbers:
            if "." in n and int(n.split(".")[0]) != self.number:
                raise ValueError(f"exercise {n} does not belong in chapter {self.number}")
        return self


class SkillSpec(Strict):
    key: str
    text: str = Field(max_length=300)
    chapter: int = Field(ge=0)
    exercises: list[str] = Field(default=[], description="exercise numbers to practise it with")

    @field_validator("key")
    @classmethod
    def _key(cls, v: str) -> str:
        if not _IDENT.match(v):
            raise ValueError(f"skill key {v!r} must be an identifier")
        return v


class SkillsSpec(Strict):
    """``skills.yaml``: the checklist and how to use it (the spaced-retrieval protocol)."""

    protocol: str = Field(min_length=1, description="Markdown: how to use the checklist")
    skills: list[SkillSpec] = Field(min_length=1)


class WorkbookSpec(Strict):
    slug: str
    title: str
    summary: str
    prerequisites: str = ""
    position: int = 0
    source: str = Field(default="", description="where the facts come from (seed file)")
    chapters: list[ChapterSpec] = []
    skills: SkillsSpec | None = None

    @model_validator(mode="after")
    def _ids(self) -> Self:
        first: dict[str, ExerciseSpec] = {}
        for exercise in (e for c in self.chapters for e in c.exercises):
            other = first.setdefault(exercise.id, exercise)
            if other is not exercise:
                raise ValueError(
                    f"exercise id {exercise.id!r} is used twice in the workbook: by {other.number} ({other.title}) "
                    f"and by {exercise.number} ({exercise.title}); ids are unique within a workbook and never reused"
                )
        return self

    @model_validator(mode="after")
    def _skills(self) -> Self:
        if self.skills is not None:
            keys = [s.key for s in self.skills.skills]
            if len(set(keys)) != len(keys):
                raise ValueError("skills need distinct keys")
        return self

    def skill_problems(self) -> list[str]:
        """Skills that name a chapter or exercise this workbook does not have."""
        if self.skills is None:
            return []
        chapters = {c.number for c in self.chapters}
        numbers = {e.number for c in self.chapters for e in c.exercises}
        problems = []
        for skill in self.skills.skills:
            if skill.chapter not in chapters:
                problems.append(f"skill {skill.key!r} names chapter {skill.chapter}, which does not exist")
            unknown = [n for n in skill.exercises if n not in numbers]
            if unknown:
                problems.append(f"skill {skill.key!r} names exercises that do not exist: {unknown}")
        return problems


def spec_json(spec: BaseModel) -> dict[str, Any]:
    return spec.model_dump(mode="json")
