from django.urls import path

from apps.itemstats import apis

urlpatterns = [
    path(
        "workbooks/<slug64:slug>/exercises/<exercise_number:number>/analysis/",
        apis.ItemAnalysisApi.as_view(),
        name="exercise-analysis",
    ),
]
