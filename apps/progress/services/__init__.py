"""Writes on a learner's progress, streak and scores, and on cohorts.

Everything a graded attempt changes is written in the attempt's transaction: the progress row,
and on a solve the streak, the day's activity and the leaderboard rows. Reads (selectors)
are then lookups, never aggregations over raw attempts.

One module per topic; callers import this package (``from apps.progress import services``):

- ``attempts``: counting a graded attempt in the progress row (the grading hot path's SQL);
- ``solves``: streak, daily activity, points, leaderboard rows and their rebuild;
- ``profile``: a learner's settings and workbook reset;
- ``cohorts``: cohorts, join codes, membership;
- ``skills``: the skills checklist and spaced retrieval;
- ``reviews``: review cards of solved exercises, scheduled by FSRS.
"""

from apps.progress.services.attempts import AttemptInsert, attempt_count, attempt_record, progress_lock
from apps.progress.services.cohorts import (
    CODE_ALPHABET,
    CODE_LENGTH,
    can_teach,
    cohort_assign,
    cohort_code_rotate,
    cohort_create,
    cohort_delete,
    cohort_join,
    cohort_leave,
    cohort_unassign,
    cohort_update,
    join_code_new,
    join_code_normalize,
)
from apps.progress.services.profile import profile_update, stats_time_zone_refresh, time_zone_validate, workbook_reset
from apps.progress.services.reviews import (
    progress_next_round,
    review_revealed,
    review_solved,
    review_start,
    review_wrong,
)
from apps.progress.services.skills import SKILL_ACTIONS, skill_mark
from apps.progress.services.solves import (
    GLOBAL_ALL,
    SolveResult,
    cohort_week_board,
    effective_time_zone,
    global_week_board,
    is_global,
    points_for,
    score_add,
    scores_rebuild,
    slots_rebuild,
    solve_record,
    week_start,
)

__all__ = [
    "CODE_ALPHABET",
    "CODE_LENGTH",
    "GLOBAL_ALL",
    "SKILL_ACTIONS",
    "AttemptInsert",
    "SolveResult",
    "attempt_count",
    "attempt_record",
    "can_teach",
    "cohort_assign",
    "cohort_code_rotate",
    "cohort_create",
    "cohort_delete",
    "cohort_join",
    "cohort_leave",
    "cohort_unassign",
    "cohort_update",
    "cohort_week_board",
    "effective_time_zone",
    "global_week_board",
    "is_global",
    "join_code_new",
    "join_code_normalize",
    "points_for",
    "profile_update",
    "progress_lock",
    "progress_next_round",
    "review_revealed",
    "review_solved",
    "review_start",
    "review_wrong",
    "score_add",
    "scores_rebuild",
    "skill_mark",
    "slots_rebuild",
    "solve_record",
    "stats_time_zone_refresh",
    "time_zone_validate",
    "week_start",
    "workbook_reset",
]
