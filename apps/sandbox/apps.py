from django.apps import AppConfig
from django.conf import settings
from django.core.signals import request_started


class SandboxConfig(AppConfig):
    name = "apps.sandbox"
    label = "sandbox"

    def ready(self) -> None:
        from apps.sandbox import signals  # noqa: F401 - connects the worker hooks

        if settings.CELERY_TASK_ALWAYS_EAGER:
            # The embedded default grades in this process and has no beat: see inprocess.py.
            from apps.sandbox import inprocess

            request_started.connect(inprocess.sweep_orphans, dispatch_uid="sandbox-sweep-orphans")
