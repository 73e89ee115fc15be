"""The test platform (tests/platform.py) registered with the tool, and a driver for the whole
OIDC login → signed id_token → launch flow through the Django test client."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from django.test import Client

from apps.lti import services
from apps.lti.tests.platform import TestPlatform


@pytest.fixture
def platform(db: None) -> Iterator[TestPlatform]:
    p = TestPlatform()
    services.platform_register(**p.registration())
    # The platform verifies the tool's client assertions with the tool's published key set.
    p.tool_jwks = Client().get("/lti/jwks/").json()
    yield p
    p.close()


class Lms:
    """What a browser in front of the LMS does: OIDC login at the tool, the platform's auth
    redirect back with a signed id_token, the launch form post (with the state cookie)."""

    def __init__(self, platform: TestPlatform) -> None:
        self.platform = platform

    def login(self, client: Client, sub: str) -> dict[str, str]:
        p = self.platform
        params = {
            "iss": p.issuer,
            "login_hint": sub,
            "target_link_uri": "http://testserver/lti/launch/",
            "client_id": p.client_id,
            "lti_deployment_id": p.deployment_id,
            "lti1p3_new_window": "1",  # what pylti1p3's cookie check page adds once cookies work
        }
        response = client.post("/lti/login/", params)
        assert response.status_code == 302, response.content
        location = response["Location"]
        assert location.startswith(p.auth_url + "?")
        query = {k: v[0] for k, v in parse_qs(urlparse(location).query).items()}
        assert query["client_id"] == p.client_id and query["login_hint"] == sub
        assert query["response_mode"] == "form_post" and query["scope"] == "openid"
        return query

    def launch(
        self,
        client: Client,
        *,
        sub: str,
        roles: list[str],
        tamper: Callable[[dict[str, Any]], None] | None = None,
        sign: Callable[[dict[str, Any]], str] | None = None,
        **claims: Any,
    ) -> Any:
        auth = self.login(client, sub)
        body = self.platform.claims(nonce=auth["nonce"], sub=sub, roles=roles, **claims)
        if tamper is not None:
            tamper(body)
        token = (sign or self.platform.sign)(body)
        path = urlparse(auth["redirect_uri"]).path
        response = client.post(path, {"id_token": token, "state": auth["state"]})
        response.lti_post = (path, {"id_token": token, "state": auth["state"]})  # type: ignore[attr-defined] # for replays
        return response


@pytest.fixture
def lms(platform: TestPlatform) -> Lms:
    return Lms(platform)


def continue_url(response: Any) -> str:
    match = re.search(r'id="lti-continue" href="([^"]+)"', response.content.decode())
    assert match, response.content.decode()
    return match.group(1)
