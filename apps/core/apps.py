from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "apps.core"
    label = "core"

    def ready(self) -> None:
        from apps.core import converters

        # Before any URLconf is imported: the URL patterns use these converters by name.
        converters.register()
