"""Writes on users: creation and roles. Roles map onto Django groups for admin permissions."""

from __future__ import annotations

from django.contrib.auth.models import Group
from django.db import transaction

from apps.accounts.models import Role, User

AUTHORS_GROUP = "Authors"
INSTRUCTORS_GROUP = "Instructors"


@transaction.atomic
def user_create(*, username: str, password: str, email: str = "", role: str = Role.STUDENT) -> User:
    user = User(username=username, email=email)
    user.set_password(password)
    user.save()
    return user_set_role(user=user, role=role)


@transaction.atomic
def user_set_role(*, user: User, role: str) -> User:
    """Set a role and the admin access that goes with it.

    Authors are staff in the Authors group (content editing). Instructors are staff in the
    Instructors group (read-only monitoring; their cohort scoping arrives with cohorts).
    Students have no admin access.
    """
    if role not in Role.values:
        raise ValueError(f"unknown role {role!r}")
    user.role = role
    user.is_staff = role in (Role.AUTHOR, Role.INSTRUCTOR) or user.is_superuser
    user.save(update_fields=["role", "is_staff"])
    groups = {AUTHORS_GROUP: role == Role.AUTHOR, INSTRUCTORS_GROUP: role == Role.INSTRUCTOR}
    for name, member in groups.items():
        group = Group.objects.get(name=name)
        if member:
            user.groups.add(group)
        else:
            user.groups.remove(group)
    return user
