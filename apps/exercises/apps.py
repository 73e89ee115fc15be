from django.apps import AppConfig


class ExercisesConfig(AppConfig):
    name = "apps.exercises"
    label = "exercises"
