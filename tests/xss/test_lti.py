"""LMS input: real, signed LTI 1.3 launches from the repository's test platform with payloads in
the course's context (title, label), the link (title, description), the person (subject, name,
given and family names), the custom parameters, the login's ``lti_message_hint`` and the roster.

The launches run in the browser as a course runs them — the LMS's page holds the tool in the
iframe ``#tool`` — with the watcher on the LMS page and every frame in it: the login's cookie
check page, the deep linking picker and its return page (both held on screen while they are
checked: their scripts move on at once), the launched page, a refused launch's error page, then
the landing page in the new window. The LTI pages may be framed by the registered platforms only
(CSP ``frame-ancestors``): a refusal there is a finding like any other. The pages that show what
the launches stored (the cohorts named from the context, the people, the links) are then viewed
one test each."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import connections
from django.test import Client
from playwright.sync_api import Browser, Page, Route, expect

from apps.accounts.models import User
from apps.lti import services as lti_services
from apps.lti.models import CohortLink, LinkTarget, LtiIdentity
from apps.lti.tests.platform import INSTRUCTOR, LEARNER
from apps.progress import services as progress_services
from apps.progress.models import Cohort
from tests.xss import content, lms
from tests.xss.conftest import CSP_LOGGER, PREFIX, RESULTS, Findings, Watcher, World, assert_clean
from tests.xss.lms import CorpusPlatform
from tests.xss.test_pages import assert_shows_corpus

pytestmark = [pytest.mark.xdist_group("xss")]


class Hold:
    """Requests matching ``match`` wait until released: the page that made them stays on screen
    (a navigation replaces the document only once its response arrives)."""

    def __init__(self, page: Page, match: Callable[[str], bool]) -> None:
        self.page, self.match = page, match
        self.routes: list[Route] = []
        page.route(match, self._hold)

    def _hold(self, route: Route) -> None:
        self.routes.append(route)

    def wait(self, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while not self.routes:  # the route handler runs while Playwright waits: pump its events
            assert time.monotonic() < deadline, "the held request was never made"
            self.page.wait_for_timeout(20)

    def release(self) -> None:
        for route in self.routes:
            route.continue_()
        self.page.unroute(self.match)


@dataclass
class LtiWorld:
    platform: CorpusPlatform
    findings: Findings  # what the launches' pages showed (asserted by the first test)
    teacher: User
    learner: User
    roster_learner: User
    admin: User
    course: Cohort  # named from the context's title
    labelled: Cohort  # from a context with only a label
    link: CohortLink
    target: LinkTarget


def _forget_lti() -> None:
    from lti_tool.models import LtiRegistration

    registrations = LtiRegistration.objects.filter(client_id=lms.CLIENT_ID)
    issuers = list(registrations.values_list("issuer", flat=True))
    users = User.objects.filter(lti_identities__issuer__in=issuers)
    Cohort.objects.filter(instructor__in=users).delete()
    users.delete()
    LtiIdentity.objects.filter(issuer__in=issuers).delete()
    registrations.delete()  # its deployments, contexts, links (and the cohort links, targets) go with it


def _lti_user(platform: CorpusPlatform, sub: str) -> User:
    return User.objects.get(lti_identities__issuer=platform.issuer, lti_identities__subject=sub)


class _Reports(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage()[:300])


def _tool(page: Page) -> Any:
    return page.frame_locator("#tool")


def _launch(w: Watcher, page: Page, platform: CorpusPlatform, sub: str, name: str, hint: str = "") -> None:
    """Open the course page; check it with the tool's login cookie check page in the frame."""
    held = Hold(page, lambda url: "/lti/login/" in url and "lti1p3_new_window" in url)
    page.goto(platform.course_url(sub, hint), wait_until="commit")
    held.wait()
    [tool] = page.main_frame.child_frames
    assert "/lti/login/" in tool.url, tool.url
    assert tool.evaluate("typeof window.__xss") == "function", "the watcher runs in the LMS frame"
    w.findings.views.append(f"{name}: cookie check page (in the LMS frame)")
    w.check(page)
    held.release()


