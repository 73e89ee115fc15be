"""Per-learner variants: an exercise's givens drawn from its author's ``vary`` rules.

A variant is a pure function of (seed, chapter, round): the seed names who the numbers are for
(a learner, or a whole cohort that shares numbers), the chapter keeps exercises that build on each
other on the same numbers (a given with the same name and rule gets the same value in every
exercise of the chapter), and the round moves on when a learner asks for new numbers or a review
comes due. Round 0 is the seed's own numbers, used for previews, exports and the independent
checks. Nothing here reads the database.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import astuple, dataclass

from apps.exercises.content.schema import ExerciseSpec, PresetUse
from apps.exercises.grading.formula import FormulaError, Number, evaluate, scope_of

# Draws tried before a variant that meets the author's `require` is given up on (the seed's
# numbers are used instead; check_content reports an exercise where that happens).
MAX_DRAWS = 64


@dataclass(frozen=True)
class Variant:
    """The givens one round sets, and the preset rows' names prose shows (hashable: a cache key)."""

    round: int = 0
    values: tuple[tuple[str, Number], ...] = ()
    labels: tuple[tuple[str, str], ...] = ()
    # False: no draw met the author's constraints, so these are the seed's numbers.
    drawn: bool = True

    @property
    def is_seed(self) -> bool:
        return not self.values

    def givens(self, spec: ExerciseSpec) -> dict[str, Number]:
        return {**spec.givens, **dict(self.values)}


SEED = Variant()


def varies(spec: ExerciseSpec) -> bool:
    return spec.vary is not None


def _draw(*parts: object) -> int:
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _row_value(preset: PresetUse, key: str, field: str) -> Number:
    value = preset.rows[key][field]
    if isinstance(value, str):
        raise ValueError(f"preset {preset.table}.{key}.{field} is text, not a number")
    return value


def seed_labels(spec: ExerciseSpec) -> dict[str, str]:
    """What each preset label shows at round 0: the seed row's name."""
    if spec.vary is None:
        return {}
    return {p.label: str(p.rows.get(p.seed, {}).get("name", p.seed)) for p in spec.vary.presets if p.label}


def meets(spec: ExerciseSpec, givens: dict[str, Number]) -> bool:
    """Whether these givens satisfy every ``require`` formula (and the derived values evaluate)."""
    assert spec.vary is not None
    try:
        scope = scope_of(givens, spec.derived)
        return all(evaluate(rule, scope) for rule in spec.vary.require)
    except (FormulaError, ZeroDivisionError, OverflowError, ValueError):
        return False


def variant(spec: ExerciseSpec, *, seed: str, chapter: int, round: int) -> Variant:  # noqa: A002 - the word
    """The variant of ``spec`` for (seed, chapter, round). Round 0, or an exercise that does not
    vary, is the seed's numbers."""
    if round == 0 or spec.vary is None:
        return Variant(round=round, labels=tuple(sorted(seed_labels(spec).items())))
    vary = spec.vary
    for attempt in range(MAX_DRAWS):
        values: dict[str, Number] = {}
        labels: dict[str, str] = {}
        for name, rule in sorted(vary.givens.items()):
            choices = rule.choices()
            values[name] = choices[_draw(seed, chapter, round, name, attempt) % len(choices)]
        for preset in vary.presets:
            keys = preset.keys()
            key = keys[_draw(seed, chapter, round, f"preset:{preset.table}", attempt) % len(keys)]
            for given, field in preset.set.items():
                values[given] = _row_value(preset, key, field)
            if preset.label:
                labels[preset.label] = str(preset.rows[key].get("name", key))
        if meets(spec, {**spec.givens, **values}):
            return Variant(round=round, values=tuple(sorted(values.items())), labels=tuple(sorted(labels.items())))
    return Variant(round=round, labels=tuple(sorted(seed_labels(spec).items())), drawn=False)


def recorded(details: dict[str, object] | None) -> Variant:
    """The numbers an attempt answered, from what it recorded (``details["variant"]``)."""
    found = (details or {}).get("variant")
    if not isinstance(found, dict):
        return SEED
    return Variant(
        round=int(found.get("round", 0)),
        values=tuple(sorted((str(k), v) for k, v in found.get("givens", {}).items())),
        labels=tuple(sorted((str(k), str(v)) for k, v in found.get("labels", {}).items())),
    )


def record(variant: Variant) -> dict[str, object]:
    """What an attempt keeps of its numbers (``recorded`` reads it back)."""
    return {"round": variant.round, "givens": dict(variant.values), "labels": dict(variant.labels)}


def samples(spec: ExerciseSpec, *, chapter: int, n: int) -> Iterator[Variant]:
    """``n`` variants as learners would get them (round 1 of n made-up learners), for the checks."""
    for i in range(n):
        yield variant(spec, seed=f"check-{i}", chapter=chapter, round=1 + i % 3)


_LABEL = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def fill_labels(data: object, labels: dict[str, str]) -> object:
    """A copy of a spec's JSON with ``{{label}}`` replaced by the preset row's name in every string."""
    if not labels:
        return data
    if isinstance(data, dict):
        return {k: fill_labels(v, labels) for k, v in data.items()}
    if isinstance(data, list):
        return [fill_labels(v, labels) for v in data]
    if isinstance(data, str):
        return _LABEL.sub(lambda m: labels.get(m.group(1), m.group(0)), data)
    return data


@dataclass(frozen=True)
class Coverage:
    """How much of a workbook varies per learner (the targets: 80% of numeric Derive exercises,
    50% of all auto-graded ones)."""

    numeric_derive: int = 0
    numeric_derive_varying: int = 0
    auto_graded: int = 0
    auto_graded_varying: int = 0

    def __add__(self, other: Coverage) -> Coverage:
        return Coverage(*(a + b for a, b in zip(astuple(self), astuple(other), strict=True)))

    def text(self) -> str:
        def pct(part: int, whole: int) -> str:
            return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "0/0"

        return (
            f"numbers vary in {pct(self.numeric_derive_varying, self.numeric_derive)} numeric Derive, "
            f"{pct(self.auto_graded_varying, self.auto_graded)} auto-graded"
        )


def coverage(exercises: Iterable[ExerciseSpec]) -> Coverage:
    from apps.exercises import formats  # the formats import the content models

    numeric = numeric_varying = auto = auto_varying = 0
    for e in exercises:
        fmt = formats.get(e.format)
        if fmt.graded_here:
            auto += 1
            auto_varying += e.vary is not None
        if fmt.one_number and e.kind == "derive":
            numeric += 1
            numeric_varying += e.vary is not None
    return Coverage(numeric, numeric_varying, auto, auto_varying)
