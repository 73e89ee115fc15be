"""What crosses exercises when every learner has their own numbers: one story per learner.

``check_content`` runs these over every workbook:

- **Literals**: fixed text (outside ``{{ }}``) must not quote the round-0 value of a number that
  varies — a varying given, or anything computed from one — nor the seed row's name of a preset
  that varies: in the exercise itself, its scenario, or an exercise it cites ("as in 4.1").
  Such text contradicts the learner's own numbers on every other round.
- **Scenarios**: a given that varies in two exercises of a chapter outside a scenario is drawn
  independently in each (the author probably meant one value): declare a scenario or rename.
- **References**: ``{% ref id %}`` names an exercise of the same chapter and scenario; both
  branches render.
- **Draws**: over 1,000 draws per varying exercise (500 learners, rounds 1 and 2): none fails its
  ``require`` (an impossible premise falls back to the seed's numbers), round 2 never repeats
  round 1, the count of distinct variants, and the chance two learners get the same numbers.
- **Leaks** (32 learners): no text shown before solving states another exercise's answer while
  that exercise is unsolved (its references in the "do that first" branch).

Nothing here reads the database.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from apps.exercises import formats
from apps.exercises.content.refs import TAG, both_branches, choose, refs_in, spec_refs
from apps.exercises.content.render import placeholders
from apps.exercises.content.resolve import ContentError, ResolvedExercise, resolve
from apps.exercises.content.schema import ChapterSpec, ExerciseSpec, WorkbookSpec
from apps.exercises.content.secrecy import _OPTION, leaks, secret_answers, shown_before_solving
from apps.exercises.content.texts import slots
from apps.exercises.content.variants import Variant, names_of, presets_of, samples, variant
from apps.exercises.grading.formula import Number

# Learners per exercise for the draw statistics (each drawn on rounds 1 and 2: 1,000 draws).
DRAW_LEARNERS = 500
# Learners per workbook for the leak check.
LEAK_LEARNERS = 32
# Below this many distinct variants an exercise is reported (two learners would meet too often).
MIN_DISTINCT = 40
# The most two learners of a cohort may share, averaged over a workbook's varying exercises.
MAX_COLLISION = 0.10


# ---- literals ---------------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\{\{.*?\}\}", re.S)
_NUMBER = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w])(\s*%)?")


def _fixed(text: str) -> str:
    """The text a learner reads whatever their numbers: placeholders and tags taken out (both
    branches of a reference kept: each is shown to someone)."""
    return _PLACEHOLDER.sub(" ", TAG.sub(" ", both_branches(text)))


def varying_values(spec: ExerciseSpec, *, n: int = 6) -> dict[str, Number]:
    """The round-0 values of every name whose value differs between learners: varying givens and
    what is computed from them (the answer too)."""
    if spec.vary is None:
        return {}
    try:
        seed = resolve(spec).scope
    except ContentError:
        return {}
    moving: set[str] = set()
    for v in samples(spec, chapter=0, n=n):
        try:
            scope = resolve(spec, v).scope
        except ContentError:
            continue
        moving |= {k for k, value in scope.items() if k in seed and not _same(value, seed[k])}
    return {k: seed[k] for k in sorted(moving)}


def varying_names(spec: ExerciseSpec) -> list[str]:
    """The names of the preset rows the seed uses, where the preset varies (more than one row)."""
    names = []
    for preset in presets_of(spec):
        if len(preset.keys()) > 1:
            names.append(str(preset.rows.get(preset.seed, {}).get("name", preset.seed)))
    return names


def _same(a: Number, b: Number) -> bool:
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)


def _cited(text: str, numbers: Iterable[str]) -> list[str]:
    found = []
    for number in numbers:
        for m in re.finditer(rf"(?<![\w.,]){re.escape(number)}(?![\w]|[.,]\d)", text):
            if not re.match(r"\s*(?:[A-Za-zµ%$]|×)", text[m.end() :]) or re.match(r"'s\b", text[m.end() :]):
                found.append(number)
                break
    return found


def _literals(text: str) -> Iterator[tuple[str, float]]:
    for m in _NUMBER.finditer(text):
        whole, frac, pct = m.group(1), m.group(2) or "", m.group(3)
        value = float(whole.replace(",", "") + frac)
        yield m.group(0).strip(), value / 100 if pct else value


def _quotes(value: float, literal: float) -> bool:
    return _same(value, literal) if value != 0 else False


def literal_problems(chapter: ChapterSpec) -> list[str]:
    """Fixed text quoting a number or name that varies (see the module's docstring)."""
    numbers = [e.number for e in chapter.exercises]
    values = {e.number: varying_values(e) for e in chapter.exercises}
    names = {e.number: varying_names(e) for e in chapter.exercises}
    problems: list[str] = []
    for spec in chapter.exercises:
        try:
            scope = resolve(spec).scope
        except ContentError:
            continue  # check_exercise reports it
        for slot in slots(spec.model_dump(mode="json"), scope):
            raw = slot.text
            if not raw or not isinstance(raw, str):
                continue
            fixed = _fixed(raw)
            sources = [spec.number, *(n for n in _cited(fixed, numbers) if n != spec.number)]
            for source in sources:
                whose = "" if source == spec.number else f" ({source}'s)"
                for literal, value in _literals(fixed):
                    if abs(value) < 10 and float(value).is_integer():
                        continue  # 2 bytes, 4 GPUs, 8 heads: too common to tell from a quote
                    if literal in numbers:
                        continue  # names an exercise
                    hit = next((k for k, v in values[source].items() if _quotes(float(v), value)), None)
                    if hit is not None:
                        problems.append(
                            f"{spec.number} {slot.where}: fixed text quotes {literal!r}, the round-0 value of "
                            f"{hit}{whose}, which varies: write it as a placeholder"
                        )
                for name in names[source]:
                    if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", fixed):
                        problems.append(
                            f"{spec.number} {slot.where}: fixed text names {name!r}, the round-0 preset row{whose}, "
                            "which varies: use its {{label}}"
                            + (
                                " (a title is shared by every learner: make it general)"
                                if slot.where == "title"
                                else ""
                            )
                        )
    return list(dict.fromkeys(problems))


# ---- scenarios and references --------------------------------------------------------------------


def _local_varying(spec: ExerciseSpec) -> set[str]:
    if spec.vary is None:
        return set()
    names = set(spec.vary.givens)
    for preset in spec.vary.presets:
        names |= set(preset.set)
    return names


def scenario_problems(chapter: ChapterSpec) -> list[str]:
    """Givens drawn independently where a chain shares them; references that cannot resolve."""
    problems: list[str] = []
    where: dict[str, list[str]] = {}
    for spec in chapter.exercises:
        for name in _local_varying(spec):
            where.setdefault(name, []).append(spec.number)
    for name, numbers in sorted(where.items()):
        if len(numbers) > 1:
            problems.append(
                f"chapter {chapter.number}: given {name!r} varies in {', '.join(numbers)} outside a scenario, so "
                "each draws its own: declare it in a chapter scenario they share (or rename it where the "
                "exercises are unrelated)"
            )
    by_id = {e.id: e for e in chapter.exercises}
    for spec in chapter.exercises:
        data = spec.model_dump(mode="json")
        try:
            scope = resolve(spec).scope
        except ContentError:
            continue  # check_exercise reports it
        mine = spec.vary.scenario.name if spec.vary is not None and spec.vary.scenario is not None else spec.scenario
        for ref in spec_refs(data):
            other = by_id.get(ref)
            if other is None:
                problems.append(
                    f"{spec.number}: refers to {ref!r}, which is not an exercise of chapter {chapter.number}"
                )
                continue
            if ref == spec.id:
                problems.append(f"{spec.number}: refers to itself")
                continue
            theirs = (
                other.vary.scenario.name
                if other.vary is not None and other.vary.scenario is not None
                else other.scenario
            )
            if other.vary is not None and (mine is None or mine != theirs):
                problems.append(
                    f"{spec.number}: refers to {other.number}'s answer, but they do not share a scenario: "
                    "the number it shows would not be the learner's"
                )
        for slot in slots(data, scope):
            text = slot.text if isinstance(slot.text, str) else ""
            for known in ((), tuple(refs_in(text))):
                left = TAG.findall(choose(text, known))
                if left:
                    problems.append(f"{spec.number} {slot.where}: a reference is not closed: {left[0]!r}")
                    break
    return problems


def _answer_formulas(spec: ExerciseSpec) -> list[str]:
    formulas = [spec.answer.value] if spec.answer is not None else []
    formulas += [p.answer.value for p in spec.parts or [] if p.answer is not None]
    formulas += [c.value for c in spec.columns or [] if c.value is not None]
    formulas += [o.correct_if for o in spec.options or [] if o.correct_if is not None]
    return formulas


def _reads(formulas: list[str], derived: dict[str, str]) -> set[str]:
    """Every name the formulas read, through the derived values they use."""
    seen: set[str] = set()
    todo = [n for f in formulas for n in names_of(f)]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            if name in derived:
                todo += names_of(derived[name])
    return seen


def implicit_problems(spec: ExerciseSpec) -> list[str]:
    """An answer that reads a given the learner is "expected to know" (``implicit``) while that
    given differs between learners: nobody can know their own number without being shown it."""
    if spec.vary is None or not spec.implicit:
        return []
    moving = set(spec.vary.givens) | {g for p in spec.vary.presets for g in p.set if len(p.keys()) > 1}
    if spec.vary.scenario is not None:
        moving |= set(spec.vary.scenario.givens)
        moving |= {g for p in spec.vary.scenario.presets for g in p.set if len(p.keys()) > 1}
    read = _reads(_answer_formulas(spec), spec.derived)
    shown = _reads(placeholders(_shown_text(spec)), spec.derived)
    return [
        f"{spec.number}: the answer reads {name}, listed as implicit (known to the learner), but it varies: "
        "show it in the prompt"
        for name in sorted((set(spec.implicit) & moving & read) - shown)
    ]


def _shown_text(spec: ExerciseSpec) -> str:
    """The prose a learner reads before answering, both branches of its references (a given
    shown only once an earlier exercise is solved is still shown: the else branch says so)."""
    parts = [spec.prompt, *(o.text for o in spec.options or []), *(s.text for s in spec.steps or [])]
    parts += [p.label for p in spec.parts or []] + [c.label for c in spec.columns or []]
    parts += [str(v) for r in spec.rows or [] for v in r.values.values() if isinstance(v, str)]
    return both_branches(" ".join(parts))


# ---- draws ------------------------------------------------------------------------------------


@dataclass
class Draws:
    """What 1,000 draws of one exercise showed."""

    number: str
    draws: int = 0
    failed: int = 0  # no draw met `require`: the seed's numbers were used
    repeats: int = 0  # round 2 gave round 1's numbers again
    distinct: int = 0
    collision: float = 0.0  # chance two learners get the same numbers on round 1
    first_failure: str = ""


def draw_stats(spec: ExerciseSpec, *, chapter: int, learners: int = DRAW_LEARNERS) -> Draws:
    stats = Draws(spec.number)
    firsts: Counter[tuple[object, ...]] = Counter()
    seen: set[tuple[object, ...]] = set()
    for i in range(learners):
        one = variant(spec, seed=f"draws-{i}", chapter=chapter, round=1)
        two = variant(spec, seed=f"draws-{i}", chapter=chapter, round=2)
        stats.draws += 2
        for v in (one, two):
            if not v.drawn:
                stats.failed += 1
                stats.first_failure = stats.first_failure or f"learner draws-{i} round {v.round}"
            seen.add(v.values)
        stats.repeats += one.drawn and two.drawn and one.values == two.values
        firsts[one.values] += 1
    stats.distinct = len(seen)
    pairs = learners * (learners - 1)
    stats.collision = sum(c * (c - 1) for c in firsts.values()) / pairs if pairs else 0.0
    return stats


def draw_problems(stats: Draws) -> list[str]:
    problems = []
    if stats.failed:
        problems.append(
            f"{stats.number}: {stats.failed} of {stats.draws} draws met no `require` (first: {stats.first_failure}) "
            "and fell back to the seed's numbers: widen the ranges, or move a constraint on shared givens into "
            "the scenario's `require`"
        )
    if stats.repeats:
        problems.append(f"{stats.number}: new numbers repeated the old ones for {stats.repeats} learners")
    return problems


# ---- leaks across exercises --------------------------------------------------------------------


def _resolved(spec: ExerciseSpec, numbers: Variant | None) -> ResolvedExercise | None:
    try:
        return resolve(spec, numbers)
    except ContentError:
        return None  # check_exercise reports it


def _scenario(spec: ExerciseSpec) -> str | None:
    return spec.vary.scenario.name if spec.vary is not None and spec.vary.scenario is not None else None


def chapter_cross_leaks(chapter: ChapterSpec, *, seed: str | None) -> list[str]:
    """For one learner on round 1 (``seed``; None: the seed's numbers, round 0): any exercise's
    text shown before solving that states another exercise's answer while that one is unsolved
    (every reference to it saying "do it first").

    On a learner's numbers only exercises that share numbers are compared (a scenario, or a
    reference): others draw independently, so a match between them is chance, not a quote. On the
    seed's numbers every pair is."""
    exercises = chapter.exercises
    if seed is not None:  # only what shares numbers: a scenario's exercises, and what refers or is referred to
        referring = {e.id: spec_refs(e.model_dump(mode="json")) for e in exercises}
        cited = {r for refs in referring.values() for r in refs}
        exercises = [e for e in exercises if _scenario(e) or referring[e.id] or e.id in cited]
    drawn = {
        e.id: (variant(e, seed=seed, chapter=chapter.number, round=1) if e.vary is not None and seed else Variant())
        for e in exercises
    }
    pending = {e.id: _resolved(e, drawn[e.id]) for e in exercises}
    secrets = {e.id: secret_answers(r) for e in exercises if (r := pending[e.id]) is not None}
    problems: list[str] = []
    for spec in exercises:
        refs = spec_refs(spec.model_dump(mode="json"))
        mine = _scenario(spec)
        others = [
            e.id
            for e in exercises
            if e.id != spec.id and (seed is None or e.id in refs or (mine is not None and _scenario(e) == mine))
        ]
        if not others:
            continue
        states: list[tuple[tuple[str, ...], list[str]]] = [((), others)]
        # Finished all it refers to but one: that one's answer must still not show.
        states += [(tuple(r for r in refs if r != unsolved), [unsolved]) for unsolved in refs]
        for known, unsolved in states:
            resolved = pending[spec.id] if not known else _resolved(spec, drawn[spec.id].knowing(known))
            if resolved is None:
                continue
            for where, text in shown_before_solving(resolved):
                if _OPTION.match(where) and where.endswith(".text"):
                    continue  # a candidate, not a statement
                for other in unsolved:
                    answers = secrets.get(other) or []
                    if not answers:
                        continue
                    number = next(e.number for e in chapter.exercises if e.id == other)
                    problems += [
                        f"{spec.number} {where}: states {number}'s {leak} while {number} is unsolved"
                        + (f" (with {', '.join(known)} finished)" if known else "")
                        for leak in leaks(text, answers)
                    ]
    return list(dict.fromkeys(problems))


# ---- the workbook ----------------------------------------------------------------------------


@dataclass
class Consistency:
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    draws: list[Draws] = field(default_factory=list)
    numeric_derive: int = 0
    numeric_derive_collision: float = 0.0  # expected count of numeric Derive two learners share

    @property
    def collision(self) -> float:
        """The share of varying exercises on which two learners of a cohort get the same numbers."""
        return sum(d.collision for d in self.draws) / len(self.draws) if self.draws else 0.0

    @property
    def differ(self) -> float:
        """The share of numeric Derive exercises on which two learners see different numbers."""
        if not self.numeric_derive:
            return 0.0
        return 1 - self.numeric_derive_collision / self.numeric_derive

    def text(self) -> str:
        if not self.draws:
            return ""
        distinct = sorted(d.distinct for d in self.draws)
        return (
            f"two learners share numbers on {100 * self.collision:.1f}% of varying exercises and differ on "
            f"{100 * self.differ:.0f}% of numeric Derive; distinct variants per varying exercise: "
            f"min {distinct[0]}, median {distinct[len(distinct) // 2]}"
        )


def check_consistency(
    spec: WorkbookSpec, *, learners: int = DRAW_LEARNERS, leak_learners: int = LEAK_LEARNERS
) -> Consistency:
    out = Consistency()
    for chapter in spec.chapters:
        out.problems += literal_problems(chapter)
        out.problems += scenario_problems(chapter)
        for exercise in chapter.exercises:
            out.problems += implicit_problems(exercise)
            fmt = formats.get(exercise.format)
            numeric_derive = fmt.one_number and exercise.kind == "derive"
            out.numeric_derive += numeric_derive
            if exercise.vary is None:
                out.numeric_derive_collision += numeric_derive
                continue
            stats = draw_stats(exercise, chapter=chapter.number, learners=learners)
            out.draws.append(stats)
            out.numeric_derive_collision += stats.collision if numeric_derive else 0
            out.problems += [f"{p} ({exercise.title})" for p in draw_problems(stats)]
            if stats.distinct < MIN_DISTINCT:
                out.warnings.append(
                    f"{exercise.number} {exercise.title}: only {stats.distinct} distinct variants in {stats.draws} "
                    f"draws (two learners share numbers {100 * stats.collision:.0f}% of the time): widen its space"
                )
        out.problems += [f"seed's numbers: {p}" for p in chapter_cross_leaks(chapter, seed=None)]
        if any(_scenario(e) for e in chapter.exercises):
            for i in range(leak_learners):
                found = chapter_cross_leaks(chapter, seed=f"leaks-{i}")
                if found:
                    out.problems += [f"learner leaks-{i}: {p}" for p in found]
                    break
    if out.collision > MAX_COLLISION:
        out.problems.append(
            f"two learners share numbers on {100 * out.collision:.1f}% of varying exercises (at most "
            f"{100 * MAX_COLLISION:.0f}%): widen the narrowest spaces"
        )
    return out
