from django.apps import AppConfig


class AssessmentsConfig(AppConfig):
    """A cohort's graded work: homework and exams drawn per learner from pools, with windows,
    credit over time, time limits, per-learner overrides and a gradebook. Above ``learning`` and
    ``progress`` in the layers: practice knows nothing of it, except through the gate it installs
    (``learning.gates``), which keeps an open exam's exercises out of practice."""

    name = "apps.assessments"
    label = "assessments"
    verbose_name = "Assessments"

    def ready(self) -> None:
        from apps.assessments import gates

        gates.install()
