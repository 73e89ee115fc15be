from django.apps import AppConfig
from django.conf import settings
from django.core.signals import request_started


class AssessmentsConfig(AppConfig):
    """A cohort's graded work: homework and exams drawn per learner from pools, with windows,
    credit over time, time limits, per-learner overrides and a gradebook. Above ``learning``,
    ``progress`` and ``lti`` in the layers: nothing below knows of it, except through the hooks it
    installs at start — the gate that keeps an open exam's exercises out of practice
    (``learning.gates``), and the LTI extension that places an assessment by deep linking and posts
    its scores to a line item of its own (``lti.extensions``)."""

    name = "apps.assessments"
    label = "assessments"
    verbose_name = "Assessments"

    def ready(self) -> None:
        from apps.assessments import gates, lti, tasks

        gates.install()
        lti.install()
        if settings.CELERY_TASK_ALWAYS_EAGER:
            # The embedded default has no beat: requests run the close (at most once a minute, off-thread).
            request_started.connect(tasks.close_due_lazily, dispatch_uid="assessments-close-due")
