"""LTI writes: accepting a launch (account, cohort, membership, link target, grade binding), the
deep linking response, the new-window continue link, scores to AGS, rosters from NRPS, and
registering a platform. Views, tasks, admin actions and commands all call these."""

from __future__ import annotations

import hashlib
import logging
import re
import secrets
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import requests
from cryptography.hazmat.primitives.serialization import load_pem_public_key
from django.conf import settings
from django.core import signing
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.text import slugify
from lti_tool.lti_core.utils import normalize_role
from lti_tool.models import Key, LtiContext, LtiDeployment, LtiLaunch, LtiRegistration, LtiResourceLink
from lti_tool.utils import sync_data_from_launch
from pylti1p3.assignments_grades import AssignmentsGradesService
from pylti1p3.deep_link import DeepLink
from pylti1p3.deep_link_resource import DeepLinkResource
from pylti1p3.exception import LtiException, LtiServiceException
from pylti1p3.grade import Grade
from pylti1p3.lineitem import LineItem
from pylti1p3.names_roles import NamesRolesProvisioningService
from pylti1p3.service_connector import ServiceConnector

from apps.accounts.models import Role, User
from apps.accounts.services import user_create, user_set_role
from apps.exercises.models import Chapter, Workbook
from apps.lti import claims, extensions, selectors
from apps.lti.claims import AgsEndpoint, Custom, DeepLinkingSettings
from apps.lti.exceptions import LaunchRefused, PlatformUnavailable
from apps.lti.models import (
    LINEITEM_SCOPE,
    SCORE_SCOPE,
    CohortLink,
    ContextLineItem,
    GradeBinding,
    LinkTarget,
    LtiIdentity,
    PlatformHost,
    RosterEntry,
    StaticPlatformKey,
)
from apps.lti.platform import ToolMessageLaunch, http_session, registration_for
from apps.progress.models import CohortWorkbook, Membership
from apps.progress.services.cohorts import cohort_assign, cohort_create, cohort_join, cohort_leave

logger = logging.getLogger(__name__)

MEMBERSHIP = "http://purl.imsglobal.org/vocab/lis/v2/membership"
INSTRUCTOR, LEARNER = "instructor", "learner"
# Context roles that teach: instructors, their teaching assistants (a sub-role of Instructor) and
# the course's administrators. Institution or system roles alone give nothing in a course.
TEACHING = {f"{MEMBERSHIP}#Instructor", f"{MEMBERSHIP}#Administrator", f"{MEMBERSHIP}#TeachingAssistant"}
NONCE_TTL_S = 24 * 60 * 60  # longer than pylti1p3 keeps a nonce it issued
DEEP_LINK_SALT, CONTINUE_SALT = "lti.deep-link", "lti.continue"
DEEP_LINK_TTL_S = 60 * 60
SCORE_MAXIMUM = 100  # of the line items deep linking creates: a percentage in the gradebook


def tool_key_ensure() -> Key:
    """The tool's signing key (its public half is /lti/jwks/): generated on first need.
    `manage.py rotate_keys` (django-lti) adds a new one and retires old ones."""
    key = Key.objects.active().order_by("-datetime_created").first()
    return key if key is not None else Key.objects.generate()


def launch_role(roles: list[str]) -> str | None:
    """``instructor``, ``learner`` or None (no role this tool acts on)."""
    normalized = [normalize_role(r) for r in roles if isinstance(r, str)]
    if any(r in TEACHING or r.startswith(f"{MEMBERSHIP}/Instructor#") for r in normalized):
        return INSTRUCTOR
    if any(r == f"{MEMBERSHIP}#Learner" or r.startswith(f"{MEMBERSHIP}/Learner#") for r in normalized):
        return LEARNER
    return None


def launch_nonce_claim(*, issuer: str, nonce: str) -> None:
    """A nonce is good for one launch. pylti1p3 checks that we issued it but does not spend it
    (and accepts a replayed state once a launch validated), so a replay is caught here."""
    key = "lti:nonce-used:" + hashlib.sha256(f"{issuer}\n{nonce}".encode()).hexdigest()
    if not cache.add(key, 1, NONCE_TTL_S):
        raise LaunchRefused(
            "This launch was already used. Open the link from your course again.", code="replayed_nonce"
        )


@dataclass(frozen=True)
class LaunchOutcome:
    user: User
    landing: str
    deep_link_token: str | None = None


