from django.urls import path

from apps.progress import apis

urlpatterns = [
    path("progress/", apis.ProgressApi.as_view(), name="progress"),
    path("progress/<slug64:slug>/", apis.WorkbookProgressApi.as_view(), name="progress-workbook"),
    path("progress/<slug64:slug>/reset/", apis.WorkbookResetApi.as_view(), name="progress-workbook-reset"),
    path("workbooks/<slug64:slug>/skills/", apis.SkillBoardApi.as_view(), name="skills"),
    path("workbooks/<slug64:slug>/skills/<slug64:key>/", apis.SkillMarkApi.as_view(), name="skill-mark"),
    path("streak/", apis.StreakApi.as_view(), name="streak"),
    path("leaderboard/", apis.LeaderboardApi.as_view(), name="leaderboard"),
    path("profile/", apis.ProfileApi.as_view(), name="profile"),
    path("cohorts/", apis.CohortListApi.as_view(), name="cohort-list"),
    path("cohorts/join/", apis.CohortJoinApi.as_view(), name="cohort-join"),
    path("cohorts/<int:cohort_id>/", apis.CohortDetailApi.as_view(), name="cohort-detail"),
    path("cohorts/<int:cohort_id>/membership/", apis.CohortMembershipApi.as_view(), name="cohort-membership"),
    path("cohorts/<int:cohort_id>/progress/", apis.CohortProgressApi.as_view(), name="cohort-progress"),
    path("cohorts/<int:cohort_id>/overview/", apis.CohortOverviewApi.as_view(), name="cohort-overview"),
    path("cohorts/<int:cohort_id>/overview.csv", apis.CohortOverviewCsvApi.as_view(), name="cohort-overview-csv"),
    path(
        "cohorts/<int:cohort_id>/stuck-points.csv",
        apis.CohortStuckPointsCsvApi.as_view(),
        name="cohort-stuck-points-csv",
    ),
    path("cohorts/<int:cohort_id>/exercises/", apis.CohortExerciseStatsApi.as_view(), name="cohort-exercise-stats"),
    path("cohorts/<int:cohort_id>/progress.csv", apis.CohortProgressCsvApi.as_view(), name="cohort-progress-csv"),
    path(
        "cohorts/<int:cohort_id>/exercises.csv",
        apis.CohortExerciseStatsCsvApi.as_view(),
        name="cohort-exercise-stats-csv",
    ),
    path(
        "cohorts/<int:cohort_id>/learners/<int:user_id>/attempts/",
        apis.CohortLearnerAttemptsApi.as_view(),
        name="cohort-learner-attempts",
    ),
    path(
        "cohorts/<int:cohort_id>/learners/<int:user_id>/attempts.csv",
        apis.CohortLearnerAttemptsCsvApi.as_view(),
        name="cohort-learner-attempts-csv",
    ),
]
