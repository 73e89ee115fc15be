from __future__ import annotations

import json
import re

import jwt
from django.test import Client
from jwt.algorithms import RSAAlgorithm

from apps.exercises.models import Workbook
from apps.lti.tests.conftest import Lms
from apps.lti.tests.platform import DL_SETTINGS, INSTRUCTOR, LEARNER, TestPlatform

CONTENT_ITEMS = "https://purl.imsglobal.org/spec/lti-dl/claim/content_items"


def _token(response) -> str:
    match = re.search(r'name="token" value="([^"]+)"', response.content.decode())
    assert match
    return match.group(1)


def test_deep_linking_returns_a_signed_response_with_the_chosen_links(
    lms: Lms, platform: TestPlatform, synthetic_workbook: Workbook
) -> None:
    client = Client()
    picker = lms.launch(client, sub="teacher-1", roles=INSTRUCTOR, message_type="LtiDeepLinkingRequest")
    assert picker.status_code == 200, picker.content.decode()
    page = picker.content.decode()
    assert 'value="synthetic"' in page and 'value="synthetic:2"' in page and "X-Frame-Options" not in picker

    response = Client().post(  # from the LMS iframe: no session, no CSRF cookie; the token is the credential
        "/lti/deep-link/", {"token": _token(picker), "item": ["synthetic:2", "synthetic"], "graded": "on"}
    )
    assert response.status_code == 200, response.content.decode()
    html = response.content.decode()
    assert f'action="{platform.base}/deep-link-return"' in html
    encoded = re.search(r'name="JWT" value="([^"]+)"', html).group(1)  # type: ignore[union-attr]

    tool_jwks = Client().get("/lti/jwks/").json()
    kid = jwt.get_unverified_header(encoded)["kid"]
    key = RSAAlgorithm.from_jwk(json.dumps(next(k for k in tool_jwks["keys"] if k["kid"] == kid)))
    claims = jwt.decode(encoded, key, algorithms=["RS256"], audience=platform.issuer)  # type: ignore[arg-type]
    assert claims["iss"] == platform.client_id
    assert claims["https://purl.imsglobal.org/spec/lti/claim/message_type"] == "LtiDeepLinkingResponse"
    assert claims["https://purl.imsglobal.org/spec/lti/claim/deployment_id"] == platform.deployment_id
    assert claims["https://purl.imsglobal.org/spec/lti-dl/claim/data"] == "platform-opaque-data"
    chapter, book = claims[CONTENT_ITEMS]
    assert chapter["type"] == "ltiResourceLink" and chapter["url"] == "http://testserver/lti/launch/"
    assert chapter["custom"] == {"workbook": "synthetic", "chapter": "2"}
    assert chapter["lineItem"]["scoreMaximum"] == 100 and chapter["lineItem"]["resourceId"] == "synthetic:2"
    assert book["custom"] == {"workbook": "synthetic"} and book["lineItem"]["label"] == synthetic_workbook.title

    again = Client().post("/lti/deep-link/", {"token": _token(picker), "item": ["synthetic"]})
    assert again.status_code == 400  # the picker is single-use


def test_ungraded_and_single_choice(lms: Lms, platform: TestPlatform, synthetic_workbook: Workbook) -> None:
    def single(body) -> None:
        body[DL_SETTINGS]["accept_multiple"] = False

    picker = lms.launch(Client(), sub="t", roles=INSTRUCTOR, message_type="LtiDeepLinkingRequest", tamper=single)
    assert 'type="radio"' in picker.content.decode()
    response = Client().post("/lti/deep-link/", {"token": _token(picker), "item": ["synthetic", "synthetic:1"]})
    encoded = re.search(r'name="JWT" value="([^"]+)"', response.content.decode()).group(1)  # type: ignore[union-attr]
    [item] = jwt.decode(encoded, options={"verify_signature": False})[CONTENT_ITEMS]
    assert "lineItem" not in item and item["custom"] == {"workbook": "synthetic"}


def test_a_learner_cannot_deep_link_and_a_forged_token_is_refused(lms: Lms, platform: TestPlatform) -> None:
    lms.launch(Client(), sub="teacher-1", roles=INSTRUCTOR)
    refused = lms.launch(Client(), sub="l", roles=LEARNER, message_type="LtiDeepLinkingRequest")
    assert refused.status_code == 403
    assert Client().post("/lti/deep-link/", {"token": "forged", "item": ["synthetic"]}).status_code == 400