def _custom_target(custom: Custom | None) -> tuple[Workbook | None, Chapter | None]:
    """The link's workbook and chapter from its custom parameters (checked: a slug, ASCII digits)."""
    slug = custom.workbook if custom is not None else None
    if not slug:
        return None, None
    workbook = Workbook.objects.filter(slug=slug, is_published=True).first()
    if workbook is None:
        raise LaunchRefused(
            f"This link points at the workbook “{slug}”, which is not published here. "
            "Ask your instructor to link it again.",
            code="unknown_workbook",
            status=404,
            title="Workbook not found",
        )
    number = custom.chapter if custom is not None else None
    if not number:
        return workbook, None
    chapter = Chapter.objects.filter(workbook=workbook, number=int(number)).first()
    if chapter is None:
        raise LaunchRefused(
            f"This link points at chapter {number} of “{workbook.title}”, which does not exist.",
            code="unknown_chapter",
            status=404,
            title="Chapter not found",
        )
    return workbook, chapter


def launch_accept(*, launch: ToolMessageLaunch) -> LaunchOutcome:
    """A validated launch: refuse it (nothing written) or sign its user in here.

    Instructors (and TAs, course administrators) become instructors; the first to launch from a
    course creates its cohort and owns it. Learners join that cohort; a learner who comes first
    is refused (a cohort needs its instructor) with a page saying so. A resource link lands on its
    workbook or chapter (assigned to the cohort) and, when the platform grades it, binds the
    learner's grade to the link.
    """
    body: dict[str, Any] = dict(launch.get_launch_data())
    checked = launch.claims  # every claim read below has its type and shape checked (apps/lti/claims.py)
    registration, deployment = launch.lti_registration, launch.lti_deployment
    role = launch_role(checked.roles or [])
    if role is None:
        raise LaunchRefused(
            "Your role in this course gives no access to this tool: it is open to learners and instructors.",
            code="no_role",
            status=403,
            title="No access for this role",
        )
    subject = checked.sub or ""
    if not subject:
        raise LaunchRefused("Anonymous launches are not supported: the platform sent no user.", code="no_user")
    context = checked.context
    if context is None:
        raise LaunchRefused("This tool must be launched from within a course.", code="no_context")
    context_id = context.id
    is_deep_link = launch.is_deep_link_launch()
    if is_deep_link and role != INSTRUCTOR:
        raise LaunchRefused("Only instructors can add content from this tool.", code="not_instructor", status=403)
    if not is_deep_link and not launch.is_resource_launch():
        raise LaunchRefused("This kind of LTI message is not supported.", code="unsupported_message")
    extension = None if is_deep_link else extensions.for_custom(_custom_extra(checked.custom))
    workbook, chapter = (None, None) if is_deep_link or extension is not None else _custom_target(checked.custom)
    existing = CohortLink.objects.filter(context__deployment=deployment, context__id_on_platform=context_id).first()
    if role == LEARNER and existing is None:
        raise LaunchRefused(
            "Your instructor must open this link once before learners can: that sets up the course here. "
            "Please try again later.",
            code="no_cohort",
            status=403,
            title="This course is not set up yet",
        )

    with transaction.atomic():
        sync_data_from_launch(LtiLaunch(launch))  # django-lti's rows: context (NRPS, AGS URLs), resource link
        lti_context = LtiContext.objects.select_for_update().get(deployment=deployment, id_on_platform=context_id)
        identity = identity_sync(issuer=registration.issuer, subject=subject, claims=body, role=role)
        user = identity.user
        link = CohortLink.objects.filter(context=lti_context).select_related("cohort").first()
        if link is None:
            title = context.title or context.label or f"Course {context_id}"
            cohort = cohort_create(instructor=user, name=title[:120])
            link = CohortLink.objects.create(context=lti_context, cohort=cohort)
            logger.info("lti cohort created", extra={"user_id": user.pk, "cohort_id": cohort.pk})
        elif role == LEARNER:
            _enrol(link, identity)
        if is_deep_link:
            dl_settings = checked.deep_linking_settings
            assert dl_settings is not None, "pylti1p3 refuses a deep linking request without its settings"
            token = _deep_link_token(launch, dl_settings, user, cohort_id=link.cohort_id)
            return LaunchOutcome(user=user, landing="", deep_link_token=token)
        if extension is not None:  # a link an app above lti placed: it says where it lands
            handler, value = extension
            custom = _custom_extra(checked.custom)
            landed = handler.launch(
                extensions.LinkLaunch(
                    user=user, instructor=role == INSTRUCTOR, cohort=link.cohort, value=value, custom=custom
                )
            )
            if landed.resource_id and checked.ags is not None and checked.ags.lineitem:
                _context_lineitem_remember(lti_context, landed.resource_id, checked.ags.lineitem)
            logger.info("lti launch", extra={"user_id": user.pk, "cohort_id": link.cohort_id, "role": role})
            return LaunchOutcome(user=user, landing=landed.url)
        if workbook is not None:
            if not CohortWorkbook.objects.filter(cohort=link.cohort, workbook=workbook).exists():
                cohort_assign(cohort=link.cohort, workbook=workbook)
            assert checked.resource_link is not None, "pylti1p3 refuses a resource link launch without its link"
            resource_link = LtiResourceLink.objects.get(context=lti_context, id_on_platform=checked.resource_link.id)
            target = _target_sync(resource_link, workbook, chapter, checked.ags)
            if role == LEARNER and target.gradable:
                GradeBinding.objects.get_or_create(target=target, identity=identity)
        landing = selectors.landing_url(workbook=workbook, chapter=chapter, instructor=role == INSTRUCTOR)
    logger.info("lti launch", extra={"user_id": user.pk, "cohort_id": link.cohort_id, "role": role})
    return LaunchOutcome(user=user, landing=landing)


