from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from apps.accounts import services
from apps.accounts.models import Role, User
from apps.exercises.models import Workbook
from apps.progress import services as progress_services
from apps.progress.models import Cohort

DEMO_COHORT = "Demo cohort"

# Local demo accounts for `make run`. Refused unless the settings allow them (config/settings/local.py
# only), so they can never reach production.
DEMO_EMAIL = "student@example.org"  # a password reset for it lands in var/mail/ (README, Settings)
DEMO = [
    ("student", "student-demo-pass", Role.STUDENT, False),
    ("instructor", "instructor-demo-pass", Role.INSTRUCTOR, False),
    ("author", "author-demo-pass", Role.AUTHOR, True),
]
# What each account is for, as the terminal and the README name them.
ROLE_NAMES = {"student": "learner", "instructor": "instructor", "author": "admin and author"}


def demo_lines(*, url: str = "http://127.0.0.1:8000/") -> list[str]:
    """The demo accounts with their passwords, and the demo cohort, as make run prints them last
    (``serve_demo``, after the server's banner). Empty where demo accounts are not allowed."""
    if not settings.DEMO_ACCOUNTS_ALLOWED:
        return []
    emails = dict(User.objects.filter(username__in=[d[0] for d in DEMO]).values_list("username", "email"))
    lines = ["Demo accounts (local only; make run sets these passwords again):"]
    for username, password, _, _ in DEMO:
        email = f"  email={emails[username]}" if emails.get(username) else ""
        lines.append(f"  {ROLE_NAMES[username]:<17} username={username:<11} password={password:<21}{email}".rstrip())
    cohort = Cohort.objects.filter(instructor__username="instructor", name=DEMO_COHORT).first()
    if cohort is not None:
        lines.append(f"Demo cohort {cohort.name!r} (join code {cohort.join_code}); the student is in it.")
    lines.append(f"Open {url} (sign in with an account above; admin at {url}admin/, API docs at {url}api/docs/).")
    return lines


class Command(BaseCommand):
    help = "Create demo student, instructor and author accounts (development only) and print them."

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.DEMO_ACCOUNTS_ALLOWED:
            raise CommandError("seed_demo only runs on the development settings (make run: config.settings.local).")
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
            if role == Role.STUDENT and not user.email:
                services.user_set_email(user=user, email=DEMO_EMAIL)
        self._demo_cohort()
        if options["verbosity"] >= 1:  # make run prints them last instead (serve_demo)
            self.stdout.write("\n".join(demo_lines()))

    def _demo_cohort(self) -> Cohort | None:
        """The instructor's demo cohort with every workbook assigned and the student in it."""
        instructor = User.objects.get(username="instructor")
        cohort = Cohort.objects.filter(instructor=instructor, name=DEMO_COHORT).first()
        if cohort is None:
            workbooks = [(w, None) for w in Workbook.objects.filter(is_published=True)]
            if not workbooks:
                return None
            cohort = progress_services.cohort_create(
                instructor=instructor, name=DEMO_COHORT, time_zone="UTC", workbooks=workbooks
            )
        progress_services.cohort_join(user=User.objects.get(username="student"), code=cohort.join_code)
        return cohort