def _launches(w: Watcher, admin: Watcher, platform: CorpusPlatform) -> dict[str, Any]:
    page = w.page()

    # The instructor adds the corpus's workbook from the LMS's content picker (deep linking).
    course = {"title": lms.text("ctx-title", 500), "label": lms.text("ctx-label", 255)}
    platform.context, platform.person = course, lms.person("teacher")
    platform.browser_launch = {"roles": INSTRUCTOR, "message_type": "LtiDeepLinkingRequest"}
    _launch(w, page, platform, lms.INSTRUCTOR_SUB, "deep linking", hint=lms.text("message-hint", 300))
    expect(_tool(page).get_by_role("heading", name="Add a workbook or chapter")).to_be_visible()
    w.findings.views.append("deep linking: picker (in the LMS frame)")
    w.check(page)
    assert_shows_corpus(page.main_frame.child_frames[0], "deep-link picker")  # the workbooks' titles
    _tool(page).locator(f'input[name="item"][value="{content.SLUG}"]').check()
    _tool(page).locator('input[name="graded"]').check()
    back = Hold(page, lambda url: url.startswith(platform.base + "/deep-link-return"))
    _tool(page).locator("form[action$='/lti/deep-link/']").evaluate("(f) => f.requestSubmit()")
    back.wait()
    w.findings.views.append("deep linking: return page (in the LMS frame)")
    w.check(page)
    back.release()
    expect(_tool(page).locator("#added")).to_be_visible()
    w.check(page)
    assert len(platform.deep_link_responses) == 1

    # The learner follows the link, with the custom parameters the content item set and more.
    platform.person = lms.person("learner")
    custom = {"workbook": content.SLUG, "note": lms.text("custom", 1000), lms.text("custom-key", 200): "x"}
    platform.browser_launch = {"roles": LEARNER, "custom": custom}
    _launch(w, page, platform, lms.LEARNER_SUB, "learner launch")
    expect(_tool(page).get_by_role("heading", name="You are signed in")).to_be_visible()
    w.findings.views.append("learner launch: launched page (in the LMS frame)")
    w.check(page)
    with page.expect_popup() as popup_info:
        _tool(page).locator("#lti-continue").click()
    landing = popup_info.value
    landing.wait_for_load_state("load")
    assert landing.url.endswith(f"/w/{content.SLUG}/"), landing.url
    w.findings.views.append("learner launch: landing page (new window)")
    w.check(landing)
    landing.close()

    # A link whose custom parameter is a payload: refused, with a page saying which claim.
    platform.browser_launch = {"roles": LEARNER, "custom": {"workbook": lms.text("custom-workbook", 300)}}
    _launch(w, page, platform, lms.LEARNER_SUB, "refused launch")
    expect(_tool(page).locator("[data-code=bad_claim]")).to_be_visible()
    w.findings.views.append("refused launch: error page (in the LMS frame)")
    w.check(page)

    # The instructor in another course, whose LMS sends a label and no title: a link to no
    # workbook lands on the cohorts page (both courses' cohorts).
    platform.context = {"id": "course-2", "title": None, "label": lms.text("label-only", 255)}
    platform.browser_launch = {"roles": INSTRUCTOR}
    _launch(w, page, platform, lms.INSTRUCTOR_SUB, "instructor launch")
    expect(_tool(page).get_by_role("heading", name="You are signed in")).to_be_visible()
    w.check(page)
    with page.expect_popup() as popup_info:
        _tool(page).locator("#lti-continue").click()
    landing = popup_info.value
    landing.wait_for_load_state("load")
    assert landing.url.endswith("/cohorts/"), landing.url
    w.findings.views.append("instructor launch: landing page (new window)")
    w.check(landing)
    assert_shows_corpus(landing.main_frame, "instructor's cohorts")
    landing.close()

    # The course's roster (NRPS), synced by the site's administrator from the admin: a learner
    # who never launched joins with the names the LMS sends.
    teacher = _lti_user(platform, lms.INSTRUCTOR_SUB)
    link = CohortLink.objects.select_related("cohort").get(
        cohort__instructor=teacher, context__id_on_platform="course-1"
    )
    platform.tool_jwks = Client().get("/lti/jwks/").json()
    platform.roster = [
        platform.roster_member(lms.LEARNER_SUB, lms.person("learner")),
        platform.roster_member(lms.ROSTER_SUB, lms.person("roster")),
    ]
    page = admin.open("/admin/lti/cohortlink/")
    page.locator(f"input[name=_selected_action][value='{link.pk}']").check()
    page.locator("select[name=action]").select_option("sync_roster")
    page.locator("#changelist-form").evaluate("(f) => f.requestSubmit(f.querySelector('button[name=index]'))")
    expect(page.locator("ul.messagelist")).to_contain_text("1 added, 0 removed")
    admin.findings.views.append("roster sync: the admin's message")
    admin.check(page)
    return {"teacher": teacher, "link": link}


