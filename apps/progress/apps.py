from django.apps import AppConfig


class ProgressConfig(AppConfig):
    name = "apps.progress"
    label = "progress"
