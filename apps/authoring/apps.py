from django.apps import AppConfig


class AuthoringConfig(AppConfig):
    """Drafts of exercises: written, previewed on several learners' numbers and checked (code in
    the sandbox, off the request) before they go live through the content services. Above
    ``exercises`` and ``sandbox``; nothing below knows of it, and no learner's page or API reads it."""

    name = "apps.authoring"
    label = "authoring"
    verbose_name = "Authoring"