def _custom_extra(custom: Custom | None) -> dict[str, Any]:
    """The custom parameters besides the two the tool reads (an extension's, e.g. ``assessment``)."""
    return dict(custom.model_extra or {}) if custom is not None else {}


def _context_lineitem_remember(context: LtiContext, resource_id: str, lineitem_url: str) -> None:
    """The platform's line item for a link placed with one (deep linking's ``lineItem``): kept for
    its resource id, unless one is kept already (one column per resource id)."""
    row, _ = ContextLineItem.objects.get_or_create(context=context, resource_id=resource_id[:255])
    if not row.lineitem_url:
        ContextLineItem.objects.filter(pk=row.pk, lineitem_url="").update(
            lineitem_url=lineitem_url, updated_at=timezone.now()
        )


def _target_sync(
    resource_link: LtiResourceLink, workbook: Workbook, chapter: Chapter | None, ags: AgsEndpoint | None
) -> LinkTarget:
    target, _ = LinkTarget.objects.get_or_create(
        resource_link=resource_link, defaults={"workbook": workbook, "chapter": chapter}
    )
    target.workbook, target.chapter = workbook, chapter
    target.scopes = list(ags.scope) if ags is not None else []
    target.lineitems_url = (ags.lineitems if ags is not None else None) or ""
    if ags is not None and ags.lineitem:  # else keep the one we created, if any
        target.lineitem_url = ags.lineitem
    target.save(update_fields=["workbook", "chapter", "scopes", "lineitems_url", "lineitem_url", "updated_at"])
    return target


def _username_for(claims: dict[str, Any], issuer: str, subject: str) -> str:
    """Readable and unique: a slug of the person's name (or email) and a digest of who they are."""
    email = str(claims.get("email") or "")
    raw = str(claims.get("name") or claims.get("given_name") or email.split("@")[0] or "lti")
    base = (slugify(raw).replace("-", ".")[:24].strip(".")) or "lti"
    digest = hashlib.sha256(f"{issuer}\n{subject}".encode()).hexdigest()
    for length in (6, 10, 16, 32):
        candidate = f"{base}-{digest[:length]}"
        if not User.objects.filter(username__iexact=candidate).exists():
            return candidate
    return f"lti-{uuid.uuid4().hex}"  # pragma: no cover - 32 hex digits collided


def _clean_email(value: Any) -> str:
    email = str(value or "").strip()
    try:
        validate_email(email)
    except ValidationError:
        return ""
    return email


