from django.apps import AppConfig


class PrecheckConfig(AppConfig):
    """A learner's free precheck of their code: the exercise's examples and cheap structural checks,
    run in the sandbox like a submission but kept only briefly in the cache. No models: a precheck
    writes no row, counts no attempt and moves no progress (the import-linter contracts say it
    imports neither ``apps.progress`` nor the services that write attempts)."""

    name = "apps.precheck"
    label = "precheck"
