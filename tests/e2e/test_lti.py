"""LTI 1.3 in a browser, as a course runs it: the LMS's course page holds the tool in an iframe.
The test platform (apps/lti/tests/platform.py) serves that page, answers the tool's OIDC login
redirect with a signed id_token it posts back, and receives the deep linking response.

An instructor adds a workbook from the LMS's content picker (the tool's picker inside the frame,
its signed answer posted to the LMS); a learner's launch signs them in inside the frame, where the
tool's pages cannot show, and "Open in a new window" continues signed in on the linked workbook."""

from __future__ import annotations

import json
from collections.abc import Iterator

import jwt
import pytest
from jwt.algorithms import RSAAlgorithm
from playwright.sync_api import expect

from apps.accounts.models import User
from apps.lti import services
from apps.lti.models import LtiIdentity
from apps.lti.tests.platform import INSTRUCTOR, LEARNER, TestPlatform
from apps.progress.models import Cohort
from tests.e2e.conftest import Site

CONTENT_ITEMS = "https://purl.imsglobal.org/spec/lti-dl/claim/content_items"


@pytest.fixture
def platform(site: Site) -> Iterator[TestPlatform]:
    from lti_tool.models import LtiRegistration

    p = TestPlatform()
    p.tool_url = site.url
    registration, _ = services.platform_register(**p.registration())
    try:
        yield p
    finally:
        p.close()
        users = User.objects.filter(lti_identities__issuer=p.issuer)
        Cohort.objects.filter(instructor__in=users).delete()
        users.delete()
        LtiIdentity.objects.filter(issuer=p.issuer).delete()
        LtiRegistration.objects.filter(pk=registration.pk).delete()


def test_a_course_adds_a_workbook_and_a_learner_arrives_signed_in(site: Site, platform: TestPlatform) -> None:
    # The instructor opens the LMS's content picker: the tool's picker, in the frame.
    platform.browser_launch = {"roles": INSTRUCTOR, "message_type": "LtiDeepLinkingRequest", "name": "Grace Hopper"}
    page = site.page()
    page.goto(platform.base + "/course?sub=teacher-b")
    tool = page.frame_locator("#tool")
    expect(tool.get_by_role("heading", name="Add a workbook or chapter")).to_be_visible()
    tool.locator('input[name="item"][value="transformer-math"]').check()
    tool.locator('input[name="graded"]').check()
    tool.get_by_role("button", name="Add to the course").click()
    expect(tool.locator("#added")).to_have_text("Content added to the course.")  # the LMS's page, in the frame
    [encoded] = platform.deep_link_responses
    published = page.request.get(site.url + "/lti/jwks/").json()
    kid = jwt.get_unverified_header(encoded)["kid"]
    key = RSAAlgorithm.from_jwk(json.dumps(next(k for k in published["keys"] if k["kid"] == kid)))
    claims = jwt.decode(encoded, key, algorithms=["RS256"], audience=platform.issuer)  # type: ignore[arg-type]
    [item] = claims[CONTENT_ITEMS]
    assert item["custom"] == {"workbook": "transformer-math"} and item["lineItem"]["scoreMaximum"] == 100
    assert item["url"] == site.url + "/lti/launch/"
    teacher = User.objects.get(lti_identities__subject="teacher-b", lti_identities__issuer=platform.issuer)
    assert Cohort.objects.filter(instructor=teacher, name="Systems 101").exists()

    # A learner follows the link the LMS now shows, with its custom parameters.
    platform.browser_launch = {"roles": LEARNER, "custom": item["custom"], "name": "Alan Turing"}
    page = site.page()
    page.goto(platform.base + "/course?sub=learner-b")
    tool = page.frame_locator("#tool")
    expect(tool.get_by_role("heading", name="You are signed in")).to_be_visible()
    with page.expect_popup() as popup_info:
        tool.locator("#lti-continue").click()
    popup = popup_info.value
    popup.wait_for_load_state()
    assert popup.url.startswith(site.url + "/w/transformer-math/"), popup.url
    learner = User.objects.get(lti_identities__subject="learner-b", lti_identities__issuer=platform.issuer)
    expect(popup.locator("body")).to_contain_text(learner.username)  # signed in, first-party
    assert learner.memberships.filter(cohort__instructor=teacher).exists()
    # The single-use link does not sign anyone in twice.
    again = popup.context.new_page()
    continue_url = tool.locator("#lti-continue").get_attribute("href")
    assert continue_url
    response = again.goto(continue_url if continue_url.startswith("http") else site.url + continue_url)
    assert response is not None and response.status in (400, 403, 404, 410)
    site.shot(popup, "lti-learner-landed")