def identity_sync(*, issuer: str, subject: str, claims: dict[str, Any], role: str) -> LtiIdentity:
    """The account of (issuer, subject), created on first sight (no usable password: it signs in
    through the platform), with the name and email the platform sends. Instructors are promoted;
    nobody is demoted (an instructor may be a learner in another course)."""
    identity = LtiIdentity.objects.select_related("user").filter(issuer=issuer, subject=subject).first()
    if identity is None:
        try:
            with transaction.atomic():
                user = user_create(
                    username=_username_for(claims, issuer, subject),
                    password=secrets.token_urlsafe(32),
                    email=_clean_email(claims.get("email")),
                    role=Role.STUDENT,
                )
                user.set_unusable_password()
                user.first_name = str(claims.get("given_name") or "")[:150]
                user.last_name = str(claims.get("family_name") or "")[:150]
                user.save(update_fields=["password", "first_name", "last_name"])
                identity = LtiIdentity.objects.create(user=user, issuer=issuer, subject=subject)
            logger.info("lti account created", extra={"user_id": user.pk})
        except IntegrityError:  # the same person's other launch won the race
            identity = LtiIdentity.objects.select_related("user").get(issuer=issuer, subject=subject)
    user = identity.user
    if not user.is_active:
        raise LaunchRefused("This account is disabled here.", code="inactive_user", status=403)
    updates = {
        "first_name": str(claims.get("given_name") or "")[:150],
        "last_name": str(claims.get("family_name") or "")[:150],
        "email": _clean_email(claims.get("email")),
    }
    changed = [f for f, v in updates.items() if v and getattr(user, f) != v]
    for f in changed:
        setattr(user, f, updates[f])
    if changed:
        user.save(update_fields=changed)
    if role == INSTRUCTOR and user.role != Role.INSTRUCTOR and not user.is_superuser:
        user_set_role(user=user, role=Role.INSTRUCTOR)
    return identity


def _enrol(link: CohortLink, identity: LtiIdentity) -> bool:
    """The learner joins the link's cohort; a membership LTI made is remembered (the roster sync
    removes only those). Returns whether they are new to it."""
    cohort = link.cohort
    if cohort.instructor_id == identity.user_id:
        return False
    if Membership.objects.filter(cohort=cohort, user_id=identity.user_id).exists():
        return False
    _, created = cohort_join(user=identity.user, code=cohort.join_code)
    if created:
        RosterEntry.objects.get_or_create(link=link, identity=identity)
    return created


# --- Deep linking ---------------------------------------------------------------------------


def _deep_link_token(
    launch: ToolMessageLaunch, dl_settings: DeepLinkingSettings, user: User, cohort_id: int | None = None
) -> str:
    """What the picker's form carries back: signed (it is posted from the LMS iframe, where our
    session and CSRF cookies, SameSite=Lax, are not sent), short-lived and single-use. The
    settings are the checked ones, and only the members we use."""
    payload = {
        "r": launch.lti_registration.pk,
        "d": launch.lti_deployment.deployment_id,
        "s": dl_settings.model_dump(exclude_none=True),
        "u": user.pk,
        "j": uuid.uuid4().hex,
        "c": cohort_id,
    }
    return signing.dumps(payload, salt=DEEP_LINK_SALT, compress=True)


@dataclass(frozen=True)
class DeepLinkSession:
    registration_id: int
    deployment_id: str
    settings: dict[str, Any]
    user_id: int
    jti: str
    cohort_id: int | None = None  # the course's cohort (what extensions offer depends on it)

    @property
    def accept_multiple(self) -> bool:
        return str(self.settings.get("accept_multiple", "false")).lower() == "true"


def deep_link_session(*, token: str) -> DeepLinkSession:
    try:
        data = signing.loads(token, salt=DEEP_LINK_SALT, max_age=DEEP_LINK_TTL_S)
    except signing.BadSignature as error:  # SignatureExpired included
        raise LaunchRefused(
            "This content picker has expired. Start adding content from your course again.", code="bad_picker_token"
        ) from error
    return DeepLinkSession(data["r"], data["d"], data["s"], data["u"], data["j"], data.get("c"))


@dataclass(frozen=True)
class DeepLinkResponse:
    return_url: str
    jwt: str


