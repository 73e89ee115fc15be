"""Assessments in the LMS (LTI 1.3): one gradebook column per assessment.

- Deep linking may place an assessment of the course's cohort (``placeable``): a resource link with
  ``{"assessment": "<id>"}`` and a line item of its own (resourceId ``assessment:<id>``, the
  assessment's title and points), which the platform creates with the link.
- Launching such a link (``launch``) lands a learner on the assessment's page and an instructor on
  its admin page; the platform's line item URL, when the launch carries one, is kept for it.
- When an instance's final score may have changed (``instance_scored``: submitted, closed,
  overridden) its score is posted to that line item (``post_instance_score``, a Celery task that
  retries a busy or unreachable platform), the line item found or created once per course and
  resource id (``lti.services.context_lineitem_ensure``). ``post_scores_due`` (beat) posts what
  is still owed: a score hidden until the assessment closed, a post lost with its worker.

What is posted, and when: a closed instance's final score (the override if there is one) as
Completed / FullyGraded, or an instructor's score override on an instance still open (InProgress /
FullyGraded: it is the instructor's grade). Nothing is posted while the learner may still not see
their score (verdicts held until the close): an LMS shows its gradebook to the learner, so posting
it then would tell them what the assessment hides. The sweep posts it once the verdicts show.
The mastery grade of workbook links (``lti.services.score_post``) is unchanged.

This app sits above ``lti`` in the layers: ``lti`` knows it only through ``lti.extensions``.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from celery import shared_task
from django.conf import settings
from django.core.cache import cache
from django.db.models import F, Q
from django.db.models.functions import Coalesce
from django.urls import NoReverseMatch, reverse
from django.utils import timezone

from apps.accounts.models import User
from apps.assessments import selectors
from apps.assessments.models import Assessment, Instance, Verdicts
from apps.assessments.signals import instance_scored
from apps.lti import extensions
from apps.lti import services as lti_services
from apps.lti import tasks as lti_tasks
from apps.lti.exceptions import LaunchRefused, PlatformUnavailable
from apps.progress.models import Cohort

logger = logging.getLogger(__name__)

KEY = "assessment"  # the custom parameter of an assessment link
POST_TASK = "assessments.post_lti_score"
POST_DUE_TASK = "assessments.post_lti_scores_due"
POST_DUE_LIMIT = 500
_ID = re.compile(r"[0-9]{1,12}")


def resource_id(assessment_id: int) -> str:
    return f"assessment:{assessment_id}"


# ---- deep linking and launches ------------------------------------------------------------------


def placeable(user: User, cohort: Cohort) -> list[extensions.Placeable]:
    """The course's assessments, for an instructor who teaches its cohort (none for anyone else)."""
    if not selectors.cohorts_taught(user=user).filter(pk=cohort.pk).exists():
        return []
    assessments = list(cohort.assessments.prefetch_related("questions").order_by("opens_at", "id"))
    points = selectors.assessment_points(assessments)
    choices = []
    for a in assessments:
        total = points[a.pk]
        note = (
            f"{a.get_kind_display()}: a gradebook column of its own, out of {total:g} points."
            if total > 0
            else f"{a.get_kind_display()}: no questions yet, so no gradebook column."
        )
        choices.append(
            extensions.Placeable(
                value=f"{KEY}/{a.pk}",
                title=a.title,
                group=f"Assessments of {cohort.name}",
                custom={KEY: str(a.pk)},
                resource_id=resource_id(a.pk),
                score_maximum=total,
                note=note,
            )
        )
    return choices


def _landing(name: str, assessment_id: int, fallback: str) -> str:
    try:
        return reverse(name, args=[assessment_id])
    except NoReverseMatch:
        return fallback


def launch(link: extensions.LinkLaunch) -> extensions.Landing:
    """A learner lands on the assessment's page, an instructor on its admin page. The link must
    name an assessment of this course's cohort."""
    value = link.value if isinstance(link.value, str) else ""
    if not _ID.fullmatch(value.strip()):
        raise LaunchRefused(
            "This link's assessment parameter is not an assessment number. Ask your instructor to link it again.",
            code="bad_assessment",
        )
    assessment = Assessment.objects.filter(pk=int(value), cohort=link.cohort).first()
    if assessment is None:
        raise LaunchRefused(
            "This link points at an assessment that is not part of this course here. "
            "Ask your instructor to link it again.",
            code="unknown_assessment",
            status=404,
            title="Assessment not found",
        )
    if link.instructor:
        url = _landing(
            "admin:assessments_assessment_change",
            assessment.pk,
            f"/admin/assessments/assessment/{assessment.pk}/change/",
        )
    else:
        url = _landing("web:assessment", assessment.pk, f"/assessments/{assessment.pk}/")
    return extensions.Landing(url=url, resource_id=resource_id(assessment.pk))


