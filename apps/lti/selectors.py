"""LTI reads: the deep linking picker's choices, a link's landing page, the grades a solve moves,
a platform's hosts."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from django.db import connection
from django.db.models import Prefetch, QuerySet
from django.urls import reverse
from lti_tool.models import LtiRegistration

from apps.accounts.models import User
from apps.exercises.models import Chapter, Exercise, Workbook
from apps.lti import extensions
from apps.lti.models import CohortLink, GradeBinding, LinkTarget, LtiIdentity, PlatformHost
from apps.progress.models import Cohort
from apps.progress.selectors.mastery import mastery


def pickable_workbooks() -> QuerySet[Workbook]:
    """Published workbooks with their chapters (two queries), for the deep linking picker."""
    return Workbook.objects.filter(is_published=True).prefetch_related(
        Prefetch("chapters", queryset=Chapter.objects.order_by("number"))
    )


def deep_link_extras(*, user_id: int, cohort_id: int | None) -> list[extensions.Placeable]:
    """What apps above lti offer this instructor to place in this course (extensions.py)."""
    user = User.objects.filter(pk=user_id, is_active=True).first()
    cohort = Cohort.objects.filter(pk=cohort_id).first() if cohort_id else None
    if user is None:
        return []
    return extensions.placeable(user=user, cohort=cohort)


def landing_url(*, workbook: Workbook | None, chapter: Chapter | None, instructor: bool = False) -> str:
    """The linked workbook (or chapter's section); a link to no workbook: the cohorts page for
    an instructor, the workbooks for a learner."""
    if workbook is None:
        return reverse("web:cohorts" if instructor else "web:home")
    url = reverse("web:workbook", kwargs={"slug": workbook.slug})
    return f"{url}#ch-{chapter.number}" if chapter is not None else url


# Raw and one statement: this runs after every first solve, for learners with no LTI link as well,
# and composing the two ORM queries it replaced cost ~20 ms of a profiled solve (bench/burst.py).
_BINDINGS_FOR_SOLVE = f"""
SELECT b.id FROM {GradeBinding._meta.db_table} b
JOIN {LtiIdentity._meta.db_table} i ON i.id = b.identity_id
JOIN {LinkTarget._meta.db_table} t ON t.id = b.target_id
WHERE i.user_id = %s AND t.workbook_id = %s
  AND (t.chapter_id IS NULL OR t.chapter_id = (SELECT e.chapter_id FROM {Exercise._meta.db_table} e WHERE e.id = %s))
ORDER BY b.id"""  # noqa: S608 - names are ours, values are parameters


def bindings_for_solve(*, user_id: int, exercise_id: int, workbook_id: int) -> list[int]:
    """The learner's gradable links whose workbook (or chapter) holds the exercise just solved."""
    with connection.cursor() as cursor:
        cursor.execute(_BINDINGS_FOR_SOLVE, [user_id, workbook_id, exercise_id])
        return [int(row[0]) for row in cursor.fetchall()]


@dataclass(frozen=True)
class Fraction:
    solved: int
    total: int


def target_mastery(*, user: User, target: LinkTarget) -> Fraction:
    """Solved out of total (active exercises) for the link's workbook, or its chapter."""
    books = mastery(user=user, workbook=target.workbook)
    if not books:
        return Fraction(0, 0)
    scope = books[0]
    if target.chapter is not None:
        found = [c for c in scope.chapters if c.key == str(target.chapter.number)]
        if not found:
            return Fraction(0, 0)
        scope = found[0]
    tally = scope.tally
    return Fraction(solved=tally.solved, total=tally.total)


def binding_get(*, binding_id: int) -> GradeBinding | None:
    return (
        GradeBinding.objects.select_related(
            "identity__user",
            "target__workbook",
            "target__chapter",
            "target__resource_link__context__deployment__registration",
        )
        .filter(pk=binding_id)
        .first()
    )


def roster_links() -> QuerySet[CohortLink]:
    """Cohorts whose platform offers a roster (NRPS)."""
    return CohortLink.objects.exclude(context__memberships_url="").order_by("pk")


def platform_hosts(*, registration: LtiRegistration) -> frozenset[str]:
    """Where the platform lives: the hosts of its issuer and of the URLs it was registered with,
    and the hosts an administrator added (``PlatformHost``). Deep linking returns only there."""
    urls = [registration.issuer, registration.auth_url, registration.token_url, registration.keyset_url]
    hosts = {(urlsplit(u).hostname or "").lower() for u in urls if u}
    hosts.update(
        h.lower() for h in PlatformHost.objects.filter(registration=registration).values_list("host", flat=True)
    )
    return frozenset(hosts - {""})


def framing_origins() -> list[str]:
    """CSP sources for every active platform's hosts: the LTI pages may be framed by them alone
    (https; any port and http too on a loopback host, where the tests' platform runs)."""
    sources: set[str] = set()
    for registration in LtiRegistration.objects.filter(is_active=True):
        for host in platform_hosts(registration=registration):
            if host in ("127.0.0.1", "localhost", "::1", "[::1]"):
                sources.update({f"http://{host}:*", f"https://{host}:*"})
            else:
                sources.add(f"https://{host}")
    return sorted(sources)