def deep_link_respond(*, token: str, choices: list[str], graded: bool, launch_url: str) -> DeepLinkResponse:
    """The signed LtiDeepLinkingResponse for the chosen workbooks (``slug``) or chapters
    (``slug:number``), each an LtiResourceLink whose custom parameters say where it lands; graded
    links carry a line item (the platform creates the gradebook column). An extension's choices
    (``key/id``, extensions.py) are taken only as it offers them to this instructor in this course
    now, and carry their own line item whatever ``graded`` says."""
    session = deep_link_session(token=token)
    offered = _offered(session) if any("/" in c for c in choices) else {}
    items: list[tuple[Workbook, Chapter | None] | extensions.Placeable] = []
    for choice in choices:
        if "/" in choice:
            if choice in offered:
                items.append(offered[choice])
            continue
        slug, _, number = choice.partition(":")
        workbook = Workbook.objects.filter(slug=slug, is_published=True).first()
        if workbook is None:
            continue
        chapter = (
            Chapter.objects.filter(workbook=workbook, number=int(number)).first()
            if claims.is_chapter_number(number)
            else None
        )
        if number and chapter is None:
            continue
        items.append((workbook, chapter))
    if not items:
        raise LaunchRefused("Choose at least one workbook or chapter.", code="nothing_chosen")
    if not session.accept_multiple:
        items = items[:1]
    registration = LtiRegistration.objects.filter(pk=session.registration_id, is_active=True).first()
    if registration is None:
        raise LaunchRefused("This platform is no longer registered here.", code="registration", status=403)
    try:  # checked at the launch too; the registration's URLs may have changed since
        return_url = claims.return_url_check(
            str(session.settings.get("deep_link_return_url", "")),
            hosts=selectors.platform_hosts(registration=registration),
        )
    except ValueError as error:
        raise LaunchRefused(
            "The platform's deep linking return address is not one of its own (https on its host).",
            code="bad_return_url",
        ) from error
    if not cache.add(f"lti:deep-link-used:{session.jti}", 1, DEEP_LINK_TTL_S):
        raise LaunchRefused("This content picker was already used.", code="picker_reused")
    resources = []
    for item in items:
        if isinstance(item, extensions.Placeable):
            resources.append(_placed(item, launch_url))
            continue
        workbook, chapter = item
        title = workbook.title if chapter is None else f"{workbook.title} · {chapter.number}. {chapter.title}"
        custom = {"workbook": workbook.slug}
        if chapter is not None:
            custom["chapter"] = str(chapter.number)
        resource = DeepLinkResource().set_url(launch_url).set_title(title).set_custom_params(custom)
        if graded:
            resource_id = workbook.slug if chapter is None else f"{workbook.slug}:{chapter.number}"
            resource.set_lineitem(
                LineItem().set_score_maximum(SCORE_MAXIMUM).set_label(title).set_resource_id(resource_id)
            )
        resources.append(resource)
    tool_key_ensure()
    deep_link = DeepLink(registration_for(registration), session.deployment_id, session.settings)  # type: ignore[arg-type]
    logger.info("lti deep link", extra={"user_id": session.user_id, "items": len(resources), "graded": graded})
    return DeepLinkResponse(return_url=return_url, jwt=deep_link.get_response_jwt(resources))


def _offered(session: DeepLinkSession) -> dict[str, extensions.Placeable]:
    return {p.value: p for p in selectors.deep_link_extras(user_id=session.user_id, cohort_id=session.cohort_id)}


def _placed(item: extensions.Placeable, launch_url: str) -> DeepLinkResource:
    resource = DeepLinkResource().set_url(launch_url).set_title(item.title).set_custom_params(dict(item.custom))
    if item.resource_id and item.score_maximum > 0:
        resource.set_lineitem(
            LineItem().set_score_maximum(item.score_maximum).set_label(item.title).set_resource_id(item.resource_id)
        )
    return resource


# --- Continue in a new window ----------------------------------------------------------------


def continue_token_create(*, user: User, landing: str) -> str:
    return signing.dumps({"u": user.pk, "t": landing, "j": uuid.uuid4().hex}, salt=CONTINUE_SALT)


def continue_token_redeem(*, token: str) -> tuple[User, str]:
    """The user and landing page of a single-use, short-lived continue link."""
    try:
        data = signing.loads(token, salt=CONTINUE_SALT, max_age=settings.LTI_CONTINUE_TTL_S)
    except signing.BadSignature as error:
        raise LaunchRefused(
            "This link has expired. Open the link from your course again.", code="bad_continue_token"
        ) from error
    if not cache.add(f"lti:continue-used:{data['j']}", 1, settings.LTI_CONTINUE_TTL_S * 2):
        raise LaunchRefused("This link was already used. Open the link from your course again.", code="continue_reused")
    user = User.objects.filter(pk=data["u"], is_active=True).first()
    landing = str(data["t"])
    if user is None or not url_has_allowed_host_and_scheme(landing, allowed_hosts=None):
        raise LaunchRefused("This link is not valid.", code="bad_continue_token")
    return user, landing


