"""For tests: the correct payload for any exercise, and what must stay secret before solving."""

from __future__ import annotations

import re
from typing import Any

from apps.exercises import presentation
from apps.exercises.choices import AnswerFormat
from apps.exercises.content import cache, secrecy
from apps.exercises.content.resolve import ResolvedExercise
from apps.exercises.content.variants import Variant
from apps.exercises.grading.numeric import NumericTarget, format_in
from apps.exercises.grading.symbolic import SymbolicTarget
from apps.exercises.models import Exercise


def variant_for(exercise: Exercise, user: Any = None) -> Variant | None:
    """The numbers ``user`` is on now (None without a user: the seed's)."""
    version = exercise.current_version
    assert version is not None
    if user is None:
        return None
    from apps.learning import selectors as learning_selectors
    from apps.progress import selectors as progress_selectors

    progress = progress_selectors.progress_get(user=user, exercise=exercise)
    round_ = progress.round if progress is not None else 1
    return learning_selectors.learner_variant(user_id=user.pk, exercise=exercise, version=version, round=round_)


def resolved_for(exercise: Exercise, user: Any = None, variant: Any = None) -> ResolvedExercise:
    """The exercise with the numbers ``user`` is on now (the seed's without a user), or on
    ``variant``'s (an assessment question's own numbers)."""
    assert exercise.current_version is not None
    return cache.resolved(exercise.current_version, variant if variant is not None else variant_for(exercise, user))


def on_seed_numbers(user: Any, *exercises: Exercise) -> None:
    """Put ``user`` on round 0 of these exercises: the seed's numbers, which a test may quote."""
    from apps.progress.models import ExerciseProgress

    for exercise in exercises:
        ExerciseProgress.objects.update_or_create(
            user=user, exercise=exercise, defaults={"workbook_id": exercise.workbook_id, "round": 0}
        )


def correct_payload(exercise: Exercise, user: Any = None, variant: Any = None) -> dict[str, Any]:
    """The right answer for ``user``'s numbers (a varying exercise differs per learner)."""
    version = exercise.current_version
    assert version is not None
    r = resolved_for(exercise, user, variant)
    spec = r.spec
    if spec.format == AnswerFormat.NUMERIC:
        assert r.answer_text is not None
        return {"answer": r.answer_text}
    if spec.format == AnswerFormat.CHOICE:
        ids = presentation.option_ids(version, len(spec.options or []))
        return {"choices": [ids[i] for i, o in enumerate(spec.options or []) if o.correct]}
    if spec.format == AnswerFormat.ORDER:
        opaque = presentation.step_ids(version, spec)
        return {"order": [opaque[s.id] for s in spec.steps or []]}
    if spec.format == AnswerFormat.LINES:
        return {"lines": list(spec.buggy_lines or [])}
    if spec.format == AnswerFormat.TABLE:
        return {"cells": {cid: t.text() for cid, t in r.cells.items()}}
    if spec.format == AnswerFormat.PARTS:
        return {"parts": {key: _part_text(t) for key, t in r.parts.items()}}
    assert spec.code is not None
    return {"code": spec.code.solution}


def _part_text(target: NumericTarget | SymbolicTarget) -> str:
    return target.text if isinstance(target, SymbolicTarget) else target.text()


def wrong_payload(exercise: Exercise, user: Any = None, variant: Any = None) -> dict[str, Any]:
    version = exercise.current_version
    assert version is not None
    r = resolved_for(exercise, user, variant)
    spec = r.spec
    if spec.format == AnswerFormat.NUMERIC:
        assert r.numeric is not None
        return {"answer": format_in(r.numeric.value * 7.3 + r.numeric.input_unit.scale, r.numeric.input_unit)}
    if spec.format == AnswerFormat.CHOICE:
        ids = presentation.option_ids(version, len(spec.options or []))
        return {"choices": [next(ids[i] for i, o in enumerate(spec.options or []) if not o.correct)]}
    if spec.format == AnswerFormat.ORDER:
        opaque = presentation.step_ids(version, spec)
        return {"order": [opaque[s.id] for s in reversed(spec.steps or [])]}
    if spec.format == AnswerFormat.LINES:
        assert spec.code is not None
        fine = next(n for n in range(1, 100) if n not in (spec.buggy_lines or []))
        return {"lines": [fine]}
    if spec.format == AnswerFormat.TABLE:
        return {"cells": dict.fromkeys(r.cells, "1")}
    if spec.format == AnswerFormat.PARTS:
        return {"parts": {key: _wrong_part(t) for key, t in r.parts.items()}}
    return {"code": "def nothing():\n    pass\n"}


