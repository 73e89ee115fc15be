from typing import Any

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin
from django.http import HttpRequest

from apps.accounts import services
from apps.accounts.models import User


@admin.register(User)
class UserAdmin(BaseUserAdmin[User]):
    list_display = ("username", "email", "role", "is_staff", "date_joined", "last_login")
    list_filter = ("role", "is_staff", "is_superuser", "is_active")
    fieldsets = (*BaseUserAdmin.fieldsets, ("Role", {"fields": ("role",)}))  # type: ignore[misc]

    def save_model(self, request: HttpRequest, obj: User, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        # The role decides staff access and group permissions; keep them in step.
        services.user_set_role(user=obj, role=obj.role)
