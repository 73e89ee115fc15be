from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from apps.accounts import services
from apps.accounts.models import Role, User

# Local demo accounts for `make run`. Refused outside DEBUG so they can never reach production.
DEMO = [
    ("student", "student-demo-pass", Role.STUDENT, False),
    ("instructor", "instructor-demo-pass", Role.INSTRUCTOR, False),
    ("author", "author-demo-pass", Role.AUTHOR, True),
]


class Command(BaseCommand):
    help = "Create demo student, instructor and author accounts (development only) and print them."

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.DEBUG:
            raise CommandError("seed_demo only runs with DEBUG on (local development).")
        self.stdout.write("Demo accounts (local only):")
        for username, password, role, superuser in DEMO:
            user = User.objects.filter(username=username).first()
            if user is None:
                user = services.user_create(username=username, password=password, role=role)
            else:
                user.set_password(password)
                user.save(update_fields=["password"])
            if superuser and not user.is_superuser:
                user.is_superuser = True
                user.save(update_fields=["is_superuser"])
            services.user_set_role(user=user, role=role)
            self.stdout.write(f"  {role:<10} username={username}  password={password}")
        self.stdout.write("Open http://127.0.0.1:8000/ (admin at /admin/, API docs at /api/docs/).")
