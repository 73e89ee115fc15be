from django.apps import AppConfig
from django.conf import settings
from django.core.signals import request_started


class LearningConfig(AppConfig):
    """A learner working through the content: attempts (their one owner), reveals and hints, the
    exercise pages and their API. No models of its own: it writes ``exercises.Attempt`` and moves
    ``progress`` through its services."""

    name = "apps.learning"
    label = "learning"

    def ready(self) -> None:
        from apps.learning import (
            inprocess,
            services,
            signals,  # noqa: F401 - connects the sandbox worker's hooks
        )

        # Queued code goes to the broker, or on the embedded default (no broker) to this process's
        # threads: inprocess.dispatch chooses at each call; services does not import it (a cycle).
        services.attempt_dispatch_set(inprocess.dispatch)
        if settings.CELERY_TASK_ALWAYS_EAGER:
            # The embedded default grades in this process and has no beat: see inprocess.py.
            request_started.connect(inprocess.sweep_orphans, dispatch_uid="sandbox-sweep-orphans")
