"""The assessments API (under /api/v1/)."""

from django.urls import path

from apps.assessments import apis

urlpatterns = [
    path("cohorts/<int:cohort_id>/assessments/", apis.CohortAssessmentsApi.as_view(), name="cohort-assessments"),
    path("cohorts/<int:cohort_id>/gradebook/", apis.GradebookApi.as_view(), name="cohort-gradebook"),
    path("cohorts/<int:cohort_id>/gradebook.csv", apis.GradebookCsvApi.as_view(), name="cohort-gradebook-csv"),
    path("assessments/<int:assessment_id>/", apis.AssessmentDetailApi.as_view(), name="assessment-detail"),
    path("assessments/<int:assessment_id>/overrides/", apis.OverridesApi.as_view(), name="assessment-overrides"),
    path(
        "assessments/<int:assessment_id>/overrides/<int:override_id>/revoke/",
        apis.OverrideRevokeApi.as_view(),
        name="assessment-override-revoke",
    ),
    path(
        "assessments/<int:assessment_id>/learners/<int:user_id>/score/",
        apis.ScoreApi.as_view(),
        name="assessment-score",
    ),
    path("assessments/<int:assessment_id>/live/", apis.LiveApi.as_view(), name="assessment-live"),
    path("me/assessments/", apis.MyAssessmentsApi.as_view(), name="my-assessments"),
    path("assessments/<int:assessment_id>/open/", apis.OpenApi.as_view(), name="assessment-open"),
    path("assessments/<int:assessment_id>/instance/", apis.InstanceApi.as_view(), name="assessment-instance"),
    path(
        "assessments/<int:assessment_id>/questions/<int:position>/answers/",
        apis.AnswerApi.as_view(),
        name="assessment-answer",
    ),
    path(
        "assessments/<int:assessment_id>/questions/<int:position>/hints/",
        apis.HintApi.as_view(),
        name="assessment-hint",
    ),
    path("assessments/<int:assessment_id>/submit/", apis.SubmitApi.as_view(), name="assessment-submit"),
]