def _wrong_part(target: NumericTarget | SymbolicTarget) -> str:
    if isinstance(target, SymbolicTarget):
        return f"1000*{target.symbols[0]}**3 + 7"
    return format_in(target.value * 7.3 + target.input_unit.scale, target.input_unit)


_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")


def strings_in(data: Any) -> str:
    """Every string (keys and values) in decoded JSON bodies, one per line, unescaped."""
    out: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                out.append(str(key))
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)
        elif node is not None and not (isinstance(node, str) and _TIMESTAMP.match(node)):
            # Timestamps are skipped: "…:51.007812Z" would "contain" an answer of 1.0078.
            out.append(str(node))

    walk(data)
    return "\n".join(out)


def hidden_test_ids(exercise: Exercise) -> list[str]:
    """Hidden test data: never shown, not even after solving."""
    version = exercise.current_version
    assert version is not None
    code = cache.resolved(version).spec.code
    return [c.id for c in code.cases] if code else []


def secrets(exercise: Exercise, user: Any = None) -> list[str]:
    """Texts that would give the answer away; none may appear before solving or revealing.
    All of them appear once the exercise is revealed, except the order (a list of ids).
    Numbers are not among them: ``numeric_secrets`` finds those in every way they are written."""
    version = exercise.current_version
    assert version is not None
    variant = variant_for(exercise, user)
    r = cache.resolved(version, variant)
    html = cache.rendered(version, variant)
    spec = r.spec
    found: list[str] = []
    if spec.explanation.strip():
        found.append(html.explanation_html)
    if r.numeric is not None:
        found += [a.feedback for a in r.numeric.alternates]
    for i, option in enumerate(spec.options or []):
        if option.correct:
            found.append(html.options_feedback_html[i])
    if spec.code is not None:
        found.append(spec.code.solution)
    # Expressions; short ones ("d") occur by chance, for them the structural check is the guard.
    found += [t.text for t in r.parts.values() if isinstance(t, SymbolicTarget) and len(t.text) >= 5]
    # A text the prompt itself shows is public.
    return [s for s in found if s and s not in html.prompt_html]


def numeric_secrets(exercise: Exercise, user: Any = None) -> list[secrecy.Answer]:
    """Every number the exercise asks for (answer, parts, table cells), less those equal to a given."""
    return secrecy.secret_answers(resolved_for(exercise, user))


def public_numbers(exercise: Exercise, user: Any = None) -> list[float]:
    """The givens a learner has before solving: the exercise's, and its chapter intro's."""
    chapter = [float(v) for v in (exercise.chapter.givens or {}).values() if type(v) in (int, float)]
    return secrecy.givens_of(resolved_for(exercise, user).spec) + chapter


SECRET_KEYS = ("explanation_html", "buggy_lines", "fixed_code", "reference_solution", "cases", "expected", "alternates")


def secret_keys_in(data: Any) -> set[str]:
    """Keys that only a solution block may carry, wherever they appear in a JSON body."""
    keys: set[str] = set()
    if isinstance(data, dict):
        for key, value in data.items():
            if key in SECRET_KEYS:
                keys.add(key)
            if key in ("solution", "plot") and value is not None:
                keys.add(key)
            keys |= secret_keys_in(value)
    elif isinstance(data, list):
        for item in data:
            keys |= secret_keys_in(item)
    return keys