# ---- scores -------------------------------------------------------------------------------------


def instance_score_post(*, instance_id: int) -> str:
    """Post the instance's final score to its assessment's line item (see the module's docstring
    for what and when), and record it (``posted_score``, ``posted_at``). Returns what happened, for
    the logs; raises PlatformUnavailable when worth retrying. Running it twice is harmless."""
    found = Instance.objects.select_related("assessment").filter(pk=instance_id).first()
    if found is None:
        return "gone"
    instance = selectors.instance_of(assessment=found.assessment, user_id=found.user_id)
    assert instance is not None
    if instance.closed_at is None and instance.score_override is None:
        return "open"
    if not selectors.score_visible(instance):
        return "hidden"
    assessment = instance.assessment
    points = selectors.assessment_points([assessment])[assessment.pk]
    if points <= 0:
        return "nothing to grade"
    final = instance.final_score
    if instance.posted_at is not None and instance.posted_score == final:
        return "unchanged"
    outcome = lti_services.column_score_post(
        cohort_id=assessment.cohort_id,
        user_id=instance.user_id,
        score=lti_services.ColumnScore(
            resource_id=resource_id(assessment.pk),
            label=assessment.title,
            score_maximum=points,
            score_given=final,
            activity_progress="Completed" if instance.closed_at is not None else "InProgress",
            grading_progress="FullyGraded",
        ),
    )
    if outcome == "posted":
        Instance.objects.filter(pk=instance.pk).update(posted_score=final, posted_at=timezone.now())
    logger.info("assessment lti score", extra={"instance_id": instance.pk, "outcome": outcome})
    return outcome


def instances_owed() -> list[int]:
    """Instances whose score the LMS should have and has not (or not this one): closed or
    overridden, in a course linked to a platform that takes scores, of a learner the platform
    knows, and visible now (verdicts live, or the assessment closed)."""
    now = timezone.now()
    held = Assessment.objects.filter(Q(verdicts=Verdicts.AFTER_CLOSE) | Q(questions__verdicts=Verdicts.AFTER_CLOSE))
    registration = "assessment__cohort__lti_link__context__deployment__registration"
    return list(
        Instance.objects.filter(Q(closed_at__isnull=False) | Q(score_override__isnull=False))
        .filter(Q(posted_at__isnull=True) | ~Q(posted_score=Coalesce("score_override", "score")))
        .filter(
            assessment__cohort__lti_link__context__can_publish_scores=True,
            user__lti_identities__issuer=F(f"{registration}__issuer"),
        )
        .filter(Q(assessment__closes_at__lte=now) | ~Q(assessment__in=held.values("pk")))
        .order_by("pk")
        .values_list("pk", flat=True)
        .distinct()[:POST_DUE_LIMIT]
    )


def _pending_key(instance_id: int) -> str:
    return f"assessments:lti-score-pending:{instance_id}"


def score_post_schedule(*, instance_id: int) -> bool:
    """Post in LTI_SCORE_COALESCE_S unless a post is pending (the task reads the score when it
    runs, so the last one is sent), as the mastery posts are (``lti.tasks.coalesced_post``).
    Returns whether a post was scheduled."""
    return lti_tasks.coalesced_post(
        pending_key=_pending_key(instance_id), task=post_instance_score, object_id=instance_id
    )


@shared_task(
    name=POST_TASK,
    ignore_result=True,
    acks_late=True,
    autoretry_for=(PlatformUnavailable,),
    retry_backoff=5,
    retry_backoff_max=600,
    retry_jitter=True,
    max_retries=settings.LTI_SCORE_RETRIES,
)
def post_instance_score(instance_id: int) -> str:
    cache.delete(_pending_key(instance_id))
    return instance_score_post(instance_id=instance_id)


@shared_task(name=POST_DUE_TASK, ignore_result=True)
def post_scores_due() -> int:
    """Beat: schedule a post for every instance whose score the LMS is owed; returns how many."""
    ids = instances_owed()
    return sum(score_post_schedule(instance_id=i) for i in ids)


def on_instance_scored(sender: Any, *, instance_id: int, **kwargs: Any) -> None:
    """``instance_scored`` (after commit): schedule the post. Never fails the request that sent it."""
    try:
        score_post_schedule(instance_id=instance_id)
    except Exception:
        logger.exception("assessment lti score not scheduled", extra={"instance_id": instance_id})


def install() -> None:
    """Called from AssessmentsConfig.ready(): the LTI extension and the score receiver."""
    extensions.register(extensions.Extension(key=KEY, placeable=placeable, launch=launch))
    instance_scored.connect(on_instance_scored, dispatch_uid="assessments-lti-score")
