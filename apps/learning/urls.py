from django.urls import path

from apps.learning import apis

EXERCISE = "workbooks/<slug64:slug>/exercises/<exercise_number:number>/"

urlpatterns = [
    path("workbooks/", apis.WorkbookListApi.as_view(), name="workbook-list"),
    path("workbooks/<slug64:slug>/", apis.WorkbookDetailApi.as_view(), name="workbook-detail"),
    path("workbooks/<slug64:slug>/chapters/<int:number>/", apis.ChapterDetailApi.as_view(), name="chapter-detail"),
    path("workbooks/<slug64:slug>/export/", apis.WorkbookExportApi.as_view(), name="workbook-export"),
    path("workbooks/<slug64:slug>/exercises/", apis.ExerciseListApi.as_view(), name="exercise-list"),
    path(EXERCISE, apis.ExerciseDetailApi.as_view(), name="exercise-detail"),
    path(EXERCISE + "attempts/", apis.ExerciseAttemptsApi.as_view(), name="exercise-attempts"),
    path(EXERCISE + "preview/", apis.ExercisePreviewApi.as_view(), name="exercise-preview"),
    path(EXERCISE + "reveal/", apis.ExerciseRevealApi.as_view(), name="exercise-reveal"),
    path(EXERCISE + "hints/", apis.ExerciseHintApi.as_view(), name="exercise-hints"),
    path(EXERCISE + "new-numbers/", apis.ExerciseNewNumbersApi.as_view(), name="exercise-new-numbers"),
    path("attempts/", apis.AttemptListApi.as_view(), name="attempt-list"),
    path("reviews/", apis.ReviewListApi.as_view(), name="review-list"),
    path("reviews/<int:card_id>/start/", apis.ReviewStartApi.as_view(), name="review-start"),
    path("attempts/<int:attempt_id>/", apis.AttemptDetailApi.as_view(), name="attempt-detail"),
]
