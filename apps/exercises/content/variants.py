"""Per-learner variants: an exercise's givens drawn from its author's ``vary`` rules.

A variant is a pure function of (seed, chapter, round): the seed names who the numbers are for
(a learner, or a whole cohort that shares numbers), the chapter keeps exercises that build on each
other on the same numbers (a given with the same name and rule gets the same value in every
exercise of the chapter), and the round moves on when a learner asks for new numbers or a review
comes due. Round 0 is the seed's own numbers, used for previews, exports and the independent
checks. Nothing here reads the database.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import astuple, dataclass, replace

from pydantic import BaseModel

from apps.exercises.content.schema import ExerciseSpec, PresetUse, Scalar, VaryRule
from apps.exercises.grading.formula import FormulaError, Number, evaluate, names, scope_of

# Candidates looked at, per round asked for, before a space is taken to have no more draws that
# meet the author's `require` (the seed's numbers are used instead; check_content reports it).
MAX_DRAWS = 256
# Walks (the draws found so far for one learner and space) kept per process.
MAX_WALKS = 8192


@dataclass(frozen=True)
class Variant:
    """The givens one round sets, and the preset rows' names prose shows (hashable: a cache key)."""

    round: int = 0
    values: tuple[tuple[str, Number], ...] = ()
    labels: tuple[tuple[str, str], ...] = ()
    # False: no draw met the author's constraints, so these are the seed's numbers.
    drawn: bool = True
    # Exercises (ids) this one refers to that the learner has solved or revealed: their
    # `{% ref %}` blocks show the answer (see refs.py); the rest say to do them first.
    known: tuple[str, ...] = ()
    # Of those, the numbers ("8.4") of the ones finished on other numbers (another round).
    elsewhere: tuple[str, ...] = ()

    @property
    def is_seed(self) -> bool:
        return not self.values

    def givens(self, spec: ExerciseSpec) -> dict[str, Number]:
        return {**spec.givens, **dict(self.values)}

    def knowing(self, known: Iterable[str], elsewhere: Iterable[str] = ()) -> Variant:
        return replace(self, known=tuple(sorted(known)), elsewhere=tuple(sorted(elsewhere)))


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


def presets_of(spec: ExerciseSpec) -> list[PresetUse]:
    """The preset tables an exercise draws from: its scenario's, then its own."""
    if spec.vary is None:
        return []
    shared = spec.vary.scenario.presets if spec.vary.scenario is not None else []
    return [*shared, *spec.vary.presets]


def seed_labels(spec: ExerciseSpec) -> dict[str, str]:
    """What each preset label shows at round 0: the seed row's name."""
    return {p.label: str(p.rows.get(p.seed, {}).get("name", p.seed)) for p in presets_of(spec) if p.label}


def meets(spec: ExerciseSpec, givens: dict[str, Number]) -> bool:
    """Whether these givens satisfy every ``require`` formula (the scenario's and the exercise's),
    and the derived values evaluate."""
    assert spec.vary is not None
    rules = [*(spec.vary.scenario.require if spec.vary.scenario is not None else []), *spec.vary.require]
    return _holds(rules, givens, spec.derived)


def _holds(rules: list[str], givens: dict[str, Number], derived: dict[str, str]) -> bool:
    try:
        scope = scope_of(givens, _needed(tuple(rules), tuple(sorted(derived.items()))))
        return all(evaluate(rule, scope) for rule in rules)
    except (FormulaError, ZeroDivisionError, OverflowError, ValueError):
        return False