# --- Grades (AGS) ----------------------------------------------------------------------------


def _platform_call_failed(error: Exception) -> Exception:
    """A transient failure (retry later) or a permanent one (log it, do not retry)."""
    if isinstance(error, requests.RequestException):
        return PlatformUnavailable(str(error))
    if isinstance(error, LtiServiceException):
        status = error.response.status_code
        if status >= 500 or status == 429:
            return PlatformUnavailable(str(error))
    return error


def score_post(*, binding_id: int) -> str:
    """Post the learner's mastery of the link's workbook or chapter (solved out of total, read now)
    to the platform's line item, creating the line item if the link has none. Posting the same
    figures again is skipped, and would be harmless. Returns what happened, for the logs."""
    binding = selectors.binding_get(binding_id=binding_id)
    if binding is None:
        return "gone"
    target, identity = binding.target, binding.identity
    fraction = selectors.target_mastery(user=identity.user, target=target)
    if fraction.total == 0:
        return "nothing to grade"
    if (binding.last_solved, binding.last_total) == (fraction.solved, fraction.total):
        return "unchanged"
    resource_link = target.resource_link
    registration = resource_link.context.deployment.registration
    tool_key_ensure()
    connector = ServiceConnector(registration_for(registration), http_session())
    service_data = {"scope": target.scopes, "lineitems": target.lineitems_url, "lineitem": target.lineitem_url}
    ags = AssignmentsGradesService(connector, service_data)  # type: ignore[arg-type]
    complete = fraction.solved >= fraction.total
    grade = (
        Grade()
        .set_score_given(fraction.solved)
        .set_score_maximum(fraction.total)
        .set_activity_progress("Completed" if complete else "InProgress")
        .set_grading_progress("FullyGraded" if complete else "Pending")
        .set_timestamp(timezone.now().isoformat(timespec="milliseconds"))
        .set_user_id(identity.subject)
    )
    try:
        if not target.lineitem_url:
            title = target.chapter.title if target.chapter is not None else target.workbook.title
            lineitem = ags.find_or_create_lineitem(
                LineItem()
                .set_label(title)
                .set_score_maximum(SCORE_MAXIMUM)
                .set_resource_link_id(resource_link.id_on_platform)
                .set_resource_id(target.workbook.slug),
                find_by="resource_link_id",
            )
            LinkTarget.objects.filter(pk=target.pk).update(lineitem_url=lineitem.get_id())
            target.lineitem_url = str(lineitem.get_id())
            service_data["lineitem"] = target.lineitem_url
        ags.put_grade(grade)
    except (requests.RequestException, LtiException) as error:
        raise _platform_call_failed(error) from error
    GradeBinding.objects.filter(pk=binding.pk).update(
        last_solved=fraction.solved, last_total=fraction.total, last_posted_at=timezone.now()
    )
    logger.info(
        "lti score posted",
        extra={
            "user_id": identity.user_id,
            "binding_id": binding.pk,
            "solved": fraction.solved,
            "total": fraction.total,
        },
    )
    return "posted"


# --- A course's own columns (AGS line items by resource id) ----------------------------------

LINEITEM_READONLY_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly"
MAX_LINEITEM_PAGES = 50


@dataclass(frozen=True)
class ColumnScore:
    """A learner's score in a column of the tool's own (an app above lti says what it is)."""

    resource_id: str  # e.g. "assessment:12": one line item per (course, resource id)
    label: str
    score_maximum: float
    score_given: float
    activity_progress: str  # AGS: "Completed", "Submitted", "InProgress", …
    grading_progress: str  # AGS: "FullyGraded", "Pending", …


def _context_ags(context: LtiContext) -> tuple[AssignmentsGradesService, ServiceConnector]:
    scopes = [
        scope
        for scope, granted in (
            (LINEITEM_SCOPE, context.can_manage_lineitems),
            (LINEITEM_READONLY_SCOPE, context.can_query_lineitems),
            (SCORE_SCOPE, context.can_publish_scores),
        )
        if granted
    ]
    connector = ServiceConnector(registration_for(context.deployment.registration), http_session())
    data = {"scope": scopes, "lineitems": context.lineitems_url}
    return AssignmentsGradesService(connector, data), connector  # type: ignore[arg-type]


