"""Keeps the role groups and their permissions in place after every migrate, and signs a user's API
clients out when their password changes."""

from typing import Any

from django.contrib.auth.models import Group, Permission

from apps.accounts import services
from apps.accounts.models import User
from apps.accounts.services import AUTHORS_GROUP, INSTRUCTORS_GROUP

# What each role may do in the admin. Authors edit content; instructors only read.
GROUP_PERMISSIONS = {
    AUTHORS_GROUP: [
        f"exercises.{action}_{model}"
        for model in ("workbook", "chapter", "exercise")
        for action in ("add", "change", "delete", "view")
    ]
    + ["exercises.view_exerciseversion"],
    INSTRUCTORS_GROUP: [
        "exercises.view_workbook",
        "exercises.view_chapter",
        "exercises.view_exercise",
    ],
}


def sync_role_groups(**kwargs: Any) -> None:
    for name, perms in GROUP_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=name)
        wanted = []
        for perm in perms:
            app_label, codename = perm.split(".")
            wanted += list(Permission.objects.filter(content_type__app_label=app_label, codename=codename))
        group.permissions.set(wanted)


def revoke_tokens_on_password_change(
    sender: type[User], instance: User, created: bool, update_fields: frozenset[str] | None, **kwargs: Any
) -> None:
    """A saved password change (the reset by email, the admin's form, ``changepassword``, any
    ``set_password`` or ``set_unusable_password`` then ``save``) ends every API token of the user.

    One place, on the save, so that no path that changes a password can miss it; a signal rather
    than a service because Django's own views and forms change passwords. Sessions need nothing
    here: Django refuses a session whose stored hash of the password no longer matches
    (``get_session_auth_hash``), except the one the change was made in when the view keeps it
    (``update_session_auth_hash``). A hash upgrade at sign-in is not a change (Django clears
    ``_password`` for it)."""
    if instance.password_changed_on_save(update_fields) and not created:
        services.auth_tokens_revoke(user=instance)
