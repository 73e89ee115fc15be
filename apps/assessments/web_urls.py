"""The assessments pages (learners)."""

from django.urls import URLPattern, path

from apps.assessments import views

urlpatterns: list[URLPattern] = [
    path("assessments/", views.assessment_list, name="assessments"),
    path("assessments/<int:assessment_id>/", views.assessment, name="assessment"),
    path("assessments/<int:assessment_id>/q/<int:position>/", views.question, name="assessment-question"),
    path("assessments/<int:assessment_id>/submit/", views.submit, name="assessment-submit"),
]
