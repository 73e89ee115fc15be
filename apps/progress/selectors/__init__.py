"""Reads on progress, streaks, leaderboards and cohorts.

Each takes the acting user and is scoped by it: another learner's data or another instructor's
cohort is a 404. None aggregates raw attempts on a learner's request; leaderboards read the
aggregate rows that grading keeps current (services).

One module per topic; callers import this package (``from apps.progress import selectors``):

- ``mastery``: solved out of total per workbook and chapter, split by kind;
- ``streaks``: the day streak and the daily activity;
- ``boards``: the global and cohort leaderboards with the caller's own rank;
- ``cohorts``: cohorts a caller may see or teach, members, assignments, and instructor
  monitoring (the progress table, per-exercise statistics, a member's attempts);
- ``history``: a member's attempts as the learner saw them, by exercise, with reveals and hints;
- ``overview``: the instructor's cohort overview: learners at risk and the exercises they are stuck on;
- ``figures``: the per-exercise figures (solved, revealed, stuck, median attempts and time to solve),
  defined once for the overview, the exercise statistics, their CSV files and the API;
- ``due``: the learner's due dates;
- ``skills``: the skills checklist;
- ``learner``: the learner's rows and counts beside the content, and where to continue.
"""

from apps.exercises.formats import AnswerShown
from apps.progress.selectors.boards import Board, Entry, OwnRank, board_rank, board_top, leaderboard
from apps.progress.selectors.cohorts import (
    ASSIGNED,
    ExerciseStats,
    LearnerRow,
    WorkbookCell,
    answer_label,
    answer_shown,
    assignments,
    cohort_get,
    cohort_list,
    cohort_progress,
    cohort_taught,
    cohorts_taught,
    exercise_stats,
    learner_attempts,
    member_get,
    members,
    skill_checks_taught,
    workbook_cell,
    workbook_readable,
    workbooks_readable,
)
from apps.progress.selectors.due import Due, due_by_assignment, learner_due
from apps.progress.selectors.figures import ExerciseFigures, exercise_figures
from apps.progress.selectors.history import ExerciseHistory, HistoryAttempt, LearnerHistory, learner_history
from apps.progress.selectors.learner import (
    chapter_list,
    continue_point,
    finished_rounds,
    learner_numbers,
    numbers_seed,
    progress_get,
    progress_map,
    workbook_list,
)
from apps.progress.selectors.mastery import Mastery, mastery
from apps.progress.selectors.overview import (
    LEARNER_SORTS,
    STUCK_SORTS,
    CohortOverview,
    OverviewRow,
    Risk,
    StuckPoint,
    cohort_overview,
    risk_counts,
)
from apps.progress.selectors.reviews import (
    ReviewQueue,
    due_cards,
    retention,
    retention_by_chapter,
    reviews_due,
    reviews_due_count,
)
from apps.progress.selectors.skills import SkillBoard, SkillRow, skill_board, skill_get, skill_row
from apps.progress.selectors.streaks import Activity, Day, Streak, activity_get, streak_alive, streak_get

__all__ = [
    "ASSIGNED",
    "LEARNER_SORTS",
    "STUCK_SORTS",
    "Activity",
    "AnswerShown",  # re-exported: exports, apis
    "Board",
    "CohortOverview",
    "Day",
    "Due",
    "Entry",
    "ExerciseFigures",
    "ExerciseHistory",
    "ExerciseStats",
    "HistoryAttempt",
    "LearnerHistory",
    "LearnerRow",
    "Mastery",
    "OverviewRow",
    "OwnRank",
    "ReviewQueue",
    "Risk",
    "SkillBoard",
    "SkillRow",
    "Streak",
    "StuckPoint",
    "WorkbookCell",
    "activity_get",
    "answer_label",
    "answer_shown",
    "assignments",
    "board_rank",
    "board_top",
    "chapter_list",
    "cohort_get",
    "cohort_list",
    "cohort_overview",
    "cohort_progress",
    "cohort_taught",
    "cohorts_taught",
    "continue_point",
    "due_by_assignment",
    "due_cards",
    "exercise_figures",
    "exercise_stats",
    "finished_rounds",
    "leaderboard",
    "learner_attempts",
    "learner_due",
    "learner_history",
    "learner_numbers",
    "mastery",
    "member_get",
    "members",
    "numbers_seed",
    "progress_get",
    "progress_map",
    "retention",
    "retention_by_chapter",
    "reviews_due",
    "reviews_due_count",
    "risk_counts",
    "skill_board",
    "skill_checks_taught",
    "skill_get",
    "skill_row",
    "streak_alive",
    "streak_get",
    "workbook_cell",
    "workbook_list",
    "workbook_readable",
    "workbooks_readable",
]
