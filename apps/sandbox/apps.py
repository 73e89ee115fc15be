from django.apps import AppConfig


class SandboxConfig(AppConfig):
    name = "apps.sandbox"
    label = "sandbox"

    def ready(self) -> None:
        from apps.sandbox import signals  # noqa: F401 - connects the worker hooks
