from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.core import checks
from django.db.models.signals import post_migrate, post_save


@checks.register(checks.Tags.security, deploy=True)
def password_reset_mail(**kwargs: Any) -> list[checks.CheckMessage]:
    """A deployment without SMTP runs, but learners who forget their password need an admin."""
    if settings.PASSWORD_RESET_BY_EMAIL:
        return []
    return [
        checks.Warning(
            "Password resets by email are off: EMAIL_HOST is not set.",
            hint="Set EMAIL_HOST and DEFAULT_FROM_EMAIL (deploy/README.md) so learners can reset their password.",
            id="accounts.W001",
        )
    ]


class AccountsConfig(AppConfig):
    name = "apps.accounts"
    label = "accounts"

    def ready(self) -> None:
        from apps.accounts.models import User
        from apps.accounts.signals import revoke_tokens_on_password_change, sync_role_groups

        # After every app's permissions exist (auth connects its handler first).
        post_migrate.connect(sync_role_groups, dispatch_uid="accounts.sync_role_groups")
        post_save.connect(revoke_tokens_on_password_change, sender=User, dispatch_uid="accounts.revoke_tokens")
