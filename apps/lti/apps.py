from django.apps import AppConfig


class LtiConfig(AppConfig):
    """LTI 1.3 tool (docs/lti.md): launches sign learners in and enrol them in the course's cohort;
    deep linking picks a workbook or chapter; grades go back through AGS, rosters come from NRPS.
    Built on django-lti (``lti_tool``: registrations, deployments, keys) and pylti1p3."""

    name = "apps.lti"
    label = "lti"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.lti import receivers  # noqa: F401 - connects to progress's exercise_solved