def _with_query(url: str, **params: str) -> str:
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    query.update(params)
    return urlunsplit(parts._replace(query=urlencode(query)))


def _lineitem_find(ags: AssignmentsGradesService, lineitems_url: str, resource_id: str) -> str | None:
    """The platform's line item with this resource id: asked with AGS's ``resource_id`` filter, and
    checked here too (a platform may ignore the filter), page by page."""
    url: str | None = _with_query(lineitems_url, resource_id=resource_id)
    for _ in range(MAX_LINEITEM_PAGES):
        if not url:
            break
        page, url = ags.get_lineitems_page(url)
        for item in page:
            if isinstance(item, dict) and item.get("resourceId") == resource_id and item.get("id"):
                return str(item["id"])
    return None


def context_lineitem_ensure(*, context: LtiContext, resource_id: str, label: str, score_maximum: float) -> str:
    """The URL of the course's line item for ``resource_id``: the one kept here; else the
    platform's own (placed by deep linking, or created by an earlier attempt whose answer was
    lost), found by its resource id; else one created now. Once per (course, resource id): the
    row is unique, and its lock is held across the platform calls, so a concurrent second creator
    waits and then finds the URL the first stored. A platform error stores nothing."""
    with transaction.atomic():
        row, _ = ContextLineItem.objects.get_or_create(context=context, resource_id=resource_id)
        row = ContextLineItem.objects.select_for_update().get(pk=row.pk)
        if row.lineitem_url:
            return row.lineitem_url
        if not context.lineitems_url:
            raise LtiException("The platform gave no line items URL for this course.")
        ags, connector = _context_ags(context)
        url = _lineitem_find(ags, context.lineitems_url, resource_id)
        if url is None:
            if not context.can_manage_lineitems:
                raise LtiException("The platform does not let this tool create line items in this course.")
            created = LineItem().set_label(label).set_score_maximum(score_maximum).set_resource_id(resource_id)
            response = connector.make_service_request(  # not ags.find_or_create_lineitem: it lists every line item
                [LINEITEM_SCOPE],
                context.lineitems_url,
                is_post=True,
                data=created.get_value(),
                content_type="application/vnd.ims.lis.v2.lineitem+json",
                accept="application/vnd.ims.lis.v2.lineitem+json",
            )
            body = response["body"]
            if not isinstance(body, dict) or not body.get("id"):
                raise LtiException("The platform's answer to creating a line item has no id.")
            url = str(body["id"])
            logger.info("lti line item created", extra={"context_id": context.pk, "resource_id": resource_id})
        row.lineitem_url = url
        row.save(update_fields=["lineitem_url", "updated_at"])
    return url


def column_score_post(*, cohort_id: int, user_id: int, score: ColumnScore) -> str:
    """Post a learner's score to the line item of ``score.resource_id`` in the course linked to
    the cohort (the line item found or created first). Returns what happened, for the logs:
    ``posted``, or why nothing was sent (``not linked``, ``not gradable``, ``no identity``).
    Raises PlatformUnavailable when worth retrying (network, 5xx, 429)."""
    link = CohortLink.objects.select_related("context__deployment__registration").filter(cohort_id=cohort_id).first()
    if link is None:
        return "not linked"
    context = link.context
    known = ContextLineItem.objects.filter(context=context, resource_id=score.resource_id).exclude(lineitem_url="")
    if not context.can_publish_scores or not (context.lineitems_url or known.exists()):
        return "not gradable"
    issuer = context.deployment.registration.issuer
    identity = LtiIdentity.objects.filter(user_id=user_id, issuer=issuer).order_by("pk").first()
    if identity is None:
        return "no identity"  # joined by code, never seen by the platform
    tool_key_ensure()
    grade = (
        Grade()
        .set_score_given(score.score_given)
        .set_score_maximum(score.score_maximum)
        .set_activity_progress(score.activity_progress)
        .set_grading_progress(score.grading_progress)
        .set_timestamp(timezone.now().isoformat(timespec="milliseconds"))
        .set_user_id(identity.subject)
    )
    try:
        url = context_lineitem_ensure(
            context=context, resource_id=score.resource_id, label=score.label, score_maximum=score.score_maximum
        )
        _context_ags(context)[0].put_grade(grade, LineItem({"id": url}))
    except (requests.RequestException, LtiException) as error:
        raise _platform_call_failed(error) from error
    logger.info(
        "lti column score posted",
        extra={"user_id": user_id, "cohort_id": cohort_id, "resource_id": score.resource_id},
    )
    return "posted"


