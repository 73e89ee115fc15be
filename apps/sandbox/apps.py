from django.apps import AppConfig


class SandboxConfig(AppConfig):
    """The runner: container driver, verdicts, the workers' readiness. No models, no database."""

    name = "apps.sandbox"
    label = "sandbox"
