from django.apps import AppConfig
from django.db.models.signals import post_migrate


class AccountsConfig(AppConfig):
    name = "apps.accounts"
    label = "accounts"

    def ready(self) -> None:
        from apps.accounts.signals import sync_role_groups

        # After every app's permissions exist (auth connects its handler first).
        post_migrate.connect(sync_role_groups, dispatch_uid="accounts.sync_role_groups")