# --- Roster (NRPS) ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RosterResult:
    added: int
    removed: int


def roster_sync(*, link_id: int) -> RosterResult:
    """The cohort's membership from the course roster: active learners join (accounts created as
    on a first launch), and members LTI added who left the roster leave. Members who joined by
    code, and the instructor, are never removed."""
    link = CohortLink.objects.select_related("cohort", "context__deployment__registration").filter(pk=link_id).first()
    if link is None or not link.context.memberships_url:
        return RosterResult(0, 0)
    registration = link.context.deployment.registration
    tool_key_ensure()
    nrps = NamesRolesProvisioningService(
        ServiceConnector(registration_for(registration), http_session()),
        {"context_memberships_url": link.context.memberships_url},
    )
    try:
        members = nrps.get_members()
    except (requests.RequestException, LtiException) as error:
        raise _platform_call_failed(error) from error
    learners: dict[str, dict[str, Any]] = {}
    for member in members:
        data: dict[str, Any] = dict(member)
        if data.get("status", "Active") == "Active" and launch_role(data.get("roles") or []) == LEARNER:
            learners[str(data["user_id"])] = data
    added = removed = 0
    with transaction.atomic():
        for subject, data in learners.items():
            identity = identity_sync(issuer=registration.issuer, subject=subject, claims=data, role=LEARNER)
            added += _enrol(link, identity)
        gone = link.roster.select_related("identity__user").exclude(
            identity__issuer=registration.issuer, identity__subject__in=list(learners)
        )
        for entry in gone:
            cohort_leave(user=entry.identity.user, cohort=link.cohort)
            entry.delete()
            removed += 1
        link.roster_synced_at = timezone.now()
        link.save(update_fields=["roster_synced_at"])
    logger.info("lti roster synced", extra={"cohort_id": link.cohort_id, "added": added, "removed": removed})
    return RosterResult(added, removed)


# --- Registering a platform ------------------------------------------------------------------


@transaction.atomic
def platform_register(
    *,
    issuer: str,
    client_id: str,
    deployment_ids: list[str],
    auth_login_url: str,
    auth_token_url: str,
    keyset_url: str = "",
    public_key_pem: str = "",
    name: str = "",
    audience: str = "",
    return_hosts: list[str] | None = None,
) -> tuple[LtiRegistration, bool]:
    """Register a platform, or update it (the same issuer and client id): idempotent. Its
    deployments are active. A platform without a key set URL gives its public key (PEM).
    ``return_hosts``: hosts its deep linking may return to besides those of its issuer and URLs
    (given: they replace the ones it had)."""
    if not keyset_url and not public_key_pem:
        raise ValueError("Give the platform's key set URL or its public key.")
    if public_key_pem:
        try:
            load_pem_public_key(public_key_pem.encode())
        except ValueError as error:
            raise ValueError(f"The public key is not a PEM public key: {error}") from error
    registration, created = LtiRegistration.objects.update_or_create(
        issuer=issuer,
        client_id=client_id,
        defaults={
            "name": name or f"{issuer} ({client_id})",
            "auth_url": auth_login_url,
            "token_url": auth_token_url,
            "keyset_url": keyset_url,
            "audience": audience,
            "is_active": True,
        },
    )
    for deployment_id in deployment_ids:
        LtiDeployment.objects.update_or_create(
            registration=registration, deployment_id=deployment_id, defaults={"is_active": True}
        )
    if return_hosts is not None:
        hosts = {h.strip().lower() for h in return_hosts if h.strip()}
        if any(not re.fullmatch(r"[a-z0-9.-]+", h) for h in hosts):
            raise ValueError("A return host is a host name, such as school.instructure.com (no scheme, no port).")
        PlatformHost.objects.filter(registration=registration).exclude(host__in=hosts).delete()
        for host in sorted(hosts):
            PlatformHost.objects.get_or_create(registration=registration, host=host)
    if public_key_pem:
        StaticPlatformKey.objects.update_or_create(registration=registration, defaults={"public_key": public_key_pem})
    else:
        StaticPlatformKey.objects.filter(registration=registration).delete()
    tool_key_ensure()
    return registration, created
