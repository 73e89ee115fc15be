from __future__ import annotations

import time
from typing import Any

import pytest
from django.test import Client

from apps.accounts.models import Role, User
from apps.exercises.models import Workbook
from apps.lti.models import CohortLink, GradeBinding, LinkTarget, LtiIdentity, RosterEntry
from apps.lti.tests.conftest import Lms, continue_url
from apps.lti.tests.platform import INSTRUCTOR, LEARNER, RSAKey, TestPlatform
from apps.progress.models import CohortWorkbook, Membership


def test_login_sets_the_state_cookie_on_the_lti_path_and_checks_cookies_first(platform: TestPlatform) -> None:
    client = Client()
    params = {"iss": platform.issuer, "login_hint": "u1", "target_link_uri": "http://testserver/lti/launch/",
              "client_id": platform.client_id}  # fmt: skip
    page = client.get("/lti/login/", params)
    assert page.status_code == 200 and b"lti1p3_new_window" in page.content  # pylti1p3's cookie check
    assert "X-Frame-Options" not in page
    response = Client().post("/lti/login/", {**params, "lti1p3_new_window": "1"})
    assert response.status_code == 302
    [cookie] = [c for name, c in response.cookies.items() if name.startswith("lti1p3-state-")]
    assert cookie["path"] == "/lti/" and cookie["httponly"]


def test_login_over_https_sets_a_samesite_none_secure_cookie(platform: TestPlatform) -> None:
    params = {"iss": platform.issuer, "login_hint": "u1", "target_link_uri": "https://testserver/lti/launch/",
              "client_id": platform.client_id, "lti1p3_new_window": "1"}  # fmt: skip
    response = Client().post("/lti/login/", params, secure=True)
    assert response.status_code == 302
    state = next(c for name, c in response.cookies.items() if name.startswith("lti1p3-state-"))
    assert state["samesite"] == "None" and state["secure"] and state["path"] == "/lti/"
    assert "redirect_uri=https%3A%2F%2Ftestserver%2Flti%2Flaunch%2F" in response["Location"]


def test_first_launch_creates_and_links_the_account_and_the_cohort(lms: Lms, platform: TestPlatform) -> None:
    client = Client()
    response = lms.launch(client, sub="teacher-1", roles=INSTRUCTOR, name="Grace Hopper", email="grace@example.org")
    assert response.status_code == 200, response.content.decode()
    assert "X-Frame-Options" not in response  # shown in the LMS iframe
    identity = LtiIdentity.objects.select_related("user").get(issuer=platform.issuer, subject="teacher-1")
    user = identity.user
    assert user.role == Role.INSTRUCTOR and user.email == "grace@example.org" and user.first_name == "Grace"
    assert user.username.startswith("grace.hopper-") and not user.has_usable_password()
    link = CohortLink.objects.select_related("cohort").get()
    assert link.cohort.name == "Systems 101" and link.cohort.instructor == user
    assert client.session["_auth_user_id"] == str(user.pk)

    again = lms.launch(Client(), sub="teacher-1", roles=INSTRUCTOR, name="Grace Hopper")
    assert again.status_code == 200
    assert User.objects.filter(lti_identities__isnull=False).count() == 1
    assert CohortLink.objects.count() == 1


def test_learner_joins_the_cohort_lands_on_the_chapter_and_continues_in_a_new_window(
    lms: Lms, synthetic_workbook: Workbook
) -> None:
    lms.launch(Client(), sub="teacher-1", roles=INSTRUCTOR)
    client = Client()
    custom = {"workbook": "synthetic", "chapter": "2"}
    response = lms.launch(client, sub="learner-1", roles=LEARNER, custom=custom, name="Ada Lovelace")
    assert response.status_code == 200, response.content.decode()
    learner = User.objects.get(lti_identities__subject="learner-1")
    assert learner.role == Role.STUDENT
    link = CohortLink.objects.get()
    assert Membership.objects.filter(cohort=link.cohort, user=learner).exists()
    assert RosterEntry.objects.filter(link=link, identity__user=learner).exists()
    assert CohortWorkbook.objects.filter(cohort=link.cohort, workbook=synthetic_workbook).exists()
    target = LinkTarget.objects.get()
    assert target.chapter is not None and target.chapter.number == 2 and target.gradable
    assert GradeBinding.objects.filter(target=target, identity__user=learner).exists()
    assert "/w/synthetic/#ch-2" in response.content.decode()  # where the page goes outside a frame

    fresh = Client()  # the new window: first-party, signed in by the single-use link
    followed = fresh.get(continue_url(response))
    assert followed.status_code == 302 and followed["Location"] == "/w/synthetic/#ch-2"
    assert fresh.session["_auth_user_id"] == str(learner.pk)
    assert fresh.get(continue_url(response)).status_code == 400  # single use


