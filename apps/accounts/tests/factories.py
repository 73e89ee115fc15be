"""factory_boy factories for accounts. Users are made by the real service (roles bring their
admin access and groups), so a factory user is what signing up or ``create_account`` makes."""

from __future__ import annotations

from typing import Any

from factory.declarations import LazyAttribute, Sequence
from factory.django import DjangoModelFactory

from apps.accounts import services
from apps.accounts.models import Role, User

PASSWORD = "a-strong-pass-123"


class UserFactory(DjangoModelFactory[User]):
    class Meta:
        model = User

    username = Sequence(lambda n: f"user{n}")
    email = LazyAttribute(lambda u: f"{u.username}@example.com")
    role = Role.STUDENT
    password = PASSWORD

    @classmethod
    def _create(cls, model_class: type[User], *args: Any, **kwargs: Any) -> User:
        return services.user_create(
            username=kwargs["username"], password=kwargs["password"], email=kwargs["email"], role=kwargs["role"]
        )


class InstructorFactory(UserFactory):
    username = Sequence(lambda n: f"instructor{n}")
    role = Role.INSTRUCTOR
