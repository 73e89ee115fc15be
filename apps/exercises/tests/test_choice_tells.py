"""Every workbook's single-answer choices stay free of length tells (rewritten for issue 15).

check_content fails only the worst tell (1.5x the longest distractor) and warns on the milder
ones; these workbooks were brought to no tell at all, and to a "pick the longest" (and "pick the
shortest") strategy that does no better than a guess by more than 10 points. A later edit that
writes the justification back into a correct option fails here rather than only warning.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from apps.exercises.content.loader import load_workbook
from apps.exercises.content.report import DEFAULT_ROOT
from apps.exercises.content.resolve import resolve
from apps.exercises.content.tells import choice_tell, visible_length

REWRITTEN = ["transformer-math", "lm-from-scratch", "roofline", "systems-serving", "scaling-book"]
MARGIN = 0.10  # above the share a blind guess gets right


@dataclass
class Strategies:
    choices: int = 0
    guess: float = 0.0  # expected right answers of a blind guess: sum of 1/options
    longest: int = 0  # correct option strictly the longest
    shortest: int = 0  # correct option strictly the shortest
    tells: list[str] = field(default_factory=list)  # check_content's tell problems and warnings


def strategies(slug: str) -> Strategies:
    found = Strategies()
    for chapter in load_workbook(DEFAULT_ROOT / slug, compute_expected=False).chapters:
        for exercise in chapter.exercises:
            spec = resolve(exercise).spec
            tell = choice_tell(spec)
            if tell is None:
                continue
            found.tells += [f"{exercise.number}: {t}" for t in tell.problems + tell.warnings]
            lengths = [visible_length(o.text) for o in spec.options or []]
            correct = next(visible_length(o.text) for o in spec.options or [] if o.correct)
            others = lengths.copy()
            others.remove(correct)
            found.choices += 1
            found.guess += 1 / len(lengths)
            found.longest += correct > max(others)
            found.shortest += correct < min(others)
    return found


@pytest.mark.parametrize("slug", REWRITTEN)
def test_no_choice_gives_its_answer_away_by_length_or_wording(slug: str) -> None:
    found = strategies(slug)
    assert found.choices, f"{slug} has no single-answer choice to check"
    assert found.tells == []
    bound = found.guess + MARGIN * found.choices
    assert found.longest <= bound, f"longest option correct in {found.longest} of {found.choices}"
    assert found.shortest <= bound, f"shortest option correct in {found.shortest} of {found.choices}"