def test_a_learner_before_the_instructor_is_refused_and_nothing_is_created(lms: Lms) -> None:
    response = lms.launch(Client(), sub="learner-1", roles=LEARNER)
    assert response.status_code == 403
    assert b"Your instructor must open this link once" in response.content
    assert not User.objects.exists() and not CohortLink.objects.exists()


def _other_key_same_kid(platform: TestPlatform) -> RSAKey:
    impostor = RSAKey(platform.keys[0].kid)
    return impostor


REFUSALS: dict[str, tuple[dict[str, Any], int, bytes]] = {
    "bad signature": ({"sign": "impostor"}, 400, b"signature could not be verified"),
    "expired": (
        {"tamper": lambda b: b.update(exp=int(time.time()) - 600, iat=int(time.time()) - 900)},
        400,
        b"expired",
    ),
    "wrong audience": ({"tamper": lambda b: b.update(aud="another-tool", azp="another-tool")}, 403, b"another tool"),
    "wrong azp": ({"tamper": lambda b: b.update(aud=[TestPlatform.client_id, "x"], azp="x")}, 400, b"another tool"),
    "unknown deployment": (
        {"tamper": lambda b: b.update({"https://purl.imsglobal.org/spec/lti/claim/deployment_id": "nope"})},
        403,
        b"deployment",
    ),
    "no usable role": ({"roles": ["http://purl.imsglobal.org/vocab/lis/v2/institution/person#Staff"]}, 403, b"role"),
    "missing role claim": (
        {"tamper": lambda b: b.pop("https://purl.imsglobal.org/spec/lti/claim/roles")},
        403,
        b"no role",
    ),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_refusals_show_a_page_and_create_no_account(lms: Lms, platform: TestPlatform, case: str) -> None:
    options, status, text = REFUSALS[case]
    kwargs = dict(options)
    if kwargs.get("sign") == "impostor":
        impostor = _other_key_same_kid(platform)
        kwargs["sign"] = lambda body: platform.sign(body, impostor)
    roles = kwargs.pop("roles", INSTRUCTOR)
    response = lms.launch(Client(), sub="someone", roles=roles, **kwargs)
    assert response.status_code == status, response.content.decode()
    assert text in response.content, response.content.decode()
    assert b"no account was created" in response.content
    assert not User.objects.exists() and not LtiIdentity.objects.exists()


def test_a_replayed_launch_is_refused(lms: Lms) -> None:
    client = Client()
    first = lms.launch(client, sub="teacher-1", roles=INSTRUCTOR)
    assert first.status_code == 200
    path, data = first.lti_post
    users = User.objects.count()
    replay = client.post(path, data)  # the same id_token, state and cookie
    assert replay.status_code == 400 and b"already used" in replay.content
    assert User.objects.count() == users


def test_a_missing_state_cookie_is_explained(lms: Lms, platform: TestPlatform) -> None:
    client = Client()
    auth = lms.login(client, "teacher-1")
    client.cookies.clear()  # the browser blocked the third-party cookie
    token = platform.sign(platform.claims(nonce=auth["nonce"], sub="teacher-1", roles=INSTRUCTOR))
    response = client.post("/lti/launch/", {"id_token": token, "state": auth["state"]})
    assert response.status_code == 400 and b"cookie" in response.content
    assert not User.objects.exists()


def test_a_rotated_platform_key_is_fetched_once(lms: Lms, platform: TestPlatform) -> None:
    assert lms.launch(Client(), sub="teacher-1", roles=INSTRUCTOR).status_code == 200
    assert platform.jwks_fetches == 1
    assert lms.launch(Client(), sub="teacher-1", roles=INSTRUCTOR).status_code == 200
    assert platform.jwks_fetches == 1  # cached
    platform.keys = [RSAKey("platform-key-2")]
    assert lms.launch(Client(), sub="teacher-1", roles=INSTRUCTOR).status_code == 200
    assert platform.jwks_fetches == 2
