"""Installs the exam gate into practice (``learning.gates``): no hint, reveal, answer or new
numbers on an exercise of an exam the learner is taking."""

from apps.assessments import selectors
from apps.learning import gates


def install() -> None:
    gates.register(selectors.open_exam_refusal)
