"""Graders for choice, order, line-selection and table answers.

They work on the author's own indices and ids; the service maps the opaque ids shown to a
learner back to these before calling them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise

from apps.exercises.content.schema import ChoiceOption, OrderStep
from apps.exercises.grading import numeric, symbolic
from apps.exercises.grading.base import GradeResult, InvalidAnswer
from apps.exercises.grading.numeric import NumericTarget
from apps.exercises.grading.symbolic import SymbolicTarget


def grade_choice(options: Sequence[ChoiceOption], chosen: Sequence[int], *, multiple: bool) -> GradeResult:
    picked = set(chosen)
    if len(picked) != len(chosen):
        raise InvalidAnswer("bad_payload", "An option was chosen twice.")
    if not picked:
        raise InvalidAnswer("empty_answer", "Choose an option." if not multiple else "Choose at least one option.")
    if not multiple and len(picked) != 1:
        raise InvalidAnswer("bad_payload", "Choose exactly one option.")
    correct = {i for i, o in enumerate(options) if o.correct}
    parsed = {"choices": sorted(picked)}
    if picked == correct:
        return GradeResult(True, " ".join(options[i].feedback for i in sorted(picked)), parsed=parsed)
    wrong = sorted(picked - correct)
    if not multiple:
        return GradeResult(False, options[wrong[0]].feedback, parsed=parsed)
    parts = [options[i].feedback for i in wrong]
    missed = len(correct - picked)
    if missed:
        parts.append(f"{missed} correct option{'s' if missed > 1 else ''} not selected.")
    score = max(0.0, (len(picked & correct) - len(wrong)) / len(correct))
    return GradeResult(
        False, " ".join(parts), score=score, parsed=parsed, details={"wrong": len(wrong), "missed": missed}
    )


def order_constraints(
    steps: Sequence[OrderStep], constraints: Sequence[tuple[str, str]] | None
) -> list[tuple[str, str]]:
    """Explicit (before, after) pairs, or the listed order as a chain when none are given."""
    if constraints:
        return list(constraints)
    return list(pairwise(s.id for s in steps))


def grade_order(
    steps: Sequence[OrderStep], constraints: Sequence[tuple[str, str]] | None, order: Sequence[str]
) -> GradeResult:
    ids = [s.id for s in steps]
    if sorted(order) != sorted(ids):
        raise InvalidAnswer("bad_payload", f"Place every step exactly once ({len(ids)} steps).")
    text = {s.id: s.text for s in steps}
    position = {step_id: i for i, step_id in enumerate(order)}
    parsed = {"order": list(order)}
    pairs = order_constraints(steps, constraints)
    for i, step_id in enumerate(order):
        for before, after in pairs:
            if after == step_id and position[before] > i:
                return GradeResult(
                    False,
                    f"Step {i + 1}, “{text[step_id]}”, is out of place: it needs “{text[before]}” first.",
                    parsed=parsed,
                    details={"first_misplaced": i + 1},
                )
    return GradeResult(True, "Correct order.", parsed=parsed)


def grade_lines(buggy: Sequence[int], chosen: Sequence[int], *, line_count: int) -> GradeResult:
    picked = set(chosen)
    if not picked:
        raise InvalidAnswer("empty_answer", "Select at least one line.")
    outside = sorted(n for n in picked if not 1 <= n <= line_count)
    if outside:
        raise InvalidAnswer("bad_payload", f"The snippet has lines 1–{line_count}; {outside} is outside it.")
    bugs = set(buggy)
    parsed = {"lines": sorted(picked)}
    if picked == bugs:
        return GradeResult(
            True, "Found it." if len(bugs) == 1 else f"Found all {len(bugs)} buggy lines.", parsed=parsed
        )
    fine = sorted(picked - bugs)
    found = len(picked & bugs)
    parts = []
    if fine:
        parts.append(
            f"Line{'s' if len(fine) > 1 else ''} {', '.join(map(str, fine))} {'are' if len(fine) > 1 else 'is'} fine."
        )
    if found < len(bugs):
        parts.append(f"You found {found} of {len(bugs)} buggy line{'s' if len(bugs) > 1 else ''}.")
    return GradeResult(False, " ".join(parts), score=found / len(bugs) if not fine else 0.0, parsed=parsed)


def _verdicts(
    targets: Mapping[str, NumericTarget | SymbolicTarget], labels: Mapping[str, str], answers: Mapping[str, str]
) -> dict[str, dict[str, object]]:
    """Each answered field graded on its own; an unreadable one names its field and costs nothing."""
    verdicts: dict[str, dict[str, object]] = {}
    for field_id, target in targets.items():
        raw = str(answers.get(field_id, "")).strip()
        if not raw:
            verdicts[field_id] = {"correct": False, "feedback": "Not answered.", "understood": None, "answered": False}
            continue
        try:
            result = symbolic.grade(raw, target) if isinstance(target, SymbolicTarget) else numeric.grade(raw, target)
        except InvalidAnswer as exc:
            raise InvalidAnswer(
                exc.code, f"{labels[field_id]}: {exc.message}", understood=exc.understood, field=field_id
            ) from None
        verdicts[field_id] = {
            "correct": result.correct,
            "feedback": result.feedback,
            "understood": result.parsed["understood"],
            "answered": True,
            "noted": result.noted,
        }
        if "value" in result.parsed:  # a number's value in base units (the roofline marks it)
            verdicts[field_id]["value"] = result.parsed["value"]
    return verdicts


def _unknown(targets: Mapping[str, object], answers: Mapping[str, str], what: str) -> None:
    unknown = sorted(set(answers) - set(targets))
    if unknown:
        raise InvalidAnswer("bad_payload", f"Unknown {what}: {', '.join(unknown)}.")


def grade_table(
    targets: Mapping[str, NumericTarget], labels: Mapping[str, str], cells: Mapping[str, str]
) -> GradeResult:
    _unknown(targets, cells, "cells")
    missing = [labels[c] for c in targets if not str(cells.get(c, "")).strip()]
    if missing:
        raise InvalidAnswer("empty_answer", f"Fill in every cell (missing: {', '.join(missing)}).")
    verdicts = _verdicts(targets, labels, cells)
    right = sum(bool(v["correct"]) for v in verdicts.values())
    total = len(verdicts)
    parsed = {"cells": {c: {"value": cells[c]} for c in targets}}
    if right == total:  # table columns have no alternates, so no cell is ever accepted with a note
        return GradeResult(True, f"All {total} cells correct.", parsed=parsed, details={"cells": verdicts})
    return GradeResult(
        False,
        f"{right} of {total} cells correct.",
        score=right / total,
        parsed=parsed,
        details={"cells": verdicts},
    )


def grade_parts(
    targets: Mapping[str, NumericTarget | SymbolicTarget], labels: Mapping[str, str], answers: Mapping[str, str]
) -> GradeResult:
    """Several named answers, credit per part. Parts left empty count as not yet right, and cost
    nothing: a submission whose answered parts are all right, with others left for later, does
    not count as an attempt (a wrong part does, as it would in a complete answer)."""
    _unknown(targets, answers, "parts")
    if not any(str(answers.get(k, "")).strip() for k in targets):
        raise InvalidAnswer("empty_answer", "Answer at least one part.")
    verdicts = _verdicts(targets, labels, answers)
    right = sum(bool(v["correct"]) for v in verdicts.values())
    total = len(verdicts)
    answered = [v for v in verdicts.values() if v["answered"]]
    left = total - len(answered)
    noted = right == total and any(v["noted"] for v in verdicts.values())
    lines = [
        f"- **{labels[k]}**: {'✓' if v['correct'] else '✗'} {v['feedback']}"
        for k, v in verdicts.items()
        if v["answered"]
    ]
    if right == total:
        head = f"All {total} parts correct." + (f" {_NOTED_FIELDS}" if noted else "")
    else:
        head = f"{right} of {total} parts correct."
    counts = not (left and all(v["correct"] for v in answered))
    if left:
        head += f" {left} part{'s' if left > 1 else ''} left for later" + (
            "; with the rest right, this check did not count as an attempt." if not counts else "."
        )
    parsed = {"parts": {k: {"value": str(answers[k])} for k in targets if str(answers.get(k, "")).strip()}}
    return GradeResult(
        right == total,
        head + "\n\n" + "\n".join(lines),
        score=right / total,
        parsed=parsed,
        details={"cells": verdicts},
        noted=noted,
        counts=counts,
    )


_NOTED_FIELDS = (
    "One or more was accepted with a unit note (see below): solved, marked until answered in the unit asked."
)