@functools.lru_cache(maxsize=4096)
def _needed(rules: tuple[str, ...], derived: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """The derived formulas ``rules`` depend on (through each other), and no others: a draw is
    judged on what its constraints read. Every derived value is still evaluated when the variant
    is resolved, so one that fails there is reported by check_content."""
    formulas = dict(derived)
    wanted: set[str] = set()
    todo = [n for rule in rules for n in names_of(rule)]
    while todo:
        name = todo.pop()
        if name in formulas and name not in wanted:
            wanted.add(name)
            todo += names_of(formulas[name])
    return {k: v for k, v in formulas.items() if k in wanted}


def names_of(source: str) -> list[str]:
    """The names a formula reads (none for a formula that does not parse: reported elsewhere)."""
    try:
        return sorted(names(source))
    except FormulaError:
        return []


# ---- the walk: a learner's own order through a space of draws ---------------------------------
# A space is every combination of its givens' values and preset rows. Each (learner, space) has
# its own pseudo-random permutation of the space (a keyed Feistel network, cycle-walked into
# range); round r is the r-th combination along it that meets `require`. So rounds never repeat
# a combination until every valid one has been used, two learners' orders are independent, and
# nothing is stored: the walk is found again from the seed.


def _permute(index: int, size: int, key: bytes) -> int:
    if size <= 1:
        return 0
    bits = max(2, (size - 1).bit_length())
    bits += bits % 2
    half = bits // 2
    mask = (1 << half) - 1
    width = (half + 7) // 8
    x = index
    while True:
        left, right = x >> half, x & mask
        for i in range(4):
            digest = hashlib.blake2b(right.to_bytes(width, "big"), key=key, digest_size=16, person=bytes([i]) * 16)
            left, right = right, left ^ (int.from_bytes(digest.digest(), "big") & mask)
        x = (left << half) | right
        if x < size:
            return x


@dataclass
class _Space:
    givens: list[tuple[str, list[Scalar]]]
    presets: list[PresetUse]

    @property
    def size(self) -> int:
        n = 1
        for _, values in self.givens:
            n *= len(values)
        for p in self.presets:
            n *= len(p.keys())
        return n

    def at(self, index: int) -> tuple[dict[str, Number], dict[str, str]]:
        values: dict[str, Number] = {}
        labels: dict[str, str] = {}
        for name, choices in self.givens:
            index, digit = divmod(index, len(choices))
            values[name] = choices[digit]
        for preset in self.presets:
            keys = preset.keys()
            index, digit = divmod(index, len(keys))
            for given, field in preset.set.items():
                values[given] = _row_value(preset, keys[digit], field)
            if preset.label:
                labels[preset.label] = str(preset.rows[keys[digit]].get("name", keys[digit]))
        return values, labels


def _space(rules: dict[str, VaryRule], presets: list[PresetUse]) -> _Space:
    return _Space([(name, rule.choices()) for name, rule in sorted(rules.items())], list(presets))


@dataclass
class _Walk:
    found: list[tuple[dict[str, Number], dict[str, str]]]
    position: int = 0
    exhausted: bool = False  # every combination looked at: rounds then start over


_walks: OrderedDict[tuple[object, ...], _Walk] = OrderedDict()


_valid: OrderedDict[tuple[object, ...], bool] = OrderedDict()
MAX_VALID = 200_000


def _meets_at(
    space_key: tuple[object, ...], index: int, values: dict[str, Number], ok: Callable[[dict[str, Number]], bool]
) -> bool:
    """``ok(values)`` for the combination ``index`` of the space ``space_key`` names, remembered:
    every learner's walk visits the same combinations of a small space."""
    key = (*space_key, index)
    found = _valid.get(key)
    if found is None:
        found = _valid[key] = ok(values)
        if len(_valid) > MAX_VALID:
            _valid.popitem(last=False)
    return found


def _walk(
    space: _Space,
    key: tuple[object, ...],
    round: int,  # noqa: A002
    ok: Callable[[dict[str, Number]], bool],
    space_key: tuple[object, ...],
) -> tuple[dict[str, Number], dict[str, str]] | None:
    """Round ``round`` (1, 2, ...) of the walk ``key`` names through ``space``: the round-th valid
    combination along the learner's permutation; after the last valid one it starts over."""
    walk = _walks.get(key)
    if walk is None:
        walk = _walks[key] = _Walk(found=[])
        if len(_walks) > MAX_WALKS:
            _walks.popitem(last=False)
    else:
        _walks.move_to_end(key)
    size = space.size
    secret = hashlib.sha256(repr(key).encode()).digest()[:32]
    # Absolute, not per call: a round's draw must not depend on what this process asked before.
    limit = min(size, MAX_DRAWS * round)
    while len(walk.found) < round and walk.position < limit:
        index = _permute(walk.position, size, secret)
        values, labels = space.at(index)
        walk.position += 1
        if _meets_at(space_key, index, values, ok):
            walk.found.append((values, labels))
    walk.exhausted = walk.position >= size
    if len(walk.found) >= round:
        return walk.found[round - 1]
    if walk.exhausted and walk.found:
        return walk.found[(round - 1) % len(walk.found)]
    return None


def _fingerprint(*parts: object) -> str:
    """A digest of content that does not depend on key order (PostgreSQL's jsonb reorders keys:
    a spec read back from the database must draw what the file's spec draws)."""

    def plain(x: object) -> object:
        return x.model_dump(mode="json") if isinstance(x, BaseModel) else x

    text = json.dumps([plain(p) for p in parts], sort_keys=True, default=plain)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


_fingerprints: OrderedDict[int, tuple[object, str]] = OrderedDict()


def _fingerprint_of(owner: object, make: Callable[[], str]) -> str:
    """``make()``, remembered per object (specs are immutable once loaded; the object is kept so
    its id is not reused while remembered)."""
    found = _fingerprints.get(id(owner))
    if found is not None and found[0] is owner:
        return found[1]
    value = make()
    _fingerprints[id(owner)] = (owner, value)
    if len(_fingerprints) > MAX_WALKS:
        _fingerprints.popitem(last=False)
    return value


def variant(spec: ExerciseSpec, *, seed: str, chapter: int, round: int) -> Variant:  # noqa: A002 - the word
    """The variant of ``spec`` for (seed, chapter, round). Round 0, or an exercise that does not
    vary, is the seed's numbers. A scenario's givens come from the scenario's walk (the same for
    every exercise in it); the exercise's own from its own walk, which must meet its `require`."""
    if round == 0 or spec.vary is None:
        return Variant(round=round, labels=tuple(sorted(seed_labels(spec).items())))
    vary = spec.vary
    values: dict[str, Number] = {}
    labels: dict[str, str] = {}
    fallback = Variant(round=round, labels=tuple(sorted(seed_labels(spec).items())), drawn=False)
    scenario = vary.scenario
    if scenario is not None and (scenario.givens or scenario.presets):
        space = _space(scenario.givens, scenario.presets)
        shared = dict(scenario.seed)
        print_ = _fingerprint_of(scenario, lambda: _fingerprint(scenario.model_dump(mode="json", exclude={"members"})))
        key: tuple[object, ...] = ("scenario", seed, chapter, scenario.name, print_)
        got = _walk(
            space, key, round, lambda v: _holds(scenario.require, {**shared, **v}, scenario.derived), ("s", print_)
        )
        if got is None:
            return fallback
        values.update(got[0])
        labels.update(got[1])
    base = {**spec.givens, **values}
    if vary.local or vary.require:
        space = _space(vary.givens, vary.presets)
        own = _fingerprint_of(
            vary, lambda: _fingerprint(vary.givens, vary.presets, vary.require, spec.derived, spec.givens)
        )
        key = ("exercise", seed, chapter, spec.id, own, tuple(sorted(values.items())))
        got = _walk(space, key, round, lambda v: meets(spec, {**base, **v}), ("e", own, key[-1]))
        if got is None:
            return fallback
        values.update(got[0])
        labels.update(got[1])
    return Variant(round=round, values=tuple(sorted(values.items())), labels=tuple(sorted(labels.items())))


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
