"""Keeps the role groups and their permissions in place after every migrate."""

from typing import Any

from django.contrib.auth.models import Group, Permission

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
