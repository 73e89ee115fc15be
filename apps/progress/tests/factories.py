"""factory_boy factories for cohorts and their members. Rows are written directly: a membership
made here has no score backfill (``services.cohort_join`` does that; test it through the service)."""

from __future__ import annotations

from factory.declarations import Sequence, SubFactory
from factory.django import DjangoModelFactory

from apps.accounts.tests.factories import InstructorFactory, UserFactory
from apps.progress.models import Cohort, CohortWorkbook, Membership


class CohortFactory(DjangoModelFactory[Cohort]):
    class Meta:
        model = Cohort

    name = Sequence(lambda n: f"Cohort {n}")
    instructor = SubFactory(InstructorFactory)
    time_zone = "UTC"
    join_code = Sequence(lambda n: f"JOIN{n:08d}")


class MembershipFactory(DjangoModelFactory[Membership]):
    class Meta:
        model = Membership

    cohort = SubFactory(CohortFactory)
    user = SubFactory(UserFactory)


class CohortWorkbookFactory(DjangoModelFactory[CohortWorkbook]):
    class Meta:
        model = CohortWorkbook

    cohort = SubFactory(CohortFactory)
    workbook = SubFactory("apps.exercises.tests.factories.WorkbookFactory")
