"""Progress says an exercise was solved (after commit): the learner's LTI grades that it moves
are scheduled to post. A receiver must not fail the learner's request."""

from __future__ import annotations

import logging
from typing import Any

from django.dispatch import receiver

from apps.lti import selectors, tasks
from apps.progress.signals import exercise_solved

logger = logging.getLogger(__name__)


@receiver(exercise_solved, dispatch_uid="lti-score-after-solve")
def score_after_solve(sender: Any, *, user_id: int, exercise_id: int, workbook_id: int, **kwargs: Any) -> None:
    try:
        for binding_id in selectors.bindings_for_solve(
            user_id=user_id, exercise_id=exercise_id, workbook_id=workbook_id
        ):
            tasks.score_post_schedule(binding_id=binding_id)
    except Exception:
        logger.exception("lti score not scheduled", extra={"user_id": user_id, "exercise_id": exercise_id})
