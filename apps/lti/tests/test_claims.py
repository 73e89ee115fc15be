"""Validly signed launches with claims of the wrong type or shape (issue 29): refused with a 400
page naming the claim, never a 500 — and deep linking returns only to the platform's own host.

The launches are signed by the test platform (tests/platform.py), as an LMS would sign them: the
signature is good, the data is not."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.core.management import call_command
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.accounts.models import User
from apps.exercises.models import Workbook
from apps.lti import claims
from apps.lti.models import CohortLink, LinkTarget, LtiIdentity, PlatformHost
from apps.lti.tests.conftest import Lms
from apps.lti.tests.platform import AGS_CLAIM, CLAIM, DL_SETTINGS, INSTRUCTOR, LEARNER, NRPS_CLAIM, TestPlatform

CONTEXT, CUSTOM, RESOURCE_LINK, ROLES = CLAIM + "context", CLAIM + "custom", CLAIM + "resource_link", CLAIM + "roles"
DEEP_LINK = "LtiDeepLinkingRequest"


def _set(key: str, value: Any) -> Any:
    def tamper(body: dict[str, Any]) -> None:
        body[key] = value

    return tamper


def _refused_naming(response: Any, claim: str, status: int = 400) -> str:
    page: str = response.content.decode()
    assert response.status_code == status, page
    assert 'data-code="bad_claim"' in page and claim in page, page
    assert "no account was created" in page
    return page


# ---- the three cases from outside ---------------------------------------------------------------


def test_a_context_claim_that_is_a_string_is_a_400_naming_it(lms: Lms) -> None:
    response = lms.launch(Client(), sub="teacher-1", roles=INSTRUCTOR, tamper=_set(CONTEXT, "course-1"))
    page = _refused_naming(response, CONTEXT)
    assert "must be an object" in page
    assert not User.objects.exists() and not CohortLink.objects.exists()


def test_a_custom_claim_that_is_a_string_is_a_400_naming_it(lms: Lms, synthetic_workbook: Workbook) -> None:
    lms.launch(Client(), sub="teacher-1", roles=INSTRUCTOR)
    response = lms.launch(Client(), sub="learner-1", roles=LEARNER, tamper=_set(CUSTOM, "workbook=synthetic"))
    assert "must be an object" in _refused_naming(response, CUSTOM)
    assert not LtiIdentity.objects.filter(subject="learner-1").exists()


@pytest.mark.parametrize("chapter", ["²", "١", "٣", "𝟚", "2²", "-1", "1e3", "12345", "0x2"])
def test_a_chapter_in_anything_but_ascii_digits_is_a_400_naming_it(
    lms: Lms, synthetic_workbook: Workbook, chapter: str
) -> None:
    """``"²".isdigit()`` is True and ``int("²")`` raises: an instructor's custom parameter must not
    break the link for every learner with a 500."""
    lms.launch(Client(), sub="teacher-1", roles=INSTRUCTOR)
    custom = {"workbook": "synthetic", "chapter": chapter}
    response = lms.launch(Client(), sub="learner-1", roles=LEARNER, custom=custom)
    page = _refused_naming(response, CUSTOM + " › chapter")
    assert "digits 0-9" in page
    assert not LinkTarget.objects.exists()


def test_an_ascii_chapter_with_spaces_still_lands_and_an_unknown_one_is_a_404(
    lms: Lms, synthetic_workbook: Workbook
) -> None:
    lms.launch(Client(), sub="teacher-1", roles=INSTRUCTOR)
    landed = lms.launch(Client(), sub="learner-1", roles=LEARNER, custom={"workbook": "synthetic", "chapter": " 2 "})
    assert landed.status_code == 200 and "/w/synthetic/#ch-2" in landed.content.decode()
    missing = lms.launch(Client(), sub="learner-1", roles=LEARNER, custom={"workbook": "synthetic", "chapter": "0099"})
    assert missing.status_code == 404 and b'data-code="unknown_chapter"' in missing.content


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(document.domain)",
        "JavaScript:alert(1)//https://127.0.0.1/",
        "data:text/html,<script>alert(1)</script>",
        "https://attacker.example/deep-link-return",
        "http://attacker.example/deep-link-return",
        "//attacker.example/deep-link-return",
        "https://127.0.0.1.attacker.example/",
        "https://attacker.example\\@127.0.0.1/",
        "http://user@attacker.example/",
        " javascript:alert(1)",
        "",
    ],
)
def test_a_deep_link_return_url_off_the_platform_is_a_400(lms: Lms, url: str) -> None:
    def tamper(body: dict[str, Any]) -> None:
        body[DL_SETTINGS]["deep_link_return_url"] = url

    response = lms.launch(Client(), sub="teacher-1", roles=INSTRUCTOR, message_type=DEEP_LINK, tamper=tamper)
    page = _refused_naming(response, DL_SETTINGS + " › deep_link_return_url")
    assert 'name="token"' not in page  # no picker, so nothing to post anywhere


def test_deep_linking_returns_over_https_to_a_host_the_platform_was_registered_with(
    lms: Lms, platform: TestPlatform, synthetic_workbook: Workbook
) -> None:
    """https on the issuer's host, or on a host added for it (Canvas Cloud's school domain)."""
    call_command(
        "lti_register_platform", *_register_args(platform), "--return-host", "School.Instructure.com", stdout=None
    )
    assert list(PlatformHost.objects.values_list("host", flat=True)) == ["school.instructure.com"]
    for url in ("https://127.0.0.1/return", "https://school.instructure.com/courses/1/deep_linking_response"):

        def tamper(body: dict[str, Any], url: str = url) -> None:
            body[DL_SETTINGS]["deep_link_return_url"] = url

        picker = lms.launch(Client(), sub="teacher-1", roles=INSTRUCTOR, message_type=DEEP_LINK, tamper=tamper)
        assert picker.status_code == 200, picker.content.decode()
        response = Client().post("/lti/deep-link/", {"token": _token(picker), "item": ["synthetic"]})
        assert response.status_code == 200 and f'action="{url}"' in response.content.decode()
    # The host is withdrawn: a picker issued before cannot return there any more.
    tamper = _set_return("https://school.instructure.com/x")
    picker = lms.launch(Client(), sub="teacher-1", roles=INSTRUCTOR, message_type=DEEP_LINK, tamper=tamper)
    call_command("lti_register_platform", *_register_args(platform), "--return-host", "other.example", stdout=None)
    late = Client().post("/lti/deep-link/", {"token": _token(picker), "item": ["synthetic"]})
    assert late.status_code == 400 and b'data-code="bad_return_url"' in late.content


def test_a_chapter_choice_in_unicode_digits_is_ignored_by_the_picker(
    lms: Lms, platform: TestPlatform, synthetic_workbook: Workbook
) -> None:
    picker = lms.launch(Client(), sub="teacher-1", roles=INSTRUCTOR, message_type=DEEP_LINK)
    response = Client().post("/lti/deep-link/", {"token": _token(picker), "item": ["synthetic:²"]})
    assert response.status_code == 400 and b'data-code="nothing_chosen"' in response.content


def _set_return(url: str) -> Any:
    def tamper(body: dict[str, Any]) -> None:
        body[DL_SETTINGS]["deep_link_return_url"] = url

    return tamper


def _register_args(platform: TestPlatform) -> list[str]:
    r = platform.registration()
    return [
        "--issuer", r["issuer"], "--client-id", r["client_id"], "--deployment-id", r["deployment_ids"][0],
        "--auth-login-url", r["auth_login_url"], "--auth-token-url", r["auth_token_url"],
        "--keyset-url", r["keyset_url"],
    ]  # fmt: skip


def _token(response: Any) -> str:
    match = re.search(r'name="token" value="([^"]+)"', response.content.decode())
    assert match, response.content.decode()
    return match.group(1)


def test_the_return_url_check_itself() -> None:
    hosts = frozenset({"lms.example.edu", "127.0.0.1"})
    assert claims.return_url_check("https://lms.example.edu/dl", hosts=hosts)
    assert claims.return_url_check("http://127.0.0.1:8123/dl", hosts=hosts)
    for bad in (
        "http://lms.example.edu/dl",
        "https://LMS.example.edu.evil/",
        "ftp://lms.example.edu/",
        "https://lms.example.edu/\n",
    ):
        with pytest.raises(ValueError, match="URL"):
            claims.return_url_check(bad, hosts=hosts)


# ---- arbitrary shapes -------------------------------------------------------------------------

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.sampled_from(["", " ", "²", "١٢", "𝟙", "2", "0", "99999", "synthetic", "javascript:alert(1)", "x" * 600]),
)
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
_digits_like = st.sampled_from(["1", "2", " 2 ", "02", "²", "³", "١", "٢", "𝟚", "٠", "0", "", "9999", "10000", "1.0"])
_custom = st.fixed_dictionaries(
    {}, optional={"workbook": st.one_of(st.sampled_from(["synthetic", " synthetic ", "nope", "", "Synth etic"]), _json),
                  "chapter": st.one_of(_digits_like, _json)}
)  # fmt: skip
_url = st.sampled_from(
    ["javascript:alert(1)", "https://attacker.example/", "", "not a url", "http://127.0.0.1:1/x", "https://[::1/"]
) | st.text(max_size=30)


def _object(**members: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """The claim as an object with members good or bad, or the claim as anything else."""
    return st.fixed_dictionaries({}, optional=members) | _json


CLAIMS: dict[str, st.SearchStrategy[Any]] = {
    CONTEXT: _object(id=st.just("course-1") | _json, title=_json, label=_json, type=_json),
    CUSTOM: _custom | _json,
    RESOURCE_LINK: _object(id=st.just("link-1") | _json, title=_json, description=_json),
    ROLES: st.lists(st.sampled_from(INSTRUCTOR + LEARNER) | _json, max_size=3) | _json,
    DL_SETTINGS: _object(
        deep_link_return_url=_url | _json,
        accept_types=st.just(["ltiResourceLink"]) | _json,
        accept_presentation_document_targets=st.just(["iframe"]) | _json,
        accept_multiple=_json,
        data=_json,
    ),
    AGS_CLAIM: _object(scope=_json, lineitems=_url | _json, lineitem=_url | _json),
    NRPS_CLAIM: _object(context_memberships_url=_url | _json, service_versions=_json),
    CLAIM + "tool_platform": _object(guid=_json, name=_json, url=_url | _json, contact_email=_json),
    CLAIM + "platformnotificationservice": _object(
        platform_notification_service_url=_url, notice_types_supported=_json
    ),
    "name": _json,
    "given_name": _json,
    "family_name": _json,
    "email": _json | st.emails(),
    "picture": _url | _json,
    "sub": st.text(min_size=1, max_size=300) | _json,
}
_MISSING = object()
_changes = st.dictionaries(st.sampled_from(sorted(CLAIMS)), st.just(_MISSING), max_size=2).flatmap(
    lambda dropped: st.fixed_dictionaries({}, optional={k: v for k, v in CLAIMS.items() if k not in dropped}).map(
        lambda changed: {**dropped, **changed}
    )
)


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    learner=st.booleans(),
    deep_link=st.booleans(),
    changes=_changes,
    choice=st.sampled_from(["synthetic", "synthetic:2", "synthetic:²"]),
)
def test_arbitrary_claim_shapes_never_give_a_500(
    lms: Lms, synthetic_workbook: Workbook, learner: bool, deep_link: bool, changes: dict[str, Any], choice: str
) -> None:
    if not CohortLink.objects.exists():  # once: the course is set up, so learners' launches go deep
        assert lms.launch(Client(), sub="teacher-0", roles=INSTRUCTOR).status_code == 200

    def tamper(body: dict[str, Any]) -> None:
        for key, value in changes.items():
            if value is _MISSING:
                body.pop(key, None)
            else:
                body[key] = value

    client = Client()
    response = lms.launch(
        client,
        sub="learner-x" if learner else "teacher-x",
        roles=LEARNER if learner else INSTRUCTOR,
        message_type=DEEP_LINK if deep_link else "LtiResourceLinkRequest",
        custom={"workbook": "synthetic", "chapter": "1"},
        tamper=tamper,
    )
    status, page = response.status_code, response.content.decode()
    assert status < 500, page
    if status >= 400:
        assert 'data-code="' in page, page  # the error page, saying why
        return
    assert status == 200
    if 'name="token"' not in page:
        assert 'id="lti-continue"' in page, page  # a resource link's page
        return
    returned = Client().post("/lti/deep-link/", {"token": _token(response), "item": [choice]})
    assert returned.status_code in (200, 400), returned.content.decode()
    if returned.status_code == 200:
        action = re.search(r'action="([^"]*)"', returned.content.decode())
        assert action is not None
        parts = urlsplit(action.group(1))
        assert (parts.scheme, parts.hostname) in {("https", "127.0.0.1"), ("http", "127.0.0.1")}, action.group(1)
