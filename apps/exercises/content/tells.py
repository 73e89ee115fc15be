"""Choices that give their answer away by their form rather than their content.

An outside review found the correct option strictly the longest in 26 of 36 single-answer
choices: always picking the longest scored about 72%. The usual cause is a justification written
into the correct option ("…, because the head is untied") while distractors stay bare; it belongs
in the option's feedback. ``choice_tell`` measures the rendered options:

- **warning**: the correct option is strictly the longest and longer than ``WARN_RATIO`` × the
  median distractor, or it alone carries a justification ("because", "since", "so that", "—",
  a semicolon) — ``check_content`` prints it;
- **problem**: the correct option is longer than ``FAIL_RATIO`` × even the longest distractor —
  ``check_content`` fails.

Multiple-answer choices are left out: there the correct options are several, and length says
less. Lengths are of the text a learner reads (Markdown and TeX markup stripped).
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

from apps.exercises.content.schema import ExerciseSpec

WARN_RATIO = 1.25  # × the median distractor
FAIL_RATIO = 1.5  # × the longest distractor
# TeX commands first: "\\gamma" is one symbol to read (counted as one), not a backslash and five letters.
_COMMAND = re.compile(r"\\[a-zA-Z]+")
_MARKUP = re.compile(r"[$*_`\\{}]")
_JUSTIFICATION = re.compile(r"\b(?:because|since|so that|which means|hence|thus)\b|\s[—–]\s|;", re.IGNORECASE)


def visible_length(text: str) -> int:
    """Characters a learner reads: Markdown and TeX markup left out, runs of spaces as one."""
    return len(re.sub(r"\s+", " ", _MARKUP.sub("", _COMMAND.sub("·", text))).strip())


@dataclass(frozen=True)
class ChoiceTell:
    longest_is_correct: bool  # strictly the longest: "pick the longest" would get it right
    ratio_to_median: float
    ratio_to_longest: float
    warnings: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def choice_tell(spec: ExerciseSpec) -> ChoiceTell | None:
    """How much a single-answer choice's form tells (``spec`` rendered: ``ResolvedExercise.spec``)."""
    if spec.multiple or not spec.options:  # options: a choice (the schema allows them nowhere else)
        return None
    correct = next(o for o in spec.options if o.correct)
    others = [o for o in spec.options if not o.correct]
    length = visible_length(correct.text)
    lengths = [visible_length(o.text) for o in others]
    longest = max(lengths)
    ratio_median = length / max(1.0, statistics.median(lengths))
    ratio_longest = length / max(1, longest)
    strictly_longest = length > longest
    warnings: list[str] = []
    problems: list[str] = []
    if ratio_longest > FAIL_RATIO:
        problems.append(
            f"the correct option is {ratio_longest:.2f}× the longest distractor ({length} vs {longest} characters): "
            "picking the longest finds it. Make the options parallel; move the reasoning into the feedback"
        )
    elif strictly_longest and ratio_median > WARN_RATIO:
        warnings.append(
            f"the correct option is the longest, {ratio_median:.2f}× the median distractor "
            f"({length} vs {statistics.median(lengths):.0f} characters)"
        )
    if _JUSTIFICATION.search(correct.text) and not any(_JUSTIFICATION.search(o.text) for o in others):
        warnings.append("only the correct option argues for itself (because / since / — / ;): put that in its feedback")
    return ChoiceTell(strictly_longest, ratio_median, ratio_longest, warnings, problems)
