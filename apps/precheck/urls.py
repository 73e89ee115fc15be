from django.urls import path

from apps.precheck import apis

EXERCISE = "workbooks/<slug64:slug>/exercises/<exercise_number:number>/"

urlpatterns = [
    path(EXERCISE + "precheck/", apis.ExercisePrecheckApi.as_view(), name="exercise-precheck"),
    path("prechecks/<uuid:precheck_id>/", apis.PrecheckDetailApi.as_view(), name="precheck-detail"),
]