@pytest.fixture(scope="module")
def lti(world: World, browser: Browser, live_url: str, django_db_blocker: Any) -> Iterator[LtiWorld]:
    reports = _Reports()
    csp_logger = logging.getLogger(CSP_LOGGER)
    with pytest.MonkeyPatch.context() as mp, django_db_blocker.unblock():
        mp.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # the ORM between Playwright's steps
        _forget_lti()  # what an interrupted run left
        platform = CorpusPlatform()
        platform.tool_url = live_url
        lti_services.platform_register(**platform.registration(), name=lms.text("platform-name", 250))
        admin_user = User.objects.create_superuser(username=f"{PREFIX}root", password=None)
        w, admin = Watcher(browser, live_url, None), Watcher(browser, live_url, admin_user)
        csp_logger.addHandler(reports)
        try:
            made = _launches(w, admin, platform)
            findings = Findings()
            for watcher in (w, admin):
                watcher.collect()
                for name in ("fired", "dialogs", "csp", "refused", "injected", "no_csp_header", "views"):
                    getattr(findings, name).extend(getattr(watcher.findings, name))
            deadline = time.monotonic() + 10
            while (findings.csp or findings.refused) and not reports.messages and time.monotonic() < deadline:
                time.sleep(0.05)  # the browser posts its report a moment after the violation: polled
            findings.server_reports = list(reports.messages)
            csp_logger.removeHandler(reports)
            teacher, link = made["teacher"], made["link"]
            yield LtiWorld(
                platform=platform,
                findings=findings,
                teacher=teacher,
                learner=_lti_user(platform, lms.LEARNER_SUB),
                roster_learner=_lti_user(platform, lms.ROSTER_SUB),
                admin=admin_user,
                course=link.cohort,
                labelled=Cohort.objects.get(instructor=teacher, lti_link__context__id_on_platform="course-2"),
                link=link,
                target=LinkTarget.objects.get(resource_link__context=link.context),
            )
        finally:
            csp_logger.removeHandler(reports)
            w.context.close()
            admin.context.close()
            platform.close()
            _forget_lti()
            admin_user.delete()
            progress_services.scores_rebuild()
            connections.close_all()


def test_lti_launch_pages_in_the_lms_frame_run_no_payload(lti: LtiWorld) -> None:
    # The launches stored the LMS's input where the pages below show it.
    assert lti.course.name == lms.text("ctx-title", 500)[:120]
    assert lti.labelled.name == lms.text("label-only", 255)[:120]
    assert lti.learner.first_name == lms.person("learner")["given_name"]
    assert lti.roster_learner.last_name == lms.person("roster")["family_name"]
    assert lti.course.memberships.filter(user__in=[lti.learner, lti.roster_learner]).count() == 2
    RESULTS.append(lti.findings)
    assert not lti.findings.problems(), lti.findings.report()


@dataclass(frozen=True)
class View:
    role: str  # an attribute of LtiWorld
    path: Callable[[LtiWorld], str]


def _cohort(suffix: str) -> Callable[[LtiWorld], str]:
    return lambda x: f"/admin/progress/cohort/{x.course.pk}/{suffix}"


VIEWS: dict[str, View] = {
    # The instructor the launches made: the cohorts named from the contexts, the learners in them.
    "lti-teacher-cohorts": View("teacher", lambda x: "/cohorts/"),
    "lti-teacher-leaderboard": View("teacher", lambda x: f"/leaderboard/?scope=cohort&cohort={x.course.pk}"),
    "lti-admin-cohort-list": View("teacher", lambda x: "/admin/progress/cohort/"),
    "lti-admin-cohort-change": View("teacher", _cohort("change/")),
    "lti-admin-labelled-cohort-change": View("teacher", lambda x: f"/admin/progress/cohort/{x.labelled.pk}/change/"),
    "lti-admin-cohort-progress": View("teacher", _cohort("progress/")),
    "lti-admin-cohort-exercises": View("teacher", _cohort("exercises/")),
    "lti-admin-learner-history": View("teacher", lambda x: _cohort(f"learners/{x.learner.pk}/")(x)),
    # The learner: their cohort, its board, their progress.
    "lti-learner-cohorts": View("learner", lambda x: "/cohorts/"),
    "lti-learner-leaderboard": View("learner", lambda x: f"/leaderboard/?scope=cohort&cohort={x.course.pk}"),
    "lti-learner-progress": View("learner", lambda x: "/progress/"),
    # The site's administrator: the LTI rows and the accounts, with the LMS's names.
    "lti-admin-cohortlinks": View("admin", lambda x: "/admin/lti/cohortlink/"),
    "lti-admin-cohortlink": View("admin", lambda x: f"/admin/lti/cohortlink/{x.link.pk}/change/"),
    "lti-admin-linktargets": View("admin", lambda x: "/admin/lti/linktarget/"),
    "lti-admin-linktarget": View("admin", lambda x: f"/admin/lti/linktarget/{x.target.pk}/change/"),
    "lti-admin-identities": View("admin", lambda x: "/admin/lti/ltiidentity/"),
    "lti-admin-roster": View("admin", lambda x: "/admin/lti/rosterentry/"),
    "lti-admin-bindings": View("admin", lambda x: "/admin/lti/gradebinding/"),
    "lti-admin-learner": View("admin", lambda x: f"/admin/accounts/user/{x.learner.pk}/change/"),
    "lti-admin-roster-learner": View("admin", lambda x: f"/admin/accounts/user/{x.roster_learner.pk}/change/"),
    "lti-admin-registrations": View("admin", lambda x: "/admin/lti_tool/ltiregistration/"),
}


@pytest.mark.parametrize("name", list(VIEWS))
def test_no_lms_payload_runs_on_the_page(
    name: str, lti: LtiWorld, watch: Callable[[User | None], Watcher], caplog: pytest.LogCaptureFixture
) -> None:
    view = VIEWS[name]
    w = watch(getattr(lti, view.role))
    page = w.open(view.path(lti))
    assert_shows_corpus(page.main_frame, name)
    assert_clean(caplog, w)
