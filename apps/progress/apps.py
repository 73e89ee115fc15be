# mypy: disable-error-code="import-untyped"
# (django-rest-knox ships no types; the Django plugin loads its models while checking this module.)
from django.apps import AppConfig


class ProgressConfig(AppConfig):
    name = "apps.progress"
    label = "progress"
